// The contract suite: every rule of docs/api.md (routes, errors, rate limiting), and the API decisions of
// docs/api.md, checked with real HTTP requests against the real app (fake sources).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources, SAMPLE_DATA, type FakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { insideLegalHoursClock } from '../../harness/legal-hours.js';
import { fetchDocumented } from '../support/contracts.js';
import { INVALID_NUMBER_DETAILS } from '../../src/http/errors.js';
import { createMemoryRateLimitStore } from '../../src/infra/rate-limit/rate-limit-store.js';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

// Every answer is also held to the published OpenAPI document.
async function get(server: TestServer, path: string, init: RequestInit = {}): Promise<Answer> {
  const { status, headers, text } = await fetchDocumented(server, path, init);
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  return { status, headers, body, text };
}

function expectProblem(answer: Answer, status: number, message: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const { body } = answer;
  expect(body.title).toBe(message);
  expect(body.error).toBe(message);
  expect(body.success).toBe(false);
  expect(body.status).toBe(status);
  expect(typeof body.type).toBe('string');
  expect(typeof body.requestId).toBe('string');
  expect(body.requestId).toBe(answer.headers.get('x-request-id'));
  const allowed = new Set([
    'type',
    'title',
    'status',
    'detail',
    'requestId',
    'success',
    'error',
    'code',
    'number',
    'phoneInfo',
    'sources',
    'meta',
  ]);
  for (const key of Object.keys(body)) expect(allowed.has(key)).toBe(true);
  expect(answer.text).not.toMatch(/at .*\.(ts|js):\d+/); // no stack trace
}

const sortedKeys = (value: unknown): string[] => Object.keys(value as object).sort();

