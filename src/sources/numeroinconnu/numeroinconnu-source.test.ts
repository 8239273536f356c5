import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../infra/http/http-client.js';
import type { ClosableHttpClient } from '../../infra/http/http-client.js';
import { createUpstreamFetcher } from '../../infra/http/upstream-fetcher.js';
import { startLoopbackServer } from '../../../harness/loopback.js';
import type { LoopbackServer, ReceivedRequest } from '../../../harness/loopback.js';
import { belgianNumber, frenchNumber } from '../../../harness/lookup.js';
import { buildNumeroinconnuUrl, createNumeroinconnuSource } from './numeroinconnu-source.js';

const fixtureBytes = (name: string): Buffer => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

function serveHtml(response: ServerResponse, status: number, name: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  response.end(fixtureBytes(name));
}

let server: LoopbackServer | undefined;
let client: ClosableHttpClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  server = undefined;
  client = undefined;
});

async function setUp(handler: (request: ReceivedRequest, response: ServerResponse) => void) {
  server = await startLoopbackServer(handler);
  client = createHttpClient();
  const fetcher = createUpstreamFetcher({
    upstream: 'numeroinconnu',
    client,
    requestsPerMinute: 600,
    maxConcurrency: 2,
  });
  return { server, fetcher, source: createNumeroinconnuSource({ baseUrl: server.url, fetcher }) };
}

const deadline = (): AbortSignal => AbortSignal.timeout(3_000);

