import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../../harness/loopback.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import { createHttpClient, type ClosableHttpClient } from '../../infra/http/http-client.js';
import { createUpstreamFetcher } from '../../infra/http/upstream-fetcher.js';
import { loadConfig } from '../../config/config.js';
import { createTellowsSource, type TellowsLogger, type TellowsSourceOptions } from './tellows-source.js';
import { createUpstreamFetchers } from '../common/wiring.js';
import { tellowsUpstream } from './tellows-upstream.js';

const fixtureBytes = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const API_KEY = 'invented-partner-key-123';
const API_KEY_MD5 = createHash('md5').update(API_KEY).digest('hex');

function frenchNumber(national: string): ParsedPhoneNumber {
  return {
    number: national,
    e164: `+33${national.slice(1)}`,
    regionCode: 'FR',
    isFrenchPlan: true,
    frenchNationalDigits: national,
    phoneInfo: {
      national,
      e164: `+33${national.slice(1)}`,
      type: 'mobile',
      rangeLabel: '',
      originalCarrier: '',
      region: '',
      isNPV: false,
    },
  };
}

const belgianNumber: ParsedPhoneNumber = {
  number: '+32470000000',
  e164: '+32470000000',
  regionCode: 'BE',
  isFrenchPlan: false,
  frenchNationalDigits: null,
  phoneInfo: {
    national: '0470 00 00 00',
    e164: '+32470000000',
    type: 'mobile',
    rangeLabel: '',
    originalCarrier: '',
    region: '',
    isNPV: false,
  },
};

let server: LoopbackServer;
let handler: LoopbackHandler;
let client: ClosableHttpClient;
let clockMs = Date.UTC(2026, 0, 1);
const now = () => clockMs;

beforeAll(async () => {
  server = await startLoopbackServer((request, response) => handler(request, response));
  client = createHttpClient();
});
afterAll(async () => {
  await client.close();
  await server.close();
});
beforeEach(() => {
  server.received.length = 0;
  clockMs = Date.UTC(2026, 0, 1);
});

function serve(
  status: number,
  body: Buffer | string,
  headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' },
): LoopbackHandler {
  return (_request, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };
}

/** A fresh source (fresh pause and budget state) with separate API and site fetchers. */
function makeSource(overrides: Partial<TellowsSourceOptions> = {}) {
  const apiFetcher = createUpstreamFetcher({
    upstream: 'tellows',
    client,
    requestsPerMinute: 600,
    maxConcurrency: 4,
    now,
  });
  const webFetcher = createUpstreamFetcher({
    upstream: 'tellows-web',
    client,
    requestsPerMinute: 600,
    maxConcurrency: 4,
    now,
  });
  const warnings: Array<{ details: Record<string, unknown>; message: string }> = [];
  const logger: TellowsLogger = { warn: (details, message) => warnings.push({ details, message }) };
  const source = createTellowsSource({
    apiUrl: `${server.url}/`,
    webUrl: server.url,
    apiKey: API_KEY,
    apiFetcher,
    webFetcher,
    logger,
    ...overrides,
  });
  return { source, apiFetcher, webFetcher, warnings };
}

const deadline = () => AbortSignal.timeout(3_000);