describe('contract: phone endpoints with every source answering', () => {
  let server: TestServer;
  let sources: FakeSources;
  beforeAll(async () => {
    sources = healthyFakeSources();
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources } });
  });
  afterAll(async () => server.close());

  it('answers the full report in the envelope with exactly the members docs/api.md lists', async () => {
    const answer = await get(server, '/api/phone/0612345678');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(sortedKeys(answer.body)).toEqual(['data', 'meta', 'success']);
    expect(answer.body.success).toBe(true);
    const data = answer.body.data as Record<string, Record<string, unknown>>;
    expect(sortedKeys(data)).toEqual(['number', 'phoneInfo', 'sources']);
    expect(data.number).toBe('0612345678');
    expect(sortedKeys(data.phoneInfo)).toEqual([
      'e164',
      'isNPV',
      'national',
      'originalCarrier',
      'rangeLabel',
      'region',
      'type',
    ]);
    expect(data.phoneInfo).toMatchObject({
      national: '06 12 34 56 78',
      e164: '+33612345678',
      type: 'mobile',
      isNPV: false,
    });
    const reported = data.sources as unknown as typeof SAMPLE_DATA;
    expect(sortedKeys(reported)).toEqual(['community', 'primary', 'signals']);
    expect(reported).toEqual(SAMPLE_DATA);
    expect(sortedKeys(reported.primary)).toHaveLength(4);
    expect(sortedKeys(reported.community)).toHaveLength(6);
    expect(sortedKeys(reported.signals)).toHaveLength(4);
    const meta = answer.body.meta as { sources: Record<string, Record<string, unknown>> };
    for (const slot of ['primary', 'community', 'signals']) {
      expect(meta.sources[slot]).toMatchObject({ status: 'ok', cache: expect.stringMatching(/^(hit|miss)$/) });
      expect(Date.parse(String(meta.sources[slot]?.fetchedAt))).not.toBeNaN();
    }
  });

  it('answers the score result with number, score and risk (rule 5) and says where the score came from', async () => {
    const answer = await get(server, '/api/phone/0612345678/score');
    expect(answer.status).toBe(200);
    expect(sortedKeys(answer.body)).toEqual(['data', 'meta', 'success']);
    expect(answer.body.data).toEqual({ number: '0612345678', score: 8, risk: 'suspicious' });
    expect((answer.body.meta as Record<string, unknown>).scoreSource).toBe('primary');
  });

  it.each([
    ['06 12 34 56 78', '0612345678'],
    ['06.12.34.56.78', '0612345678'],
    ['06-12-34-56-78', '0612345678'],
    ['(06) 12 34 56 78', '0612345678'],
    ['+33612345678', '0612345678'],
    ['+33 6 12 34 56 78', '0612345678'],
    ['0033612345678', '0612345678'],
    ['+32470123456', '+32470123456'],
    ['0032 470 12 34 56', '+32470123456'],
    ['+262692123456', '0692123456'],
  ])('normalises the spelling %s to %s (rule 4)', async (spelling, normalised) => {
    const answer = await get(server, `/api/phone/${encodeURIComponent(spelling)}`);
    expect(answer.status).toBe(200);
    expect((answer.body.data as { number: string }).number).toBe(normalised);
  });

  it('accepts a literal + in the path', async () => {
    const answer = await get(server, '/api/phone/+33612345678/score');
    expect(answer.status).toBe(200);
    expect((answer.body.data as { number: string }).number).toBe('0612345678');
  });

  it.each([
    ['letters', '06123abc78'],
    ['a letter at the end', '0612345678a'],
    ['full-width digits', encodeURIComponent('０６１２３４５６７８')],
    ['Arabic-Indic digits', encodeURIComponent('٠٦١٢٣٤٥٦٧٨')],
    ['a control character', '0612%0A345678'],
    ['more than 32 characters', '0'.repeat(33)],
    ['an empty number after decoding', '%20'],
    ['a stray character', '06_12_34_56_78'],
    ['too short', '061234'],
    ['an invalid number of the right length', '0012345678'],
    ['malformed percent-encoding', '06%ZZ345678'],
  ])('answers 400 "Invalid phone number format" for %s (rule 1)', async (_label, segment) => {
    expectProblem(await get(server, `/api/phone/${segment}`), 400, 'Invalid phone number format');
    expectProblem(await get(server, `/api/phone/${segment}/score`), 400, 'Invalid phone number format');
  });

  it('does not call any source for an invalid number', async () => {
    const before = sources.primary.calls + sources.community.calls + sources.signals.calls;
    await get(server, '/api/phone/not-a-number');
    expect(sources.primary.calls + sources.community.calls + sources.signals.calls).toBe(before);
  });

  it.each(['/api/phone', '/api/phone/0612345678/other', '/api', '/nothing-here', '/api/phone/0612345678/score/x'])(
    'answers 404 "Route not found" for %s (rule 2)',
    async (path) => {
      expectProblem(await get(server, path), 404, 'Route not found');
    },
  );

  it('answers HEAD wherever GET exists, with headers and no body', async () => {
    for (const path of [
      '/api/phone/0612345678',
      '/api/phone/0612345678/score',
      '/api/phone/0612345678/info',
      '/health',
    ]) {
      const answer = await fetchDocumented(server, path, { method: 'HEAD' });
      expect(answer.status).toBe(200);
      expect(answer.text).toBe('');
    }
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers %s on a known path with 405 and Allow', async (method) => {
    const answer = await get(server, '/api/phone/0612345678', { method });
    expectProblem(answer, 405, 'Method not allowed');
    expect(answer.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('lets any web page call the API (CORS) and answers a preflight with 204', async () => {
    const answer = await get(server, '/api/phone/0612345678/score', { headers: { origin: 'https://example.org' } });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')).toContain('Retry-After');
    const preflight = await fetch(`${server.baseUrl}/api/phone/0612345678`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
  });

  it('sends the CORS headers only to a request with Origin, and tells caches that answers depend on it', async () => {
    for (const path of [
      '/api/phone/0612345678',
      '/api/phone/0612345678/score',
      '/api/phone/0612345678/info',
      '/api/phone/0612345678/verdict',
    ]) {
      // Twice: the second answer comes from the front cache.
      for (const round of [1, 2]) {
        const plain = await fetch(`${server.baseUrl}${path}`);
        await plain.arrayBuffer();
        expect(plain.status, `${path} #${round}`).toBe(200);
        expect(plain.headers.get('access-control-allow-origin'), `${path} #${round}`).toBeNull();
        expect(plain.headers.get('access-control-expose-headers'), `${path} #${round}`).toBeNull();
        expect(plain.headers.get('vary'), `${path} #${round}`).toBe('Accept-Encoding, Origin');
        const fromPage = await fetch(`${server.baseUrl}${path}`, { headers: { origin: 'https://crm.example.org' } });
        await fromPage.arrayBuffer();
        expect(fromPage.headers.get('access-control-allow-origin'), `${path} #${round}`).toBe('*');
        expect(fromPage.headers.get('access-control-expose-headers'), `${path} #${round}`).toContain('X-Request-Id');
        expect(fromPage.headers.get('vary'), `${path} #${round}`).toBe('Accept-Encoding, Origin');
      }
    }
    // Answers no cache keeps (problems, /health: no-store) need no Vary; they still carry CORS for a page.
    const problem = await fetch(`${server.baseUrl}/api/phone/12ab`, { headers: { origin: 'https://crm.example.org' } });
    await problem.arrayBuffer();
    expect(problem.status).toBe(400);
    expect(problem.headers.get('cache-control')).toBe('no-store');
    expect(problem.headers.get('access-control-allow-origin')).toBe('*');
    const health = await fetch(`${server.baseUrl}/health`);
    await health.arrayBuffer();
    expect(health.headers.get('cache-control')).toBe('no-store');
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers /health without envelope: status ok, uptime in seconds, ISO timestamp (rule 6)', async () => {
    const answer = await get(server, '/health');
    expect(answer.status).toBe(200);
    expect(sortedKeys(answer.body)).toEqual(['status', 'timestamp', 'uptime', 'version']);
    expect(answer.body.status).toBe('ok');
    expect(answer.body.version).toBe(
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
    );
    expect(typeof answer.body.uptime).toBe('number');
    expect(answer.body.uptime as number).toBeGreaterThanOrEqual(0);
    expect(answer.body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('publishes an OpenAPI 3.1 document listing every operation and its error answers, readable from any origin', async () => {
    const answer = await get(server, '/openapi.json', { headers: { origin: 'https://tools.example.org' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.body.openapi).toBe('3.1.0');
    const paths = answer.body.paths as Record<
      string,
      Record<string, { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> }>
    >;
    // The spec's routes, the number's facts, the operator's endpoints and the reporters' (not in
    // the spec; documented all the same).
    expect(Object.keys(paths).sort()).toEqual([
      '/api/phone/{number}',
      '/api/phone/{number}/cid',
      '/api/phone/{number}/info',
      '/api/phone/{number}/score',
      '/api/phone/{number}/verdict',
      '/api/rate',
      '/api/report',
      '/api/test',
      '/health',
      '/health/ready',
      '/openapi.json',
    ]);
    expect(Object.keys(paths['/api/phone/{number}']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '304',
      '400',
      '404',
      '405',
      '429',
      '502',
      '503',
    ]);
    expect(Object.keys(paths['/api/phone/{number}/info']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '304',
      '400',
      '404',
      '405',
      '429',
      '503',
    ]);
    for (const [path, item] of Object.entries(paths)) {
      // The report routes are POST (/api/report, /api/rate); everything else GET.
      const operation = item.get ?? item.post;
      expect(operation?.operationId, path).toMatch(item.get === undefined ? /^post[A-Z]/ : /^get[A-Z]/);
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        if (Number(status) >= 400)
          expect(Object.keys(response.content ?? {}), `${path} ${status}`).toContain('application/problem+json');
      }
    }
    const docs = await fetch(`${server.baseUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
  });

  it('echoes a plain X-Request-Id and replaces a hostile one', async () => {
    const kept = await get(server, '/nothing', { headers: { 'x-request-id': 'abc-123' } });
    expect(kept.body.requestId).toBe('abc-123');
    const replaced = await get(server, '/nothing', { headers: { 'x-request-id': '<script>' + 'x'.repeat(100) } });
    expect(replaced.body.requestId).not.toContain('<');
  });

  it('answers a request with a malformed header line with 400 in the problem shape', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write('GET /health HTTP/1.1\r\nHost: x\r\nBad Header: \u0001\r\n\r\n');
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect(raw).toContain('application/problem+json');
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 400, success: false, error: 'Bad request' });
  });

  it('answers an over-long URL with 400 in the problem shape', async () => {
    expectProblem(await get(server, `/api/phone/0612345678?${'a'.repeat(3000)}`), 400, 'Bad request');
    expectProblem(await get(server, `/api/phone/${'1'.repeat(600)}`), 400, 'Invalid phone number format');
  });
});

describe('contract: upstream failures (rule 3)', () => {
  let server: TestServer;
  let sources: FakeSources;
  beforeAll(async () => {
    sources = healthyFakeSources();
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources } });
  });
  afterAll(async () => server.close());
  afterEach(() => {
    const healthy = healthyFakeSources();
    sources.primary.respond = healthy.primary.respond;
    sources.community.respond = healthy.community.respond;
    sources.signals.respond = healthy.signals.respond;
  });

  it('answers 502 "All data sources failed" listing each source outcome when every source fails', async () => {
    sources.primary.respond = () => ({ status: 'error', reason: 'timeout' });
    sources.community.respond = () => ({ status: 'blocked', reason: 'http_429' });
    sources.signals.respond = () => ({ status: 'error', reason: 'connection' });
    for (const path of ['/api/phone/0698765432', '/api/phone/0698765432/score']) {
      const answer = await get(server, path);
      expectProblem(answer, 502, 'All data sources failed');
      expect(answer.body.sources).toEqual({ primary: 'timeout', community: 'http_429', signals: 'connection' });
    }
  });

  it('answers 200 with empty sources when every source says it does not know the number', async () => {
    sources.primary.respond = () => ({ status: 'not_found' });
    sources.community.respond = () => ({ status: 'not_found' });
    sources.signals.respond = () => ({ status: 'not_found' });
    const answer = await get(server, '/api/phone/0698765431');
    expect(answer.status).toBe(200);
    const data = answer.body.data as { sources: typeof SAMPLE_DATA };
    expect(data.sources.primary).toEqual({ score: null, searches: 0, commentsCount: 0, commentList: [] });
    expect(data.sources.signals).toEqual({ spamScore: null, reportsCount: null, callerType: '', commentList: [] });
    const score = await get(server, '/api/phone/0698765431/score');
    expect(score.body.data).toEqual({ number: '0698765431', score: null, risk: 'unknown' });
  });

  it('answers 200 with the failed slot emptied and explained in meta when one source fails', async () => {
    sources.community.respond = () => ({ status: 'error', reason: 'parse' });
    const answer = await get(server, '/api/phone/0698765430');
    expect(answer.status).toBe(200);
    const data = answer.body.data as { sources: typeof SAMPLE_DATA };
    expect(data.sources.community).toEqual({
      dangerPercent: null,
      visits: null,
      commentsCount: 0,
      topCategory: '',
      lastCommentDate: '',
      commentList: [],
    });
    expect(data.sources.primary).toEqual(SAMPLE_DATA.primary);
    const meta = answer.body.meta as { sources: Record<string, Record<string, unknown>> };
    expect(meta.sources.community).toMatchObject({ status: 'error', reason: 'parse', cache: 'miss' });
  });

  it.each([
    [1, 'trustworthy'],
    [4, 'trustworthy'],
    [5, 'neutral'],
    [6, 'suspicious'],
    [9, 'suspicious'],
  ])('maps a primary score of %i to %s', async (score, risk) => {
    sources.primary.respond = () => ({ status: 'ok', data: { ...SAMPLE_DATA.primary, score } });
    const answer = await get(server, `/api/phone/069876540${score}/score`);
    expect(answer.body.data).toMatchObject({ score, risk });
  });
});

describe('contract: rate limiting (docs/api.md)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '30', RATE_LIMIT_WINDOW_S: '60' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(async () => server.close());

  it('lets 30 requests through, answers the 31st with 429, Retry-After and RateLimit headers', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 30; i += 1) answers.push(await get(server, '/api/phone/0612345678/score'));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(30).fill(200));
    expect(answers[0]?.headers.get('ratelimit-policy')).toBe('"default";q=30;w=60');
    expect(answers[0]?.headers.get('ratelimit')).toMatch(/^"default";r=29;t=\d+$/);
    expect(answers[29]?.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    const refused = await get(server, '/api/phone/0612345678');
    expectProblem(refused, 429, 'Too many requests');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=30;w=60');
  });

  it('counts 404 answers and refuses them too once the limit is reached', async () => {
    expectProblem(await get(server, '/no-such-route'), 429, 'Too many requests');
  });

  it('never limits /health or /openapi.json', async () => {
    for (let i = 0; i < 5; i += 1) {
      expect((await get(server, '/health')).status).toBe(200);
      expect((await get(server, '/openapi.json')).status).toBe(200);
    }
  });

  it('does not let a forged X-Forwarded-For escape the limit when no proxy is trusted', async () => {
    const answer = await get(server, '/api/phone/0612345678', { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(answer.status).toBe(429);
  });
});

describe('contract: rate limit window slides and trusted proxies', () => {
  it('recovers the count as the window slides', async () => {
    // The limiter's clock is the test's: the window slides when the test moves it.
    let nowMs = Date.parse('2026-03-01T12:00:00Z');
    const rateLimitStore = createMemoryRateLimitStore({ now: () => nowMs });
    const server = await startTestServer({
      env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '1' },
      overrides: { sources: healthyFakeSources(), rateLimitStore },
    });
    try {
      for (let i = 0; i < 3; i += 1) expect((await get(server, '/api/phone/0612345678/score')).status).toBe(200);
      expect((await get(server, '/api/phone/0612345678/score')).status).toBe(429);
      nowMs += 999;
      expect((await get(server, '/api/phone/0612345678/score')).status).toBe(429);
      nowMs += 1;
      expect((await get(server, '/api/phone/0612345678/score')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('counts each client behind a trusted proxy separately, by its X-Forwarded-For address', async () => {
    const server = await startTestServer({
      env: { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '60', TRUST_PROXY: '127.0.0.1' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const as = (address: string) =>
        get(server, '/api/phone/0612345678/score', { headers: { 'x-forwarded-for': address } });
      expect((await as('198.51.100.1')).status).toBe(200);
      expect((await as('198.51.100.1')).status).toBe(200);
      expect((await as('198.51.100.1')).status).toBe(429);
      expect((await as('198.51.100.2')).status).toBe(200);
      // A client cannot prepend a forged hop: the proxy's own view (the last hop) is used.
      expect((await as('203.0.113.9, 198.51.100.1')).status).toBe(429);
      // Two addresses of one IPv6 /64 share a bucket.
      expect((await as('2001:db8:1:2::1')).status).toBe(200);
      expect((await as('2001:db8:1:2::2')).status).toBe(200);
      expect((await as('2001:db8:1:2::3')).status).toBe(429);
    } finally {
      await server.close();
    }
  });
});

describe('contract: a refused number says why, in a sentence for people and a code for programs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
  });
  afterAll(async () => server.close());

  it.each([
    ['invalid_character', '06123abc78'],
    ['misplaced_separator', '06..12.34.56.78'],
    ['too_long', '0'.repeat(33)],
    ['no_digits', '%2B'],
    ['invalid_number', '0012345678'],
  ] as const)('answers %s with its code and its sentence as detail', async (code, segment) => {
    for (const path of [`/api/phone/${segment}`, `/api/phone/${segment}/score`, `/api/phone/${segment}/info`]) {
      const answer = await get(server, path);
      expectProblem(answer, 400, 'Invalid phone number format');
      expect(answer.body.code).toBe(code);
      expect(answer.body.detail).toBe(INVALID_NUMBER_DETAILS[code]);
    }
  });

  it('gives every reason code a distinct sentence that names no code', () => {
    const sentences = Object.values(INVALID_NUMBER_DETAILS);
    expect(new Set(sentences).size).toBe(sentences.length);
    for (const sentence of sentences) expect(sentence).toMatch(/^[A-Z][^_]+\.$/);
  });
});

describe('contract: the number speaks when the sources are silent', () => {
  let server: TestServer;
  let sources: FakeSources;
  const sourceCalls = () => sources.primary.calls + sources.community.calls + sources.signals.calls;
  beforeAll(async () => {
    sources = healthyFakeSources();
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '0' },
      overrides: { sources, now: insideLegalHoursClock() },
    });
  });
  afterAll(async () => server.close());

  it('answers a 502 that carries the number and the same phoneInfo as the full report', async () => {
    const report = await get(server, '/api/phone/0162123456');
    expect(report.status).toBe(200);
    const reported = report.body.data as { number: string; phoneInfo: Record<string, unknown> };
    expect(reported.phoneInfo.isNPV).toBe(true);

    const failing = healthyFakeSources();
    failing.primary.respond = () => ({ status: 'error', reason: 'timeout' });
    failing.community.respond = () => ({ status: 'error', reason: 'connection' });
    failing.signals.respond = () => ({ status: 'blocked', reason: 'http_403' });
    const silent = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: failing } });
    try {
      for (const path of ['/api/phone/01%2062%2012%2034%2056', '/api/phone/0162123456/score']) {
        const answer = await get(silent, path);
        expectProblem(answer, 502, 'All data sources failed');
        expect(answer.body.number).toBe(reported.number);
        expect(answer.body.phoneInfo).toEqual(reported.phoneInfo);
        expect(answer.body.sources).toEqual({ primary: 'timeout', community: 'connection', signals: 'http_403' });
      }
    } finally {
      await silent.close();
    }
  });

  it('answers /info with the number and its facts and calls no source', async () => {
    const before = sourceCalls();
    const answer = await get(server, '/api/phone/+33%20162%2012%2034%2056/info');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      data: { number: '0162123456', phoneInfo: expect.objectContaining({ isNPV: true, e164: '+33162123456' }) },
    });
    expect((await get(server, '/api/phone/0612345678/info')).status).toBe(200);
    expect(sourceCalls()).toBe(before);
  });

  it.each([
    ['an NPV number', '0162123456', ['npv']],
    ['a technical-platform number', '0937123456', ['technical_platform']],
    ['an ordinary mobile', '0612345678', []],
  ])('puts meta.hints on the full report and the score of %s', async (_label, number, hints) => {
    for (const path of [`/api/phone/${number}`, `/api/phone/${number}/score`]) {
      const answer = await get(server, path);
      expect(answer.status).toBe(200);
      expect((answer.body.meta as { hints: unknown }).hints).toEqual(hints);
    }
  });
});

describe('contract: /info is a phone route like the others', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_S: '60' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(async () => server.close());

  it('answers 400, 404 and 405 as the other phone routes do, counts them, and then answers 429', async () => {
    const invalid = await get(server, '/api/phone/06123abc78/info');
    expectProblem(invalid, 400, 'Invalid phone number format');
    expect(invalid.headers.get('ratelimit')).toMatch(/^"default";r=3;t=\d+$/);
    expectProblem(await get(server, '/api/phone/0612345678/info/more'), 404, 'Route not found');
    const post = await get(server, '/api/phone/0612345678/info', { method: 'POST' });
    expectProblem(post, 405, 'Method not allowed');
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await get(server, '/api/phone/0612345678/info')).status).toBe(200);
    const refused = await get(server, '/api/phone/0612345678/info');
    expectProblem(refused, 429, 'Too many requests');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectProblem(await get(server, '/api/phone/0612345678'), 429, 'Too many requests');
  });
});
