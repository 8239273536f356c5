import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../infra/http/http-client.js';
import type { ClosableHttpClient } from '../../infra/http/http-client.js';
import { createUpstreamFetcher } from '../../infra/http/upstream-fetcher.js';
import { startLoopbackServer } from '../../../harness/loopback.js';
import type { LoopbackServer, ReceivedRequest } from '../../../harness/loopback.js';
import { belgianNumber, frenchNumber } from '../../../harness/lookup.js';
import { buildTelguarderSearch, createTelguarderSource } from './telguarder-source.js';

const fixtureBytes = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

function serveHtml(response: ServerResponse, status: number, name: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  response.end(fixtureBytes(name));
}

/** The site's search: POST /fr/search answers 302 to the number page, served by GET. */
function searchThenPage(
  pageFor: (digits: string) => { status: number; name: string; headers?: Record<string, string> },
) {
  return (request: ReceivedRequest, response: ServerResponse): void => {
    if (request.method === 'POST' && request.url === '/fr/search') {
      const digits = new URLSearchParams(request.body).get('q') ?? '';
      response.writeHead(302, { location: `/fr/numero/${digits}` });
      response.end();
      return;
    }
    const match = /^\/fr\/numero\/(\d+)$/.exec(request.url);
    if (request.method === 'GET' && match?.[1] !== undefined) {
      const page = pageFor(match[1]);
      serveHtml(response, page.status, page.name, page.headers);
      return;
    }
    response.writeHead(405);
    response.end();
  };
}

let server: LoopbackServer | undefined;
let client: ClosableHttpClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  server = undefined;
  client = undefined;
});

async function setUp(
  handler: (request: ReceivedRequest, response: ServerResponse) => void,
  lookup?: 'search' | 'number',
) {
  server = await startLoopbackServer(handler);
  client = createHttpClient();
  const fetcher = createUpstreamFetcher({ upstream: 'telguarder', client, requestsPerMinute: 600, maxConcurrency: 2 });
  return {
    server,
    fetcher,
    source: createTelguarderSource({ baseUrl: server.url, fetcher, ...(lookup === undefined ? {} : { lookup }) }),
  };
}

/** The site's number page asked directly: GET /fr/number/{digits}; anything else is refused. */
function numberPage(name: string) {
  return (request: ReceivedRequest, response: ServerResponse): void => {
    if (request.method === 'GET' && /^\/fr\/number\/0\d{9}$/.test(request.url)) {
      serveHtml(response, 200, name);
      return;
    }
    response.writeHead(405);
    response.end();
  };
}

const deadline = (): AbortSignal => AbortSignal.timeout(3_000);

