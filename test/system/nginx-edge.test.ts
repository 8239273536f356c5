// The shipped docker/nginx.conf, run by Debian's nginx (nginx-light, installed by
// scripts/test-prerequisites.sh) on loopback in front of the built server (`node dist/server.js`).
// The file is used as shipped except for its four lines marked "test:" (adaptShippedConf below):
// the two upstreams (`server app:3000 resolve;`, `server app:3001 resolve;`) become the built
// server's loopback port, since compose's DNS is not here and Debian's nginx 1.22 has no `resolve`
// (1.27.3+), and the two `listen` ports become free loopback ports. Everything else (what is
// published, the headers set towards the instances, the 404s) is what compose runs.
//
// The server keeps /metrics and the admin API on its API port (METRICS_PORT and ADMIN_PORT unset,
// what a deployment without them does): nginx alone must keep them from the public port.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, startSlowUnknownUpstream, type ServerProcess, type SlowUpstream } from '../../harness/servers.js';
import { run } from '../support/container-image.js';
import { waitFor } from '../support/redis.js';

const NGINX = '/usr/sbin/nginx';
const ROOT = new URL('../../', import.meta.url);
const SHIPPED_CONF = new URL('docker/nginx.conf', ROOT);
const TOKEN = 'an-admin-token-of-at-least-32-characters';
const FEED_PASSWORD = 'feed-password-for-nginx';

