// `phone-rep token` as the shipped command (bin/phone-rep.js over dist/), while a service runs on
// the same lists directory: the token the CLI process creates is accepted by the service (which
// follows tokens.json), and refused once the CLI revoked it. Each change is awaited through the
// service's token store, never slept for.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer } from '../../harness/servers.js';
import { waitFor } from '../support/redis.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: tmpdir(), env: { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', ...env }, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('phone-rep token while the service runs', { timeout: 120_000 }, () => {
  it('the service accepts the token the CLI creates, and refuses it once revoked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-tokens-cli-'));
    const env = { LISTS_FILE: join(dir, 'lists.csv') };
    const server = await startTestServer({ env, overrides: { sources: healthyFakeSources() } });
    try {
      expect(server.deps.tokens.anyInForce()).toBe(false);
      const created = await run(['token', 'create', '--label', 'Kitchen phone'], env);
      expect(created, created.stderr).toMatchObject({ code: 0 });
      const secret = created.stdout.trim();
      expect(secret).toMatch(/^prt_[A-Za-z0-9_-]{43}$/);
      expect(created.stderr).toMatch(/will not be shown again/);
      await waitFor(() => server.deps.tokens.anyInForce());
      const token = await server.deps.tokens.authenticate(secret);
      expect(token).toMatchObject({ label: 'Kitchen phone' });

      const listed = await run(['token', 'list'], env);
      expect(listed.stdout).toMatch(new RegExp(`^${token?.id ?? 'none'}  in force  "Kitchen phone"`));
      expect(listed.stdout).not.toContain(secret);

      expect((await run(['token', 'revoke', token?.id ?? ''], env)).code).toBe(0);
      await waitFor(() => !server.deps.tokens.anyInForce());
      expect(await server.deps.tokens.authenticate(secret)).toBeNull();
    } finally {
      await server.close();
    }
  });
});