describe('tellows source: partner API', () => {
  it('authenticates with the MD5 of the key in X-Auth-Token and never sends the clear key', async () => {
    handler = serve(200, fixtureBytes('api-trailer-after.txt'));
    const { source } = makeSource({ partner: 'invented-partner' });
    const outcome = await source.lookup(frenchNumber('0600000001'), deadline());
    expect(outcome).toMatchObject({ status: 'ok', data: { score: 8, searches: 1234, commentsCount: 3 } });
    expect(server.received).toHaveLength(1);
    const received = server.received[0];
    expect(received?.headers['x-auth-token']).toBe(API_KEY_MD5);
    expect(JSON.stringify(received)).not.toContain(API_KEY);
    const url = new URL(received?.url ?? '', server.url);
    expect(url.pathname).toBe('/basic/num/0600000001');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      json: '1',
      country: 'fr',
      lang: 'fr',
      showcomments: '10',
      partner: 'invented-partner',
    });
  });

  it('asks about a foreign number in its 00 international form, with its own country (be for a Belgian number)', async () => {
    handler = serve(200, fixtureBytes('api-normal.json'));
    await makeSource().source.lookup(belgianNumber, deadline());
    const url = new URL(server.received[0]?.url ?? '', server.url);
    expect(url.pathname).toBe('/basic/num/0032470000000');
    expect(url.searchParams.get('country')).toBe('be');
    expect(url.searchParams.get('lang')).toBe('fr');
  });

  it('asks about an overseas French-plan number with country fr, in its national form', async () => {
    handler = serve(200, fixtureBytes('api-normal.json'));
    const reunion: ParsedPhoneNumber = { ...frenchNumber('0692000000'), e164: '+262692000000', regionCode: 'RE' };
    await makeSource().source.lookup(reunion, deadline());
    const url = new URL(server.received[0]?.url ?? '', server.url);
    expect(url.pathname).toBe('/basic/num/0692000000');
    expect(url.searchParams.get('country')).toBe('fr');
  });

  it('answers error(auth) for the invalid-key text, with a warning that names neither key nor number', async () => {
    handler = serve(200, fixtureBytes('api-invalid-key.txt'));
    const { source, warnings } = makeSource();
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({ status: 'error', reason: 'auth' });
    expect(warnings).toHaveLength(1);
    const logged = JSON.stringify(warnings);
    expect(logged).not.toContain(API_KEY);
    expect(logged).not.toContain(API_KEY_MD5);
    expect(logged).not.toContain('0600000001');
  });

  it('answers not_found for a 404 and for the unknown-number document', async () => {
    handler = serve(404, 'not found');
    expect(await makeSource().source.lookup(frenchNumber('0600000005'), deadline())).toEqual({ status: 'not_found' });
    handler = serve(200, fixtureBytes('api-unknown-number.json'));
    expect(await makeSource().source.lookup(frenchNumber('0600000005'), deadline())).toEqual({ status: 'not_found' });
  });

  it('answers error(invalid_json) for a 200 that is not the expected JSON', async () => {
    handler = serve(200, '<html><body>Wartungsarbeiten</body></html>');
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'invalid_json',
    });
  });

  it('fills comments from the page when the API counted comments but sent none', async () => {
    handler = (request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(
        request.url?.startsWith('/basic/') ? fixtureBytes('api-missing-lists.json') : fixtureBytes('page-normal.html'),
      );
    };
    const outcome = await makeSource().source.lookup(frenchNumber('0600000004'), deadline());
    expect(outcome).toMatchObject({ status: 'ok', data: { score: 7, searches: 410, commentsCount: 5 } });
    expect(outcome.status === 'ok' ? outcome.data.commentList.map((comment) => comment.author) : []).toEqual([
      'Camille',
      'Jürgen',
      'Anonyme',
    ]);
    expect(server.received.map((request) => request.url?.split('?')[0])).toEqual([
      '/basic/num/0600000004',
      '/num/0600000004',
    ]);
    // the page request carries no API credentials
    expect(server.received[1]?.headers['x-auth-token']).toBeUndefined();
  });

  it('keeps the API figures when the page fill fails', async () => {
    handler = (request, response) => {
      response.writeHead(request.url?.startsWith('/basic/') ? 200 : 503, { 'content-type': 'text/html' });
      response.end(request.url?.startsWith('/basic/') ? fixtureBytes('api-missing-lists.json') : 'down');
    };
    expect(await makeSource().source.lookup(frenchNumber('0600000004'), deadline())).toEqual({
      status: 'ok',
      data: { score: 7, searches: 410, commentsCount: 5, commentList: [] },
    });
  });
});

describe('tellows source: HTML page (no key)', () => {
  const pageSource = () => makeSource({ apiKey: undefined });

  it('reads the page at /num/{national digits}', async () => {
    handler = serve(200, fixtureBytes('page-normal.html'));
    const outcome = await pageSource().source.lookup(frenchNumber('0600000001'), deadline());
    expect(outcome).toMatchObject({ status: 'ok', data: { score: 8, searches: 1234, commentsCount: 3 } });
    expect(server.received[0]?.url).toBe('/num/0600000001');
    expect(server.received[0]?.headers['accept-language']).toBe('fr-FR,fr;q=0.9');
  });

  it('decodes a Latin-1 page declared in Content-Type', async () => {
    handler = serve(200, fixtureBytes('page-latin1.html'), { 'content-type': 'text/html; charset=ISO-8859-1' });
    const outcome = await pageSource().source.lookup(frenchNumber('0600000008'), deadline());
    expect(outcome.status === 'ok' ? outcome.data.commentList[0] : undefined).toEqual({
      author: 'Élodie',
      text: 'Propose une étude gratuite de la façade, très insistant.',
      date: '03/04/2024',
      callerType: 'Télémarketing',
    });
  });

  it('decodes a Latin-1 page declared only in its meta tag', async () => {
    handler = serve(200, fixtureBytes('page-latin1.html'), { 'content-type': 'text/html' });
    const outcome = await pageSource().source.lookup(frenchNumber('0600000008'), deadline());
    expect(outcome.status === 'ok' ? outcome.data.commentList[1]?.author : undefined).toBe('François');
  });

  it('answers blocked(challenge) for a 200 page without the score image', async () => {
    handler = serve(200, fixtureBytes('page-challenge.html'));
    expect(await pageSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'blocked',
      reason: 'challenge',
    });
  });

  it('never answers a cacheable not_found for a foreign number it was not asked about (the engine skips it first; the site is not called)', async () => {
    handler = serve(200, fixtureBytes('page-normal.html'));
    expect(await pageSource().source.lookup(belgianNumber, deadline())).toEqual({ status: 'error', reason: 'aborted' });
    expect(server.received).toHaveLength(0);
  });
});