/** The lines of the shipped file the test changes, each matched exactly once, and what they become. */
function adaptShippedConf(
  shipped: string,
  ports: { upstream: number; adminUpstream: number; listen: number; adminListen: number },
): string {
  const substitutions: Array<[string, string]> = [
    ['server app:3000 resolve; # test: upstream', `server 127.0.0.1:${ports.upstream}; # test: upstream`],
    [
      'server app:3001 resolve; # test: admin upstream',
      `server 127.0.0.1:${ports.adminUpstream}; # test: admin upstream`,
    ],
    ['listen 80; # test: listen', `listen 127.0.0.1:${ports.listen}; # test: listen`],
    ['listen 8081; # test: admin listen', `listen 127.0.0.1:${ports.adminListen}; # test: admin listen`],
  ];
  let adapted = shipped;
  for (const [line, replacement] of substitutions) {
    const count = shipped.split(line).length - 1;
    if (count !== 1)
      throw new Error(
        `docker/nginx.conf must hold "${line}" exactly once (found ${count}): the test substitutes that line`,
      );
    adapted = adapted.replace(line, replacement);
  }
  return adapted;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request with the path sent exactly as given (no client-side normalisation) and any Host. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, path, method: 'GET', headers: { connection: 'close', ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

interface Nginx {
  port: number;
  adminPort: number;
  stop(): Promise<void>;
}

/** nginx in the foreground with the adapted file included in a minimal http block of the test's own. */
async function startNginx(dir: string, upstreamPort: number): Promise<Nginx> {
  // A port taken by another process between freePort() and nginx's bind: new ports, a few times.
  for (let attempt = 1; ; attempt += 1) {
    const ports = {
      upstream: upstreamPort,
      adminUpstream: upstreamPort,
      listen: await freePort(),
      adminListen: await freePort(),
    };
    writeFileSync(join(dir, 'default.conf'), adaptShippedConf(readFileSync(SHIPPED_CONF, 'utf8'), ports));
    writeFileSync(
      join(dir, 'nginx.conf'),
      [
        'daemon off;',
        'worker_processes 1;',
        `pid ${join(dir, 'nginx.pid')};`,
        'error_log stderr warn;',
        'events { worker_connections 256; }',
        'http {',
        '    access_log off;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
          (kind) => `    ${kind}_temp_path ${join(dir, kind)};`,
        ),
        `    include ${join(dir, 'default.conf')};`,
        '}',
        '',
      ].join('\n'),
    );
    const child: ChildProcess = spawn(NGINX, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', 'stderr'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let exited = false;
    const exit = new Promise<void>((resolve) =>
      child.once('exit', () => {
        exited = true;
        resolve();
      }),
    );
    await waitFor(
      async () =>
        exited ||
        (await get(ports.listen, '/nginx-health').then(
          (answer) => answer.status === 200,
          () => false,
        )),
      15_000,
    );
    if (exited) {
      if (/Address already in use/.test(stderr) && attempt < 5) continue;
      throw new Error(`nginx did not start: ${stderr}`);
    }
    return {
      port: ports.listen,
      adminPort: ports.adminListen,
      stop: async () => {
        if (!exited) child.kill('SIGTERM');
        await exit;
      },
    };
  }
}

describe('the shipped docker/nginx.conf in front of the built server', () => {
  let dir: string;
  let upstream: SlowUpstream;
  let server: ServerProcess;
  let nginx: Nginx;
  beforeAll(async () => {
    if (!existsSync(NGINX))
      throw new Error(
        `${NGINX} is missing: \`npm test\` installs it (scripts/test-prerequisites.sh), or apt-get install nginx-light`,
      );
    dir = mkdtempSync(join(tmpdir(), 'nginx-edge-'));
    // nginx's workers drop root for nobody: they must reach their temporary directories.
    chmodSync(dir, 0o755);
    for (const kind of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
      mkdirSync(join(dir, kind));
      chmodSync(join(dir, kind), 0o777);
    }
    upstream = await startSlowUnknownUpstream(0);
    server = await spawnServer({
      ...upstream.env,
      HASH_SECRET: 'nginx-edge-secret-0123456789',
      // As compose.yaml sets them: nginx is the one trusted hop, and every connection is nginx's.
      TRUST_PROXY: '1',
      MAX_CONNECTIONS_PER_ADDRESS: '0',
      RATE_LIMIT_MAX: '0',
      ADMIN_TOKEN: TOKEN,
      FEED_PASSWORD,
      LISTS_FILE: join(dir, 'lists.csv'),
    });
    nginx = await startNginx(dir, server.port);
  });
  afterAll(async () => {
    await nginx?.stop();
    server?.child.kill('SIGTERM');
    await server?.exited;
    await upstream?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the lookup page, its assets, the API, its documents, the health check, SpamBlocker’s config and the feed', async () => {
    const page = await get(nginx.port, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const script = /\/assets\/app\.js\?v=[0-9a-f]+/.exec(page.body)?.[0] ?? '/assets/app.js';
    expect((await get(nginx.port, script)).status).toBe(200);
    const lookup = await get(nginx.port, '/api/phone/0612345678');
    expect(lookup.status, lookup.body).toBe(200);
    expect(JSON.parse(lookup.body)).toMatchObject({ success: true });
    expect((await get(nginx.port, '/api/phone/0612345678/info')).status).toBe(200);
    expect((await get(nginx.port, '/api/phone/0612345678/verdict')).status).toBe(200);
    expect((await get(nginx.port, '/health')).status).toBe(200);
    expect((await get(nginx.port, '/openapi.json')).status).toBe(200);
    expect((await get(nginx.port, '/integrations/spamblocker/query.json')).status).toBe(200);
    // The feed: the service's own password challenge, not nginx's 404.
    const feed = await get(nginx.port, '/feed/blocklist.csv');
    expect(feed.status).toBe(401);
    expect(feed.headers['www-authenticate']).toMatch(/^Basic /);
    const basic = `Basic ${Buffer.from(`blocklist:${FEED_PASSWORD}`).toString('base64')}`;
    expect((await get(nginx.port, '/feed/blocklist.csv', { authorization: basic })).status).toBe(200);
  });

  it('publishes every path of the API’s OpenAPI document but the admin API’s, and none of these', async () => {
    const document = JSON.parse((await get(server.port, '/openapi.json')).body) as { paths: Record<string, unknown> };
    const paths = Object.keys(document.paths).map((path) =>
      path.replace('{number}', '0612345678').replace('{rule}', '%2B33162%2A'),
    );
    expect(paths.filter((path) => path.startsWith('/admin/')).length).toBeGreaterThan(0);
    for (const path of paths) {
      // The server marks every answer of its own with X-Request-Id; nginx's 404 has none.
      const answer = await get(nginx.port, path);
      if (path.startsWith('/admin/')) {
        expect(answer.status, path).toBe(404);
        expect(answer.headers['x-request-id'], path).toBeUndefined();
      } else {
        expect(answer.headers['x-request-id'], `${path} (${answer.status}) is not the server's answer`).toBeDefined();
      }
    }
    // The API's documents as the page links them.
    for (const path of ['/docs', '/docs/'])
      expect((await get(nginx.port, path)).headers['x-request-id'], path).toBeDefined();
  });

  it('never serves /metrics nor the admin API on the public port, however the path is spelled, while the server itself would', async () => {
    const bearer = { authorization: `Bearer ${TOKEN}` };
    // The control: the server behind nginx serves both (on its API port, as without METRICS_PORT and ADMIN_PORT).
    expect((await get(server.port, '/metrics')).status).toBe(200);
    expect((await get(server.port, '/admin/lists/rules', bearer)).status).toBe(200);
    for (const path of [
      '/metrics',
      '/metrics/',
      '//metrics',
      '/metrics?format=text',
      '/%6Detrics',
      '/api/../metrics',
      '/api/%2E%2E/metrics',
      '/assets/../metrics',
      '/admin/lists/rules',
      '/admin/lists/rules/',
      '//admin/lists/rules',
      '/%61dmin/lists/rules',
      '/api/../admin/lists/rules',
      '/feed/../admin/lists/rules',
    ]) {
      const answer = await get(nginx.port, path, bearer);
      expect(answer.status, path).toBe(404);
      expect(answer.headers['content-type'], path).toBe('application/problem+json');
      expect(JSON.parse(answer.body), path).toMatchObject({ type: '/problems/route-not-found', status: 404 });
      expect(answer.body, path).not.toMatch(/phone_rep_|"rules"/);
    }
  });

  it('serves the admin API alone on its own port, behind the token', async () => {
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const rules = await get(nginx.adminPort, '/admin/lists/rules', bearer);
    expect(rules.status).toBe(200);
    expect((await get(nginx.adminPort, '/admin/lists/rules')).status).toBe(401);
    for (const path of ['/metrics', '/api/phone/0612345678', '/', '/feed/blocklist.csv']) {
      expect((await get(nginx.adminPort, path, bearer)).status, path).toBe(404);
    }
  });

  it('builds SpamBlocker’s URLs from the host and port the client reached, never from its own X-Forwarded-* headers', async () => {
    const hostile = {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': '666',
      forwarded: 'host=evil.example;proto=https',
    };
    const urlOf = (answer: Answer): string => {
      const api = JSON.parse(answer.body) as { actions: Array<{ type: string; url?: string }> };
      return api.actions.find((action) => action.type === 'HttpDownload')?.url ?? '';
    };
    // Behind compose: the host's 8080 published on nginx's 80; the client's Host names 8080.
    const behindCompose = await get(nginx.port, '/integrations/spamblocker/query.json', {
      host: 'phones.example.org:8080',
      ...hostile,
    });
    expect(behindCompose.status).toBe(200);
    expect(urlOf(behindCompose)).toBe(
      'http://phones.example.org:8080/api/phone/{cc}{domestic}/verdict?wait=3500&cid=fr',
    );
    // The scheme's own port: no port in the URL, whatever the client claims.
    const defaultPort = await get(nginx.port, '/integrations/spamblocker/query.json', {
      host: 'phones.example.org',
      ...hostile,
    });
    expect(urlOf(defaultPort)).toBe('http://phones.example.org/api/phone/{cc}{domestic}/verdict?wait=3500&cid=fr');
    // The feed's workflow (behind its password) is built the same way.
    const basic = `Basic ${Buffer.from(`blocklist:${FEED_PASSWORD}`).toString('base64')}`;
    const workflow = await get(nginx.port, '/integrations/spamblocker/workflow.json', {
      host: 'phones.example.org:8080',
      authorization: basic,
      ...hostile,
    });
    expect(workflow.status).toBe(200);
    expect(workflow.body).toContain('"http://phones.example.org:8080/feed/blocklist.csv"');
    expect(workflow.body).not.toContain('evil.example');
  });
});

describe('compose.yaml around it', () => {
  it('runs this nginx.conf, and publishes only nginx: the public port to the world, the admin port on the host’s loopback', async () => {
    const project = mkdtempSync(join(tmpdir(), 'compose-ports-'));
    try {
      writeFileSync(join(project, 'compose.yaml'), readFileSync(new URL('compose.yaml', ROOT)));
      mkdirSync(join(project, 'docker'));
      writeFileSync(join(project, 'docker/nginx.conf'), readFileSync(SHIPPED_CONF));
      writeFileSync(
        join(project, '.env'),
        readFileSync(new URL('.env.example', ROOT), 'utf8').replace(
          /^HASH_SECRET=$/m,
          'HASH_SECRET=compose-ports-secret-0123456789',
        ),
      );
      const config = await run(
        'docker-compose',
        ['--project-directory', project, '-f', join(project, 'compose.yaml'), 'config'],
        {
          env: {
            ...process.env,
            HASH_SECRET: undefined,
            HTTP_PORT: undefined,
            ADMIN_HTTP_PORT: undefined,
            ADMIN_HTTP_BIND: undefined,
          },
        },
      );
      expect(config.code, config.stderr).toBe(0);
      // docker-compose prints each service under "services:" at two spaces, its keys at four.
      const services = new Map<string, string>();
      for (const block of (config.stdout.split(/^services:\n/m)[1] ?? '').split(/^(?= {2}[a-z]+:\n)/m)) {
        const name = /^ {2}([a-z]+):/.exec(block)?.[1];
        if (name !== undefined) services.set(name, block.split(/^[a-z]/m)[0] ?? '');
      }
      expect([...services.keys()].sort()).toEqual(['app', 'lb', 'redis']);
      expect(services.get('app')).not.toMatch(/^ {4}ports:/m);
      expect(services.get('redis')).not.toMatch(/^ {4}ports:/m);
      const lb = services.get('lb') ?? '';
      expect(lb).toContain('./docker/nginx.conf:/etc/nginx/conf.d/default.conf:ro'.replace('./', `${project}/`));
      const ports = /^ {4}ports:\n((?: {4}[- ] .*\n)+)/m.exec(lb)?.[1] ?? '';
      expect(ports.replace(/\s+/g, ' ').trim()).toBe('- published: 8080 target: 80 - 127.0.0.1:8081:8081/tcp');
      // The instances keep /metrics off the API port, on compose's network only.
      expect(services.get('app')).toMatch(/METRICS_PORT: '9464'/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
