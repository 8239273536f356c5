// The build that ships, as `npm start` and `phone-rep` run it: dist/ made by `npm run build`
// (the system project's globalSetup), holding the page's assets and their brotli and gzip
// forms, with no TypeScript loader at run time and no build tool among the production
// dependencies.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, startSlowUnknownUpstream, type ServerProcess, type SlowUpstream } from '../../harness/servers.js';

const root = new URL('../../', import.meta.url);
const fromRoot = (relative: string): Buffer => readFileSync(new URL(relative, root));

describe('node dist/server.js', () => {
  let upstream: SlowUpstream;
  let server: ServerProcess;
  beforeAll(async () => {
    upstream = await startSlowUnknownUpstream(0);
    server = await spawnServer({ ...upstream.env, HASH_SECRET: 'build-test-secret-0123456789' });
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await upstream.close();
  });

  it("writes a lone request's access line while the server keeps running (log lines are batched, never held back indefinitely)", async () => {
    const requestId = 'lone-request-1';
    // A whole line: a pipe may deliver a batch in more than one chunk.
    const accessLine = new RegExp(`^(.*"reqId":"${requestId}".*)\n`, 'm');
    const answer = await fetch(`${server.baseUrl}/health`, { headers: { 'x-request-id': requestId } });
    expect(answer.status).toBe(200);
    // stdout is a pipe here, so the line waits for its batch to fill or for the periodic flush.
    await server.printed(accessLine);
    const line = JSON.parse(accessLine.exec(server.output())?.[1] ?? '') as {
      route: string;
      status: number;
      msg: string;
    };
    expect(line).toMatchObject({ route: '/health', status: 200, msg: 'request' });
  });

  it('serves the lookup page and its assets from the copies the build put in dist/web/static', async () => {
    const page = await fetch(`${server.baseUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('/assets/app.js');
    for (const [route, file] of [
      ['/assets/app.js', 'app.js'],
      ['/assets/styles.css', 'styles.css'],
    ] as const) {
      const response = await fetch(`${server.baseUrl}${route}`);
      expect(response.status, route).toBe(200);
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.equals(fromRoot(`dist/web/static/${file}`)), `${route} is not dist/web/static/${file}`).toBe(true);
      expect(
        body.equals(fromRoot(`src/web/static/${file}`)),
        `dist/web/static/${file} differs from src/web/static/${file}: rebuild`,
      ).toBe(true);
    }
  });

  it('sends the brotli and gzip siblings the build wrote beside the page files, which decode to the files served', async () => {
    // The page is built once per language (index.<lang>.html), chosen by Accept-Language.
    for (const [route, file, acceptLanguage, vary] of [
      ['/', 'index.en.html', 'en-US', 'Accept-Language, Cookie, Accept-Encoding'],
      ['/', 'index.fr.html', 'fr-FR', 'Accept-Language, Cookie, Accept-Encoding'],
      ['/assets/app.js', 'app.js', 'en-US', 'Accept-Encoding'],
      ['/assets/styles.css', 'styles.css', 'en-US', 'Accept-Encoding'],
    ] as const) {
      const identity = await request(`${server.baseUrl}${route}`, { headers: { 'accept-language': acceptLanguage } });
      const identityBody = Buffer.from(await identity.body.arrayBuffer());
      for (const [coding, suffix, decode] of [
        ['br', 'br', brotliDecompressSync],
        ['gzip', 'gz', gunzipSync],
      ] as const) {
        const response = await request(`${server.baseUrl}${route}`, {
          headers: { 'accept-encoding': coding, 'accept-language': acceptLanguage },
        });
        expect(response.headers['content-encoding'], `${route} in ${coding}`).toBe(coding);
        expect(response.headers.vary).toBe(vary);
        const body = Buffer.from(await response.body.arrayBuffer());
        expect(
          body.equals(fromRoot(`dist/web/static/${file}.${suffix}`)),
          `${route} in ${coding} is not dist/web/static/${file}.${suffix}`,
        ).toBe(true);
        expect(decode(body).equals(identityBody), `${route} in ${coding} decodes to the identity answer`).toBe(true);
      }
    }
  });
});

describe('the shipped package', () => {
  it('bin/phone-rep.js runs the compiled CLI, with no TypeScript loader', async () => {
    const launcher = fromRoot('bin/phone-rep.js').toString('utf8');
    expect(launcher).toContain('../dist/cli/main.js');
    expect(launcher).not.toMatch(/tsx|\.ts['"]/);
    const { stdout, code } = await new Promise<{ stdout: string; code: number | null }>((resolve) => {
      const child = execFile(
        process.execPath,
        [fileURLToPath(new URL('bin/phone-rep.js', root)), 'help'],
        { cwd: '/' },
        (_error, out) => resolve({ stdout: out, code: child.exitCode }),
      );
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/lookup/);
  });

  it('dist/start.js --exec-plan prints the server with its heap flags (one process, WORKERS=1), or itself (the cluster primary), and starts nothing', async () => {
    const plan = (env: Record<string, string>): Promise<string[]> =>
      new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          [fileURLToPath(new URL('dist/start.js', root)), '--exec-plan'],
          { cwd: '/', env: { ...process.env, NODE_OPTIONS: '', ...env }, timeout: 30_000 },
          (error, out) => (error === null ? resolve(out.trim().split('\n')) : reject(new Error(error.message))),
        );
      });
    expect(await plan({ CACHE_MAX_MB: '32', WORKERS: '1' })).toEqual([
      '--max-old-space-size=176',
      '--max-semi-space-size=8',
      fileURLToPath(new URL('dist/server.js', root)),
    ]);
    expect(await plan({ CACHE_MAX_MB: '32', WORKERS: '1', NODE_OPTIONS: '--max-old-space-size=900' })).toEqual([
      fileURLToPath(new URL('dist/start.js', root)),
    ]);
    expect(await plan({ CACHE_MAX_MB: '64', WORKERS: '2', HASH_SECRET: 'exec-plan-secret-0123456789' })).toEqual([
      fileURLToPath(new URL('dist/start.js', root)),
    ]);
  });

  it('has no build or test tool among its production dependencies, and nothing it does not use', () => {
    const manifest = JSON.parse(fromRoot('package.json').toString('utf8')) as { dependencies: Record<string, string> };
    for (const tool of ['tsx', 'esbuild', 'typescript', 'vitest', 'jsqr'])
      expect(Object.keys(manifest.dependencies), tool).not.toContain(tool);
  });

  it('promises no Node version older than a production dependency declares it needs', () => {
    const lock = JSON.parse(fromRoot('package-lock.json').toString('utf8')) as {
      packages: Record<string, { dev?: boolean; version?: string; engines?: { node?: string } }>;
    };
    const floor = versionFloor(lock.packages['']?.engines?.node ?? '');
    expect(floor, 'package.json engines.node must be a ">=x.y.z" floor').toBeDefined();
    if (floor === undefined) return;
    const tooOld: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === '' || entry.dev === true || entry.engines?.node === undefined) continue;
      const name = path.replace(/^.*node_modules\//, '');
      // cookie 2 (through light-my-request) says >=22 but is plain ESM that Node loads through
      // require(esm) from 20.19, which this suite exercises on every Fastify inject.
      if (name === 'cookie') continue;
      const needed = versionFloor(entry.engines.node);
      if (needed !== undefined && compareVersions(floor, needed) < 0)
        tooOld.push(`${name}@${entry.version ?? '?'} needs ${entry.engines.node}`);
    }
    expect(tooOld, 'raise engines.node in package.json').toEqual([]);
  });
});

/** The x.y.z of a plain ">=x[.y[.z]]" range; undefined for any other form (unions, carets). */
function versionFloor(range: string): [number, number, number] | undefined {
  const match = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i += 1) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}
