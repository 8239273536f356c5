// An import at the body cap, started as the image starts the service (`node dist/start.js`: the
// server in a child with the heap limit for the default CACHE_MAX_MB): 29.9 MB of 1.3 million
// short rules is refused with a 413 naming the bound, before any rule is read, and the service
// lives on; an import within the bound (100,000 rules) is taken.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { watchOutput } from '../../harness/processes.js';
import { MAX_RULES } from '../../src/infra/lists/list-store.js';

const START = fileURLToPath(new URL('../../dist/start.js', import.meta.url));
const TOKEN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${TOKEN}` };

let child: ChildProcess | undefined;
afterAll(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    // SIGTERM, which the launcher relays to the server it started: a SIGKILL would leave that
    // server running, orphaned, after the suite.
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

describe('an import at the body cap', () => {
  it(
    '1.3 million short rules in 29.9 MB: a 413 naming the bound, and the service answers on; 100,000 rules are taken',
    { timeout: 240_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'phone-rep-import-size-'));
      child = spawn(process.execPath, [START], {
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          HASH_SECRET: 'import-size-secret-0123456789',
          NODE_OPTIONS: '',
          LISTS_FILE: join(dir, 'lists.csv'),
          ADMIN_TOKEN: TOKEN,
          RATE_LIMIT_MAX: '0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = watchOutput(child);
      await output.printed(/Server listening at http:\/\/127\.0\.0\.1:\d+/);
      const base = `http://127.0.0.1:${/127\.0\.0\.1:(\d+)/.exec(output.output())?.[1] ?? ''}`;

      const lines = ['rule,list,label,note,expiresAt'];
      for (let at = 0; at < 1_300_000; at += 1) lines.push(`+336${String(at).padStart(7, '0')},block,ab,,`);
      const huge = `${lines.join('\n')}\n`;
      expect(huge.length).toBeGreaterThan(29_900_000);
      expect(huge.length).toBeLessThan(32 * 1024 * 1024);
      const refused = await fetch(`${base}/admin/lists/import`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'text/csv' },
        body: huge,
      });
      expect(refused.status).toBe(413);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await refused.json()) as { type: string; detail: string; field: string };
      expect(problem).toMatchObject({ type: '/problems/lists-too-large', field: 'body' });
      expect(problem.detail).toBe(
        `the import holds up to 1300001 rules; an import brings at most ${MAX_RULES} (split it, or use fewer, broader prefix rules)`,
      );
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect(await (await fetch(`${base}/admin/lists/rules`, { headers: AUTH })).json()).toEqual([]);

      const within = [
        'rule,list,label,note,expiresAt',
        ...Array.from({ length: 100_000 }, (_, at) => `+3361${String(at).padStart(6, '0')}*,block,ab,,`),
      ].join('\n');
      const taken = await fetch(`${base}/admin/lists/import`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'text/csv' },
        body: within,
      });
      expect(taken.status).toBe(200);
      expect(await taken.json()).toEqual({ added: 100_000, replaced: 0 });
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect(child.exitCode).toBeNull();
    },
  );
});