describe('telguarder source', () => {
  it('with TELGUARDER_LOOKUP=number, asks GET /fr/number/{0XXXXXXXXX} and answers the parsed page', async () => {
    const { server, source } = await setUp(numberPage('normal.html'), 'number');
    const outcome = await source.lookup(frenchNumber('0600000003'), deadline());
    expect(outcome).toMatchObject({ status: 'ok', data: { spamScore: 74, reportsCount: 37 } });
    expect(server.received.map((request) => [request.method, request.url, request.body])).toEqual([
      ['GET', '/fr/number/0600000003', ''],
    ]);
  });

  it('with TELGUARDER_LOOKUP=number, never answers a cacheable not_found for a foreign number it was not asked about (the engine skips it first; the site is not called)', async () => {
    const { server, source } = await setUp(numberPage('normal.html'), 'number');
    expect(await source.lookup(belgianNumber(), deadline())).toEqual({ status: 'error', reason: 'aborted' });
    expect(server.received).toHaveLength(0);
  });

  it('posts the search form, follows the redirect with a GET and answers the parsed page', async () => {
    const { server, source } = await setUp(searchThenPage(() => ({ status: 200, name: 'normal.html' })));
    const outcome = await source.lookup(frenchNumber('0600000003'), deadline());
    expect(outcome).toMatchObject({
      status: 'ok',
      data: { spamScore: 74, reportsCount: 37, callerType: 'Démarchage téléphonique' },
    });
    expect(server.received.map((request) => [request.method, request.url])).toEqual([
      ['POST', '/fr/search'],
      ['GET', '/fr/numero/0600000003'],
    ]);
    expect(server.received[0]?.body).toBe('q=0600000003');
    expect(server.received[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(server.received[0]?.headers['accept-language']).toMatch(/^fr-FR/);
    expect(server.received[1]?.headers['content-type']).toBeUndefined();
    expect(source).toMatchObject({ slot: 'signals', name: 'telguarder' });
  });

  it('also reads the page when the search answers it directly', async () => {
    const { source } = await setUp((_request, response) => serveHtml(response, 200, 'caller-type-tie.html'));
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toMatchObject({
      status: 'ok',
      data: { callerType: 'Sondage' },
    });
  });

  it('answers not_found for the unknown-number page and for a 404', async () => {
    const { source } = await setUp(
      searchThenPage((digits) =>
        digits === '0100000004' ? { status: 200, name: 'unknown.html' } : { status: 404, name: 'challenge.html' },
      ),
    );
    expect(await source.lookup(frenchNumber('0100000004'), deadline())).toEqual({ status: 'not_found' });
    expect(await source.lookup(frenchNumber('0100000005'), deadline())).toEqual({ status: 'not_found' });
  });

  it('never answers a cacheable not_found for a number outside the French plan it was not asked about (the engine skips it first; the site is not called)', async () => {
    const { server, source } = await setUp(searchThenPage(() => ({ status: 200, name: 'normal.html' })));
    expect(await source.lookup(belgianNumber(), deadline())).toEqual({ status: 'error', reason: 'aborted' });
    expect(server.received).toHaveLength(0);
  });

  it('calls a 200 page without the stats panel a challenge', async () => {
    const { source } = await setUp(searchThenPage(() => ({ status: 200, name: 'challenge.html' })));
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toEqual({
      status: 'blocked',
      reason: 'challenge',
    });
  });

  it('answers error(parse) for a malformed security level', async () => {
    const { source } = await setUp(searchThenPage(() => ({ status: 200, name: 'malformed-level.html' })));
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toEqual({ status: 'error', reason: 'parse' });
  });

  it('answers blocked on 403 and then pauses without calling the site', async () => {
    const { server, source } = await setUp(searchThenPage(() => ({ status: 403, name: 'challenge.html' })));
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toMatchObject({
      status: 'blocked',
      reason: 'http_403',
    });
    expect(await source.lookup(frenchNumber('0600000004'), deadline())).toMatchObject({
      status: 'blocked',
      reason: 'paused',
    });
    expect(server.received).toHaveLength(2);
  });

  it('honours Retry-After on a 429 to the search itself, for every number', async () => {
    const { server, source } = await setUp((_request, response) =>
      serveHtml(response, 429, 'challenge.html', { 'retry-after': '90' }),
    );
    const first = await source.lookup(frenchNumber('0600000003'), deadline());
    expect(first).toMatchObject({ status: 'blocked', reason: 'http_429' });
    // The fetcher reads its clock twice: allow a few milliseconds under load.
    expect(first.status === 'blocked' ? first.retryAfterMs : 0).toBeGreaterThan(89_000);
    expect(first.status === 'blocked' ? first.retryAfterMs : 0).toBeLessThanOrEqual(90_000);
    expect(await source.lookup(frenchNumber('0900000003'), deadline())).toMatchObject({
      status: 'blocked',
      reason: 'paused',
    });
    expect(server.received).toHaveLength(1);
  });

  it('answers error(http_5xx) on a server error', async () => {
    const { source } = await setUp(searchThenPage(() => ({ status: 502, name: 'challenge.html' })));
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toEqual({
      status: 'error',
      reason: 'http_5xx',
      cause: 'http_502',
    });
  });

  it('refuses a redirect to another host', async () => {
    const { server, source } = await setUp((request, response) => {
      response.writeHead(302, { location: `http://localhost:${server?.port ?? 1}/fr/numero/0600000003` });
      response.end();
    });
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toEqual({
      status: 'error',
      reason: 'redirect',
    });
    expect(server.received).toHaveLength(1);
  });

  it('reads a page served in Latin-1', async () => {
    const { source } = await setUp(
      searchThenPage(() => ({
        status: 200,
        name: 'latin1.html',
        headers: { 'content-type': 'text/html; charset=iso-8859-1' },
      })),
    );
    expect(await source.lookup(frenchNumber('0600000003'), deadline())).toMatchObject({
      status: 'ok',
      data: {
        spamScore: 36,
        callerType: 'Arnaque à la carte',
        commentList: [{ date: '14/12/2025', text: 'Prétend être la banque (inventé).' }],
      },
    });
  });
});

describe('buildTelguarderSearch', () => {
  it('posts to /fr/search under the base with the digits as q', () => {
    expect(buildTelguarderSearch('https://www.telguarder.com/', '0600000003')).toEqual({
      url: 'https://www.telguarder.com/fr/search',
      body: 'q=0600000003',
    });
    expect(buildTelguarderSearch('https://www.telguarder.com', '+33600000003')).toBeNull();
  });
});
