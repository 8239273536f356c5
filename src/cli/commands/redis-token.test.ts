// `phone-rep token …` in-process with REDIS_URL, on the real Redis under a key prefix of this
// file's own: the CLI opens a connection of its own, and a running instance (a store following
// the same prefix) accepts the token it creates and refuses it once revoked, each change
// awaited through the instance's onChange.
import { describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, useRedisTestClients } from '../../../test/support/redis.js';
import { openRedisTokenStore } from '../../infra/reports/token-store.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

const { prefix, readyClient } = useRedisTestClients('token-cli');

function capture(env: Record<string, string>): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (line) => out.push(line), err: (line) => err.push(line), env }, out, err };
}

describe('phone-rep token on Redis', () => {
  it('creates a token a running instance accepts, and revokes it there', async () => {
    let changed: () => void = () => undefined;
    const nextChange = (): Promise<void> => new Promise((resolve) => (changed = resolve));
    const instance = await openRedisTokenStore(await readyClient(), {
      watch: true,
      ownsClient: false,
      onChange: () => changed(),
    });
    try {
      await instance.refresh();
      const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, HASH_SECRET: 'test-secret-0123456789' };
      const created = nextChange();
      const create = capture(env);
      expect(await runCli(['token', 'create', '--label', 'PBX'], create.io), create.err.join('\n')).toBe(0);
      expect(create.err[0]).toMatch(
        new RegExp(`^created tok_[0-9a-f]{10} "PBX" \\(Redis ${prefix}\\{tokens\\}:records\\)$`),
      );
      const [secret = ''] = create.out;
      await created;
      const accepted = await instance.authenticate(secret);
      expect(accepted).toMatchObject({ label: 'PBX' });

      const revoked = nextChange();
      const revoke = capture(env);
      expect(await runCli(['token', 'revoke', accepted?.id ?? ''], revoke.io)).toBe(0);
      await revoked;
      expect(await instance.authenticate(secret)).toBeNull();
    } finally {
      await instance.close();
    }
  });
});