describe('tellows source: blocks and politeness', () => {
  it('answers blocked(http_403) for a 403', async () => {
    handler = serve(403, 'Forbidden');
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toMatchObject({
      status: 'blocked',
      reason: 'http_403',
    });
  });

  it('pauses the upstream after a 429 until Retry-After has passed, for every number', async () => {
    handler = serve(429, 'Too Many Requests', { 'retry-after': '120' });
    const { source, apiFetcher } = makeSource();
    expect(await source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'blocked',
      reason: 'http_429',
      retryAfterMs: 120_000,
    });
    handler = serve(200, fixtureBytes('api-normal.json'));
    for (const national of ['0600000001', '0600000002', '0700000003']) {
      expect(await source.lookup(frenchNumber(national), deadline())).toMatchObject({
        status: 'blocked',
        reason: 'paused',
      });
    }
    expect(server.received).toHaveLength(1);
    expect(apiFetcher.pausedUntil()).toBe(clockMs + 120_000);
    clockMs += 120_000;
    expect(await source.lookup(frenchNumber('0600000002'), deadline())).toMatchObject({ status: 'ok' });
    expect(server.received).toHaveLength(2);
  });

  it('answers error(http_5xx) for a 502', async () => {
    handler = serve(502, 'Bad Gateway');
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'http_5xx',
      cause: 'http_502',
    });
  });
});

describe('tellows source: unsafe bodies', () => {
  it('ends a slow-drip body at the deadline as error(timeout)', async () => {
    let timer: NodeJS.Timeout | undefined;
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.write('{"tellows":{');
      timer = setInterval(() => response.write(' '), 50);
      response.on('close', () => clearInterval(timer));
    };
    const outcome = await makeSource().source.lookup(frenchNumber('0600000001'), AbortSignal.timeout(400));
    clearInterval(timer);
    expect(outcome).toEqual({ status: 'error', reason: 'timeout' });
  });

  it('refuses an oversized body as error(too_large)', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let index = 0; index < 20; index += 1) response.write(chunk);
      response.end();
    };
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'too_large',
    });
  });

  it('refuses a gzip body that inflates past the cap as error(too_large)', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20));
    handler = serve(200, bomb, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'too_large',
    });
  });

  it('refuses a redirect to another host as error(redirect)', async () => {
    handler = serve(302, '', { location: `http://localhost:${server.port}/basic/num/0600000001` });
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'redirect',
    });
    expect(server.received).toHaveLength(1);
  });

  it('reports a connection reset mid-body as error(connection), cause reset', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html', 'content-length': '50000' });
      response.write('{"tellows":{"score":"8"');
      setTimeout(() => response.socket?.resetAndDestroy(), 20);
    };
    expect(await makeSource().source.lookup(frenchNumber('0600000001'), deadline())).toEqual({
      status: 'error',
      reason: 'connection',
      cause: 'reset',
    });
  });
});

describe('tellows built from its upstream description', () => {
  it('pauses the site and the API separately: a 429 on the page leaves the API working', async () => {
    handler = (request, response) => {
      if (request.url?.startsWith('/basic/')) {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(fixtureBytes('api-missing-lists.json'));
      } else {
        response.writeHead(429, { 'retry-after': '600' });
        response.end();
      }
    };
    const config = loadConfig({ TELLOWS_API_URL: server.url, TELLOWS_WEB_URL: server.url, TELLOWS_API_KEY: API_KEY });
    const source = tellowsUpstream.createSource(
      config,
      createUpstreamFetchers(tellowsUpstream, config, { client, now }),
      {},
    );
    const expected = { status: 'ok', data: { score: 7, searches: 410, commentsCount: 5, commentList: [] } };
    expect(await source.lookup(frenchNumber('0600000004'), deadline())).toEqual(expected);
    expect(await source.lookup(frenchNumber('0600000009'), deadline())).toEqual(expected);
    expect(server.received.map((request) => request.url?.split('?')[0])).toEqual([
      '/basic/num/0600000004',
      '/num/0600000004',
      '/basic/num/0600000009',
    ]);
  });
});
