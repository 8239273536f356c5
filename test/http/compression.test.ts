// Compression of the answers that are not API answers, over real HTTP on loopback (undici's
// request, which leaves bodies as sent): /openapi.json, the docs (swagger-ui's page, its
// generated initializer and its static bundle) and /metrics on the API port and on its own
// port. Each compressed answer must decode to exactly the identity answer's bytes.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Registry, collectDefaultMetrics, Counter } from 'prom-client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESSION_THRESHOLD_BYTES } from '../../src/http/encoding.js';
import { startMetricsServer, type MetricsServer } from '../../src/http/plugins/metrics.js';
import { expectDocumentedAnswer } from '../support/contracts.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function get(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' = 'GET',
): Promise<RawAnswer> {
  const response = await request(`${baseUrl}${path}`, { method, headers });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: Buffer.from(await response.body.arrayBuffer()),
  };
}

const header = (answer: RawAnswer, name: string): string | undefined => {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

const DECODERS = { br: brotliDecompressSync, gzip: gunzipSync } as const;

/** The identity answer, then the br and gzip answers decoded to it, each with Vary and the coding. */
async function expectCompressedLikeIdentity(
  baseUrl: string,
  path: string,
  codings: readonly ('br' | 'gzip')[] = ['br', 'gzip'],
): Promise<RawAnswer> {
  const identity = await get(baseUrl, path);
  expect(identity.status).toBe(200);
  expect(header(identity, 'content-encoding')).toBeUndefined();
  expect(header(identity, 'vary')).toContain('Accept-Encoding');
  for (const coding of codings) {
    const compressed = await get(baseUrl, path, { 'accept-encoding': coding });
    expect(compressed.status, `${path} in ${coding}`).toBe(200);
    expect(header(compressed, 'content-encoding'), `${path} in ${coding}`).toBe(coding);
    expect(header(compressed, 'vary')).toContain('Accept-Encoding');
    expect(header(compressed, 'content-type')).toBe(header(identity, 'content-type'));
    expect(Number(header(compressed, 'content-length'))).toBe(compressed.body.length);
    expect(compressed.body.length).toBeLessThan(identity.body.length);
    expect(
      DECODERS[coding](compressed.body).equals(identity.body),
      `${path} in ${coding} decodes to the identity bytes`,
    ).toBe(true);
  }
  return identity;
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { MAX_EVENT_LOOP_DELAY_MS: '0', LOG_LEVEL: 'silent' } });
});
afterAll(async () => {
  await server?.close();
});