describe('numeroinconnu source', () => {
  it('fetches /numero/{digits} with French headers and answers the parsed page', async () => {
    const { server, source } = await setUp((_request, response) => serveHtml(response, 200, 'normal.html'));
    const outcome = await source.lookup(frenchNumber('0600000001'), deadline());
    expect(outcome).toMatchObject({
      status: 'ok',
      data: { dangerPercent: 48, visits: 1393, commentsCount: 6, topCategory: 'Gênant' },
    });
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ method: 'GET', url: '/numero/0600000001' });
    expect(server.received[0]?.headers['accept-language']).toMatch(/^fr-FR/);
    expect(server.received[0]?.headers['user-agent']).toMatch(/Mozilla/);
    expect(source).toMatchObject({ slot: 'community', name: 'numeroinconnu' });
  });

  it('answers not_found for a 404 and for the unknown-number page', async () => {
    const { source } = await setUp((request, response) =>
      request.url.endsWith('0100000000')
        ? serveHtml(response, 200, 'unknown.html')
        : serveHtml(response, 404, 'challenge.html'),
    );
    expect(await source.lookup(frenchNumber('0100000000'), deadline())).toEqual({ status: 'not_found' });
    expect(await source.lookup(frenchNumber('0100000009'), deadline())).toEqual({ status: 'not_found' });
  });

  it('never answers a cacheable not_found for a number outside the French plan it was not asked about (the engine skips it first; the site is not called)', async () => {
    const { server, source } = await setUp((_request, response) => serveHtml(response, 200, 'normal.html'));
    expect(await source.lookup(belgianNumber(), deadline())).toEqual({ status: 'error', reason: 'aborted' });
    expect(server.received).toHaveLength(0);
  });

  it('calls a 200 page without the markers a challenge', async () => {
    const { source } = await setUp((_request, response) => serveHtml(response, 200, 'challenge.html'));
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'blocked',
      reason: 'challenge',
    });
  });

  it('answers error(parse) for a recognised page with an unreadable count', async () => {
    const { source } = await setUp((_request, response) => serveHtml(response, 200, 'malformed-count.html'));
    // The adapter names the required marker its parser could not read (the `layout` cause).
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'parse',
      cause: 'layout',
      missing: ['comments count (#count-comments or row "Nombre de commentaires")'],
    });
  });

  it('answers blocked on 403 and then pauses without calling the site', async () => {
    const { server, source } = await setUp((_request, response) => serveHtml(response, 403, 'challenge.html'));
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toMatchObject({
      status: 'blocked',
      reason: 'http_403',
    });
    expect(await source.lookup(frenchNumber('0600000002'), deadline())).toMatchObject({
      status: 'blocked',
      reason: 'paused',
    });
    expect(server.received).toHaveLength(1);
  });

  it('honours Retry-After on 429 for every number', async () => {
    const { server, source } = await setUp((_request, response) =>
      serveHtml(response, 429, 'challenge.html', { 'retry-after': '120' }),
    );
    const first = await source.lookup(frenchNumber('0600000001'), deadline());
    expect(first).toMatchObject({ status: 'blocked', reason: 'http_429' });
    // The fetcher reads its clock twice: allow a few milliseconds under load.
    expect(first.status === 'blocked' ? first.retryAfterMs : 0).toBeGreaterThan(119_000);
    expect(first.status === 'blocked' ? first.retryAfterMs : 0).toBeLessThanOrEqual(120_000);
    const paused = await source.lookup(frenchNumber('0700000001'), deadline());
    expect(paused).toMatchObject({ status: 'blocked', reason: 'paused' });
    expect(paused.status === 'blocked' ? paused.retryAfterMs : 0).toBeGreaterThan(110_000);
    expect(server.received).toHaveLength(1);
  });

  it('answers error(http_5xx) on a server error and error(http_status) on another 4xx', async () => {
    const { source } = await setUp((request, response) =>
      serveHtml(response, request.url.endsWith('1') ? 503 : 400, 'challenge.html'),
    );
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'http_5xx',
      cause: 'http_503',
    });
    expect(await source.lookup(frenchNumber('0600000002'), deadline())).toEqual({
      status: 'error',
      reason: 'http_status',
      cause: 'http_400',
    });
  });

  it('reads a page served in Latin-1', async () => {
    const { source } = await setUp((_request, response) =>
      serveHtml(response, 200, 'latin1.html', { 'content-type': 'text/html; charset=ISO-8859-1' }),
    );
    const outcome = await source.lookup(frenchNumber('0600000001'), deadline());
    expect(outcome).toMatchObject({
      status: 'ok',
      data: {
        visits: 3210,
        commentList: [{ text: 'Numéro inventé qui réclame des données bancaires.', category: 'Dangereux' }],
      },
    });
  });

  it('answers error(too_large) for a body over the cap, never a partial parse', async () => {
    const { source } = await setUp((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(`<span id="count-comments">3</span>${'<p>x</p>'.repeat(200_000)}`);
    });
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'too_large',
    });
  });

  it('answers error(too_large) for a gzip body that inflates past the cap', async () => {
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    const { source } = await setUp((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      response.end(bomb);
    });
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'too_large',
    });
  });

  it('ends a slow-drip body at the deadline as error(timeout)', async () => {
    const { source } = await setUp((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => response.write('<p>.</p>'), 50);
      response.on('close', () => clearInterval(timer));
    });
    expect(await source.lookup(frenchNumber('0600000001'), AbortSignal.timeout(400))).toEqual({
      status: 'error',
      reason: 'timeout',
    });
  });
});

describe('buildNumeroinconnuUrl', () => {
  it('appends the path to a base with or without a trailing slash or prefix', () => {
    expect(buildNumeroinconnuUrl('https://mirror.example/prefix/', '0600000001')).toBe(
      'https://mirror.example/prefix/numero/0600000001',
    );
    expect(buildNumeroinconnuUrl('https://www.numeroinconnu.fr', '0600000001')).toBe(
      'https://www.numeroinconnu.fr/numero/0600000001',
    );
  });

  it('refuses anything but ten national digits', () => {
    expect(buildNumeroinconnuUrl('https://x.example', '06/../admin')).toBeNull();
    expect(buildNumeroinconnuUrl('https://x.example', null)).toBeNull();
  });
});
