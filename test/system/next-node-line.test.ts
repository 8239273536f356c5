// The built service on the next Node line, Node 26, started once: the floor is Node 24 (the
// suite's runtime), and an operator who upgrades early must not meet a service that cannot start.
// Node 26 comes from the npm registry's `node` package (the same mechanism that gives this
// project Node 24 on a machine whose system Node is older), cached by npm after the first run.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../harness/servers.js';
import { startFixtureUpstreams, type FixtureUpstreams } from '../../harness/upstream-sites.js';

const run = promisify(execFile);

describe('the built service on Node 26', () => {
  let node26: string;
  let upstreams: FixtureUpstreams;
  let server: ServerProcess;
  beforeAll(async () => {
    const found = await run('npm', ['exec', '--yes', '--package=node@26', '--', 'node', '-p', 'process.execPath'], {
      encoding: 'utf8',
      timeout: 80_000,
    });
    node26 = found.stdout.trim();
    upstreams = await startFixtureUpstreams();
    server = await spawnServer({ ...upstreams.env, HASH_SECRET: 'node-26-test-secret-0123456789' }, 45_000, node26);
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await upstreams.close();
  });

  it('runs on a Node 26 binary', async () => {
    const version = await run(node26, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(version.stdout.trim()).toMatch(/^26\./);
  });

  it('starts and answers a lookup with every source read', async () => {
    const answer = await fetch(`${server.baseUrl}/api/phone/0612345678`);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      data: { number: string; sources: { primary: { score: number } } };
      meta: { sources: Record<string, { status: string }> };
    };
    expect(body.data.number).toBe('0612345678');
    expect(body.data.sources.primary.score).toBe(8);
    expect(Object.values(body.meta.sources).map((source) => source.status)).toEqual(['ok', 'ok', 'ok']);
  });
});
