// Upstream faults seen through the whole service: numeroinconnu.fr (the `community` slot) is
// a loopback server misbehaving in one way per test, the other two sites answer normally, and
// the real app with the real adapters, HTTP client and engine answers over real HTTP. Each
// fault ends within the lookup deadline as a 200 whose `meta.sources.community` names the
// documented reason (never a 500), memory stays bounded and the service keeps serving.
// The HTTP client's own tests (src/infra/http/*.test.ts) cover each fault at the client level.
import { gzipSync } from 'node:zlib';
import type http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixtureText } from '../../harness/upstream-sites.js';
import { startFixtureUpstreams, type FixtureUpstreams } from '../../harness/upstream-sites.js';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { waitUntilServing } from './support/answers.js';

const SOURCE_TIMEOUT_MS = 1200;
const LOOKUP_TIMEOUT_MS = 1600;
/** A lookup answers within its deadline plus scheduling slack on a loaded machine. */
const ANSWER_WITHIN_MS = LOOKUP_TIMEOUT_MS + 1500;

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

interface Answer {
  status: number;
  body: {
    success?: boolean;
    meta?: { sources?: Record<string, { status: string; reason?: string }> };
    sources?: Record<string, string>;
  };
  elapsedMs: number;
}

describe('hardening: upstream faults end to end', () => {
  let normalSites: FixtureUpstreams;
  let faulty: LoopbackServer | undefined;
  let service: TestServer | undefined;
  let numberIndex = 10;

  beforeAll(async () => {
    normalSites = await startFixtureUpstreams();
  });
  afterEach(async () => {
    await service?.close();
    await faulty?.close();
    service = undefined;
    faulty = undefined;
  });
  afterAll(async () => {
    await normalSites.close();
  });

  async function startWithFaultyCommunity(
    handler: LoopbackHandler,
    env: Record<string, string> = {},
  ): Promise<TestServer> {
    faulty = await startLoopbackServer(handler);
    service = await startTestServer({
      env: {
        ...normalSites.env,
        NUMEROINCONNU_URL: faulty.url,
        RATE_LIMIT_MAX: '0',
        SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
        LOOKUP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
        ...env,
      },
    });
    await waitUntilServing(service.app);
    return service;
  }

  async function lookup(server: TestServer): Promise<Answer> {
    numberIndex += 1;
    const startedAt = Date.now();
    const response = await fetch(`${server.baseUrl}/api/phone/06000000${String(numberIndex).padStart(2, '0')}`);
    const body = (await response.json()) as Answer['body'];
    return { status: response.status, body, elapsedMs: Date.now() - startedAt };
  }

  async function expectCommunityOutcome(
    handler: LoopbackHandler,
    status: string,
    reason: string | undefined,
  ): Promise<Answer> {
    const server = await startWithFaultyCommunity(handler);
    const answer = await lookup(server);
    expect(answer.status).toBe(200);
    expect(answer.elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
    expect(answer.body.meta?.sources?.primary?.status).toBe('ok');
    expect(answer.body.meta?.sources?.signals?.status).toBe('ok');
    expect(answer.body.meta?.sources?.community).toMatchObject(reason === undefined ? { status } : { status, reason });
    const health = await fetch(`${server.baseUrl}/health`);
    expect(health.status).toBe(200);
    return answer;
  }

  it('a black hole (accepts, never answers) ends as community error/timeout within the deadline', async () => {
    await expectCommunityOutcome(() => undefined, 'error', 'timeout');
  });

  it('a connection reset mid-body ends as community error/connection', async () => {
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
        response.write('<html><body><div class="container">');
        setTimeout(() => response.socket?.destroy(), 20);
      },
      'error',
      'connection',
    );
  });

  it('a slow drip (one byte every 200 ms) ends as community error/timeout within the deadline', async () => {
    await expectCommunityOutcome((_request, response) => dripForever(response, 'x', 200), 'error', 'timeout');
  });

  it('an endless body ends as community error/too_large, with the heap and RSS bounded', async () => {
    collectGarbage();
    const before = process.memoryUsage();
    await expectCommunityOutcome((_request, response) => streamForever(response), 'error', 'too_large');
    collectGarbage();
    const after = process.memoryUsage();
    expect(after.heapUsed - before.heapUsed).toBeLessThan(32 * 1024 * 1024);
    expect(after.rss - before.rss).toBeLessThan(128 * 1024 * 1024);
  });

  it('a 10 MB body ends as community error/too_large', async () => {
    const tenMegabytes = Buffer.alloc(10 * 1024 * 1024, 'a');
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(tenMegabytes);
      },
      'error',
      'too_large',
    );
  });

  it('a gzip bomb (64 MiB of zeros in 64 KiB) ends as community error/too_large, with the heap bounded', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0));
    collectGarbage();
    const before = process.memoryUsage();
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        response.end(bomb);
      },
      'error',
      'too_large',
    );
    collectGarbage();
    expect(process.memoryUsage().heapUsed - before.heapUsed).toBeLessThan(32 * 1024 * 1024);
  });

  it('an unknown declared charset ends as community error/decoding', async () => {
    const page = fixtureText('numeroinconnu', 'normal.html');
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=x-made-up' });
        response.end(page);
      },
      'error',
      'decoding',
    );
  });

  it('a Latin-1 page with no charset anywhere is still read (as UTF-8, never a 500)', async () => {
    const page = fixtureText('numeroinconnu', 'latin1.html').replace(/<meta[^>]*charset[^>]*>/i, '');
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(Buffer.from(page, 'latin1'));
      },
      'ok',
      undefined,
    );
  });

  it('a redirect to another host ends as community error/redirect without leaving loopback', async () => {
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(302, { location: 'http://192.0.2.1/numero/0600000001' }).end();
      },
      'error',
      'redirect',
    );
  });

  it('a captcha page (200 without the markers) ends as community blocked/challenge', async () => {
    const challenge = fixtureText('numeroinconnu', 'challenge.html');
    await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(challenge);
      },
      'blocked',
      'challenge',
    );
  });

  it('a 429 with Retry-After ends as blocked/http_429, then blocked/paused for other numbers without calling the site', async () => {
    const answer = await expectCommunityOutcome(
      (_request, response) => {
        response.writeHead(429, { 'retry-after': '120', 'content-type': 'text/html' }).end('<html>slow down</html>');
      },
      'blocked',
      'http_429',
    );
    expect(answer.body.success).toBe(true);
    if (!service || !faulty) throw new Error('no service');
    const callsAfterFirst = faulty.received.length;
    const second = await lookup(service);
    expect(second.status).toBe(200);
    expect(second.body.meta?.sources?.community).toMatchObject({ status: 'blocked', reason: 'paused' });
    expect(faulty.received.length).toBe(callsAfterFirst);
  });

  it('invalid JSON from the tellows partner API ends as primary error/invalid_json', async () => {
    const api = await startLoopbackServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('{"tellows": {"score": "7", "comments": ');
    });
    try {
      service = await startTestServer({
        env: {
          ...normalSites.env,
          TELLOWS_API_URL: api.url,
          TELLOWS_API_KEY: 'test-key',
          RATE_LIMIT_MAX: '0',
          SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
          LOOKUP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
        },
      });
      await waitUntilServing(service.app);
      const answer = await lookup(service);
      expect(answer.status).toBe(200);
      expect(answer.body.meta?.sources?.primary).toMatchObject({ status: 'error', reason: 'invalid_json' });
      expect(answer.body.meta?.sources?.community?.status).toBe('ok');
    } finally {
      await api.close();
    }
  });

  it('every site black-holed with nothing cached: 502 listing each reason, within the deadline, then still serving', async () => {
    faulty = await startLoopbackServer(() => undefined);
    service = await startTestServer({
      env: {
        TELLOWS_API_URL: faulty.url,
        TELLOWS_WEB_URL: faulty.url,
        NUMEROINCONNU_URL: faulty.url,
        TELGUARDER_URL: faulty.url,
        RATE_LIMIT_MAX: '0',
        SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
        LOOKUP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
      },
    });
    await waitUntilServing(service.app);
    const answer = await lookup(service);
    expect(answer.status).toBe(502);
    expect(answer.elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
    expect(answer.body.sources).toEqual({ primary: 'timeout', community: 'timeout', signals: 'timeout' });
    expect((await fetch(`${service.baseUrl}/health`)).status).toBe(200);
  });
});

function dripForever(response: http.ServerResponse, byte: string, everyMs: number): void {
  response.writeHead(200, { 'content-type': 'text/html' });
  const timer = setInterval(() => {
    if (response.destroyed || response.writableEnded) clearInterval(timer);
    else response.write(byte);
  }, everyMs);
  response.on('close', () => clearInterval(timer));
}

function streamForever(response: http.ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/html' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const write = (): void => {
    while (!response.destroyed && response.write(chunk)) {
      // keep the socket buffer full
    }
    if (!response.destroyed) response.once('drain', write);
  };
  write();
}
