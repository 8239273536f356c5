// `phone-rep list` and `phone-rep token` in-process on a Redis that needs a login (issue 50): the
// CLI's own connection logs in with REDIS_USERNAME and REDIS_PASSWORD as the service's does, and a
// login Redis refuses fails the command naming the variables to check, never the password. A
// Redis of the test's own on 127.0.0.1:6416 (requirepass and an ACL user), never the shared one.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisNode } from '../../../test/support/redis-nodes.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

const PORT = 6416;
const PREFIX = 't-redis-login-cli:';

function capture(env: Record<string, string>): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (line) => out.push(line), err: (line) => err.push(line), env }, out, err };
}

describe('the CLI on a Redis that needs a login', () => {
  let redis: RedisNode;
  let admin: Redis;
  const base = {
    REDIS_URL: `redis://127.0.0.1:${PORT}`,
    REDIS_KEY_PREFIX: PREFIX,
    HASH_SECRET: 'test-secret-0123456789',
  };

  beforeAll(async () => {
    redis = await startRedisServer(PORT, ['--requirepass', 'default-pass-1']);
    admin = new Redis({ port: PORT, host: '127.0.0.1', password: 'default-pass-1', maxRetriesPerRequest: 1 });
    await admin.call(
      'ACL',
      'SETUSER',
      'operator',
      'on',
      '>cli-pass-6b0e',
      `~${PREFIX}*`,
      `&${PREFIX}*`,
      '+@all',
      '-@dangerous',
      '+info',
    );
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.stop();
  });

  it('adds a rule and creates a token as the ACL user', async () => {
    const env = { ...base, REDIS_USERNAME: 'operator', REDIS_PASSWORD: 'cli-pass-6b0e' };
    const add = capture(env);
    expect(await runCli(['list', 'add', '+33163200001', '--list', 'block'], add.io), add.err.join('\n')).toBe(0);
    const token = capture(env);
    expect(await runCli(['token', 'create', '--label', 'PBX'], token.io), token.err.join('\n')).toBe(0);
    const keys = await admin.keys(`${PREFIX}*`);
    expect(keys.some((key) => key.includes('lists'))).toBe(true);
    expect(keys.some((key) => key.includes('tokens'))).toBe(true);
  });

  it.each([
    [['list', 'show'], 'the lists cannot be opened'],
    [['token', 'list'], ''],
  ])('fails %j on a password Redis refuses, naming the variables and not the password', async (argv, lead) => {
    const run = capture({ ...base, REDIS_USERNAME: 'operator', REDIS_PASSWORD: 'wrong-cli-pass-3' });
    expect(await runCli(argv, run.io)).toBe(1);
    const said = run.err.join('\n');
    expect(said).toContain(lead);
    expect(said).toContain('Redis refused the login: check REDIS_PASSWORD and REDIS_USERNAME');
    expect(said).toContain('WRONGPASS');
    expect(said).not.toContain('wrong-cli-pass-3');
  });
});
