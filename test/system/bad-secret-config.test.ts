// The built server refuses to start on a secret it cannot use, and its start-up error names the
// variable without ever printing the value (FEED_PASSWORD, ADMIN_TOKEN, HASH_SECRET), nor the
// password inside REDIS_URL: start-up errors end up in journals and CI logs.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { builtServerCommand } from '../../harness/servers.js';

async function startUpOutput(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const server = builtServerCommand();
  const child = spawn(server.command, server.args, {
    cwd: server.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': the output asserted below may not all be read when the child exits.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, output };
}

describe('node dist/server.js with a bad secret', () => {
  it.each([
    ['FEED_PASSWORD', 'hunter2'],
    ['ADMIN_TOKEN', 'my-admin-token-too-short'],
    ['HASH_SECRET', 'tiny-secret'],
  ])('stops at start on a bad %s, naming it and not showing it', async (name, value) => {
    const { code, output } = await startUpOutput({ [name]: value });
    expect(code).toBe(2);
    expect(output).toContain(`${name}=(${value.length} characters, not shown)`);
    expect(output).not.toContain(value);
    expect(output).not.toMatch(/Server listening/);
  });

  it('masks the password of a malformed REDIS_URL', async () => {
    const { code, output } = await startUpOutput({
      REDIS_URL: 'redis//:s3cr3t-redis@127.0.0.1:6379',
      HASH_SECRET: 'test-secret-0123456789',
    });
    expect(code).toBe(2);
    expect(output).toContain('REDIS_URL="***@127.0.0.1:6379" is not valid');
    expect(output).not.toContain('s3cr3t');
  });
});