describe('/openapi.json compressed', () => {
  it('decodes from br and gzip to the identity document, with Vary and Content-Encoding as documented', async () => {
    const identity = await expectCompressedLikeIdentity(server.baseUrl, '/openapi.json');
    expect((JSON.parse(identity.body.toString('utf8')) as { openapi: string }).openapi).toBe('3.1.0');
    for (const acceptEncoding of [undefined, 'br', 'gzip']) {
      const answer = await get(
        server.baseUrl,
        '/openapi.json',
        acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
      );
      await expectDocumentedAnswer(server.app, {
        method: 'GET',
        path: '/openapi.json',
        status: answer.status,
        contentType: header(answer, 'content-type'),
        body: identity.body.toString('utf8'),
        headers: answer.headers,
      });
    }
  });

  it('answers identity to identity, br;q=0 alone and a coding it does not make', async () => {
    for (const acceptEncoding of ['identity', 'br;q=0', 'deflate']) {
      const answer = await get(server.baseUrl, '/openapi.json', { 'accept-encoding': acceptEncoding });
      expect(header(answer, 'content-encoding')).toBeUndefined();
      expect(header(answer, 'vary')).toBe('Accept-Encoding');
      expect((JSON.parse(answer.body.toString('utf8')) as { openapi: string }).openapi).toBe('3.1.0');
    }
  });

  it('gives HEAD the headers of the coding asked for and no body', async () => {
    const full = await get(server.baseUrl, '/openapi.json', { 'accept-encoding': 'br' });
    const head = await get(server.baseUrl, '/openapi.json', { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(header(head, 'content-encoding')).toBe('br');
    expect(header(head, 'content-length')).toBe(String(full.body.length));
    expect(head.body.length).toBe(0);
  });
});

describe('the docs compressed', () => {
  it("sends swagger-ui's bundle, styles and generated initializer in br and gzip, decoding to the identity bytes", async () => {
    for (const path of [
      '/docs/static/swagger-ui-bundle.js',
      '/docs/static/swagger-ui.css',
      '/docs/static/swagger-ui-standalone-preset.js',
      '/docs/static/swagger-initializer.js',
      '/docs/json',
    ]) {
      await expectCompressedLikeIdentity(server.baseUrl, path);
    }
  });

  it('drops the byte ranges of a static file it sends compressed, and still answers a range in identity', async () => {
    const compressed = await get(server.baseUrl, '/docs/static/swagger-ui.css', { 'accept-encoding': 'br' });
    expect(header(compressed, 'accept-ranges')).toBeUndefined();
    const range = await get(server.baseUrl, '/docs/static/swagger-ui.css', {
      'accept-encoding': 'br',
      range: 'bytes=0-99',
    });
    expect(range.status).toBe(206);
    expect(header(range, 'content-encoding')).toBeUndefined();
    expect(range.body.length).toBe(100);
  });

  it('keeps a body under the threshold uncompressed, with Vary, and leaves images as they are', async () => {
    const page = await get(server.baseUrl, '/docs', { 'accept-encoding': 'br, gzip' });
    expect(page.status).toBe(200);
    expect(page.body.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(header(page, 'content-encoding')).toBeUndefined();
    expect(header(page, 'vary')).toBe('Accept-Encoding');
    expect(page.body.toString('utf8')).toContain('swagger-ui-bundle.js');

    const smallFile = await get(server.baseUrl, '/docs/static/index.css', { 'accept-encoding': 'br' });
    expect(smallFile.body.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(header(smallFile, 'content-encoding')).toBeUndefined();
    expect(header(smallFile, 'vary')).toBe('Accept-Encoding');

    const image = await get(server.baseUrl, '/docs/static/favicon-32x32.png', { 'accept-encoding': 'br' });
    expect(image.status).toBe(200);
    expect(header(image, 'content-encoding')).toBeUndefined();
    expect(image.body.subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('answers a revalidation of a static file with 304, as before', async () => {
    const first = await get(server.baseUrl, '/docs/static/swagger-ui.css', { 'accept-encoding': 'gzip' });
    const etag = header(first, 'etag');
    expect(etag).toBeDefined();
    const again = await get(server.baseUrl, '/docs/static/swagger-ui.css', {
      'accept-encoding': 'gzip',
      'if-none-match': etag ?? '',
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });
});

describe('/metrics compressed', () => {
  it('gzips the scrape on the API port for a scraper that accepts gzip, and sends it as it is otherwise', async () => {
    const gzipped = await get(server.baseUrl, '/metrics', { 'accept-encoding': 'gzip' });
    expect(gzipped.status).toBe(200);
    expect(header(gzipped, 'content-encoding')).toBe('gzip');
    expect(header(gzipped, 'vary')).toBe('Accept-Encoding');
    expect(Number(header(gzipped, 'content-length'))).toBe(gzipped.body.length);
    const text = gunzipSync(gzipped.body).toString('utf8');
    expect(text).toContain('# TYPE phone_rep_http_requests_total counter');

    const plain = await get(server.baseUrl, '/metrics');
    expect(header(plain, 'content-encoding')).toBeUndefined();
    expect(header(plain, 'vary')).toBe('Accept-Encoding');
    expect(plain.body.toString('utf8')).toContain('# TYPE phone_rep_http_requests_total counter');
    // Brotli only: the scrape is made per request and gzip is all this route makes.
    expect(
      header(await get(server.baseUrl, '/metrics', { 'accept-encoding': 'br' }), 'content-encoding'),
    ).toBeUndefined();
  });

  describe('on METRICS_PORT', () => {
    const registry = new Registry();
    let metricsServer: MetricsServer;
    let baseUrl: string;
    let tiny: MetricsServer;

    beforeAll(async () => {
      collectDefaultMetrics({ register: registry });
      metricsServer = await startMetricsServer({ registry, port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${String(metricsServer.port)}`;
      const tinyRegistry = new Registry();
      new Counter({ name: 'tiny_total', help: 'A counter.', registers: [tinyRegistry] }).inc();
      tiny = await startMetricsServer({ registry: tinyRegistry, port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await metricsServer?.close();
      await tiny?.close();
    });

    it('gzips a scrape over the threshold, with Vary and the compressed length', async () => {
      const gzipped = await get(baseUrl, '/metrics', { 'accept-encoding': 'gzip' });
      expect(gzipped.status).toBe(200);
      expect(header(gzipped, 'content-encoding')).toBe('gzip');
      expect(header(gzipped, 'vary')).toBe('Accept-Encoding');
      expect(Number(header(gzipped, 'content-length'))).toBe(gzipped.body.length);
      const text = gunzipSync(gzipped.body).toString('utf8');
      expect(text.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
      expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
      const plain = await get(baseUrl, '/metrics');
      expect(header(plain, 'content-encoding')).toBeUndefined();
      expect(plain.body.toString('utf8')).toContain('# TYPE process_cpu_user_seconds_total counter');
    });

    it('sends a scrape under the threshold as it is, still with Vary', async () => {
      const answer = await get(`http://127.0.0.1:${String(tiny.port)}`, '/metrics', { 'accept-encoding': 'gzip' });
      expect(answer.status).toBe(200);
      expect(header(answer, 'content-encoding')).toBeUndefined();
      expect(header(answer, 'vary')).toBe('Accept-Encoding');
      expect(answer.body.toString('utf8')).toContain('tiny_total 1');
    });
  });
});
