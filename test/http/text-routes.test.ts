// The plain-text representations phone systems read (`/verdict`, `/cid`), through the real
// server over HTTP with the real adapters against fake upstream sites on loopback (the tellows
// partner API, numeroinconnu and telguarder in their documented formats). Each answer: its
// exact body, content type and headers, and held to the published OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KNOWN_NUMBER,
  UNKNOWN_NUMBER,
  startFakeUpstreamSites,
  type FakeUpstreamSites,
  type Scenario,
} from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { insideLegalHoursClock } from '../../harness/legal-hours.js';
import { fetchDocumented } from '../support/contracts.js';

interface TextAnswer {
  status: number;
  body: string;
  headers: Headers;
}

async function getText(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<TextAnswer> {
  const answer = await fetchDocumented(server, path, { headers });
  return { status: answer.status, body: answer.text, headers: answer.headers };
}

const ALL_DOWN: Scenario = { tellowsApi: { status: 500 }, numeroinconnu: { status: 500 }, telguarder: { status: 500 } };

// What each number's sources say (with a tellows key: the partner API).
const SUSPICIOUS = '0612345678'; // tellows 8, comments "Démarchage" and "Arnaque"
const SUSPICIOUS_7 = '0612345607'; // tellows 7, no comment
const NEUTRAL = '0612345605'; // tellows searched but unrated; numeroinconnu 48 % → derived 5
const TRUSTWORTHY = '0612345603'; // tellows 3
const NPV = '0162005678'; // an NPV range; no source knows it
const NPV_SUSPICIOUS = '0162005679'; // an NPV range with a tellows 8
const NOT_FOUND = '0612345600'; // no source knows it
const FAILING = '0612345699'; // every source answers 500
const NPV_FAILING = '0162005699';

describe('the text routes (/verdict, /cid)', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({
      scenarios: {
        [SUSPICIOUS]: KNOWN_NUMBER,
        [SUSPICIOUS_7]: { ...UNKNOWN_NUMBER, tellowsApi: { fixture: 'api-missing-lists.json' } },
        [NEUTRAL]: {
          ...UNKNOWN_NUMBER,
          tellowsApi: { fixture: 'api-searched-unrated.json' },
          numeroinconnu: { fixture: 'normal.html' },
        },
        [TRUSTWORTHY]: { ...UNKNOWN_NUMBER, tellowsApi: { fixture: 'api-single-object-lists.json' } },
        [NPV_SUSPICIOUS]: { ...UNKNOWN_NUMBER, tellowsApi: { fixture: 'api-normal.json' } },
        [FAILING]: ALL_DOWN,
        [NPV_FAILING]: ALL_DOWN,
      },
    });
    server = await startTestServer({
      env: {
        ...sites.env(),
        TELLOWS_API_KEY: 'test-partner-key',
        RATE_LIMIT_MAX: '0',
        SOURCE_TIMEOUT_MS: '2000',
        LOOKUP_TIMEOUT_MS: '3000',
      },
      overrides: { now: insideLegalHoursClock() },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  function expectText(answer: TextAnswer, body: string, score: string, risk: string): void {
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(body);
    expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(answer.headers.get('x-reputation-score')).toBe(score);
    expect(answer.headers.get('x-reputation-risk')).toBe(risk);
    expect(answer.headers.get('vary')).toBe('Accept-Encoding, Origin');
  }

  it.each([
    [
      'a suspicious number (score 8)',
      SUSPICIOUS,
      'block\n',
      'SPAM? 8/9 Démarchage',
      'SPAM? 8/9 Démarchage',
      '8',
      'suspicious',
    ],
    ['a suspicious number (score 7)', SUSPICIOUS_7, 'block\n', 'SPAM? 7/9', 'SPAM? 7/9', '7', 'suspicious'],
    ['a neutral number (derived 5)', NEUTRAL, 'warn\n', 'Neutre 5/9', 'Neutral 5/9', '5', 'neutral'],
    ['a trustworthy number (score 3)', TRUSTWORTHY, 'allow\n', 'Fiable 3/9', 'Trusted 3/9', '3', 'trustworthy'],
    [
      'an NPV number no source knows',
      NPV,
      'warn\n',
      'Appel automatisé (NPV)',
      'Automated call (NPV)',
      'none',
      'unknown',
    ],
    [
      'an NPV number with a score of 8',
      NPV_SUSPICIOUS,
      'block\n',
      'SPAM? 8/9 Démarchage',
      'SPAM? 8/9 Démarchage',
      '8',
      'suspicious',
    ],
    // The sources answered, none with a score; never "Inconnu", a French phone's word for a withheld caller.
    ['a number no source knows', NOT_FOUND, 'unknown\n', 'Pas de note', 'No score', 'none', 'unknown'],
    // The service could not check: distinct from a withheld caller and from a number without a score.
    ['a number every source fails on', FAILING, 'unknown\n', 'Non vérifié', 'Not checked', 'none', 'unknown'],
    [
      'an NPV number every source fails on',
      NPV_FAILING,
      'warn\n',
      'Appel automatisé (NPV)',
      'Automated call (NPV)',
      'none',
      'unknown',
    ],
  ])('%s', async (_label, number, verdict, cidFr, cidEn, score, risk) => {
    expectText(await getText(server, `/api/phone/${number}/verdict`), verdict, score, risk);
    expectText(await getText(server, `/api/phone/${number}/cid`), cidFr, score, risk);
    expectText(await getText(server, `/api/phone/${number}/cid?lang=en`), cidEn, score, risk);
  });

  it('answers a number every source fails on with 200 on the text routes and 502 on the JSON ones', async () => {
    expect((await getText(server, `/api/phone/${FAILING}/score`)).status).toBe(502);
    const verdict = await getText(server, `/api/phone/${FAILING}/verdict`);
    expect(verdict.headers.get('cache-control')).toBe('no-store');
  });

  it.each(['anonymous', 'Anonymous', 'RESTRICTED', 'unknown', 'unavailable', 'private', 'withheld'])(
    'follows VERDICT_WITHHELD for a withheld caller %s',
    async (word) => {
      expectText(await getText(server, `/api/phone/${word}/verdict`), 'allow\n', 'none', 'unknown');
      expectText(await getText(server, `/api/phone/${word}/cid`), 'Masqué', 'none', 'unknown');
      expectText(await getText(server, `/api/phone/${word}/cid?lang=en`), 'Withheld', 'none', 'unknown');
    },
  );

  it('answers a withheld caller on the JSON routes with 400 code withheld', async () => {
    const answer = await getText(server, '/api/phone/anonymous/score');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'withheld', title: 'Invalid phone number format' });
  });

  it.each(['0612', 'not-a-number', '06123abc78', '0012345678'])(
    'answers unknown for the invalid number %s, and asks no source',
    async (spelling) => {
      const before = sites.total();
      const verdict = await getText(server, `/api/phone/${spelling}/verdict`);
      expectText(verdict, 'unknown\n', 'none', 'unknown');
      expect(verdict.headers.get('cache-control')).toBe('no-store');
      expectText(await getText(server, `/api/phone/${spelling}/cid`), 'Numéro invalide', 'none', 'unknown');
      expectText(await getText(server, `/api/phone/${spelling}/cid?lang=en`), 'Invalid number', 'none', 'unknown');
      expect(sites.total()).toBe(before);
    },
  );

  it('gives an unknown ?lang French, and ignores a malformed ?wait on the text routes', async () => {
    expect((await getText(server, `/api/phone/${SUSPICIOUS}/cid?lang=de`)).body).toBe('SPAM? 8/9 Démarchage');
    expect((await getText(server, `/api/phone/${SUSPICIOUS}/verdict?wait=soon`)).body).toBe('block\n');
  });

  it('refuses a malformed ?wait on the JSON routes with 400 code invalid_wait', async () => {
    for (const path of [
      `/api/phone/${SUSPICIOUS}?wait=-1`,
      `/api/phone/${SUSPICIOUS}/score?wait=1.5`,
      `/api/phone/${SUSPICIOUS}/info?wait=soon`,
    ]) {
      const answer = await getText(server, path);
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.body), path).toMatchObject({ title: 'Bad request', code: 'invalid_wait' });
    }
  });

  it('lets pages on other origins read the reputation headers', async () => {
    const answer = await getText(server, `/api/phone/${SUSPICIOUS}/verdict`, {
      origin: 'https://pbx-admin.example.org',
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-expose-headers')).toContain('X-Reputation-Score');
    expect(answer.headers.get('access-control-expose-headers')).toContain('Preference-Applied');
  });

  it('answers Preference-Applied to Prefer: wait, clamped to LOOKUP_TIMEOUT_MS', async () => {
    expect(
      (await getText(server, `/api/phone/${SUSPICIOUS}/verdict`, { prefer: 'wait=2' })).headers.get(
        'preference-applied',
      ),
    ).toBe('wait=2');
    expect(
      (await getText(server, `/api/phone/${SUSPICIOUS}/score`, { prefer: 'respond-async, wait=100' })).headers.get(
        'preference-applied',
      ),
    ).toBe('wait=3');
    expect((await getText(server, `/api/phone/${SUSPICIOUS}/verdict`)).headers.get('preference-applied')).toBeNull();
  });
});

describe('the text routes, cached: front cache, ETag, 304 and compression', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({ scenarios: { [SUSPICIOUS]: KNOWN_NUMBER } });
    server = await startTestServer({
      env: { ...sites.env(), TELLOWS_API_KEY: 'test-partner-key', RATE_LIMIT_MAX: '0' },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it.each([
    ['/verdict', 'block\n'],
    ['/cid', 'SPAM? 8/9 Démarchage'],
    ['/cid?lang=en', 'SPAM? 8/9 Démarchage'],
  ])('serves %s of a fresh number from the front cache with an ETag, a max-age and a 304', async (suffix, body) => {
    const path = `/api/phone/${SUSPICIOUS}${suffix}`;
    await getText(server, path);
    const requests = sites.total();
    const cached = await getText(server, path, { 'accept-encoding': 'br, gzip' });
    expect(cached.body).toBe(body);
    expect(cached.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(cached.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    const etag = cached.headers.get('etag');
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    // Far below the compression threshold: sent as it is, still varying on Accept-Encoding.
    expect(cached.headers.get('content-encoding')).toBeNull();
    expect(cached.headers.get('vary')).toBe('Accept-Encoding, Origin');
    expect(cached.headers.get('x-reputation-score')).toBe('8');
    const notModified = await getText(server, path, { 'if-none-match': etag ?? '' });
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers.get('x-reputation-risk')).toBe('suspicious');
    expect(sites.total()).toBe(requests);
  });

  it('keeps one body per representation and language: the ETags differ', async () => {
    const tags = new Set<string | null>();
    for (const suffix of ['', '/score', '/verdict', '/cid', '/cid?lang=en']) {
      const answer = await getText(server, `/api/phone/${SUSPICIOUS}${suffix}`);
      expect(answer.status).toBe(200);
      tags.add(answer.headers.get('etag'));
    }
    // French and English lines are the same words here, so the same bytes and the same validator.
    expect(tags.size).toBe(4);
    expect(
      (await getText(server, `/api/phone/${SUSPICIOUS}`, { 'accept-encoding': 'gzip' })).headers.get('content-type'),
    ).toBe('application/json; charset=utf-8');
  });
});

describe('the text routes under the rate limit', () => {
  let server: TestServer;
  let sites: FakeUpstreamSites;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({ scenarios: { [SUSPICIOUS]: KNOWN_NUMBER } });
    server = await startTestServer({
      env: { ...sites.env(), TELLOWS_API_KEY: 'test-partner-key', RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '60' },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('answers a rate-limited client 429 in the problem shape, on /verdict and /cid too', async () => {
    const first = await getText(server, `/api/phone/${SUSPICIOUS}/verdict`);
    expect(first.body).toBe('block\n');
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=1;t=\d+$/);
    expect((await getText(server, `/api/phone/${SUSPICIOUS}/cid`)).status).toBe(200);
    for (const suffix of ['/verdict', '/cid', '/cid?lang=en']) {
      const refused = await getText(server, `/api/phone/${SUSPICIOUS}${suffix}`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(refused.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
      expect(JSON.parse(refused.body)).toMatchObject({ status: 429, title: 'Too many requests' });
    }
  });
});

describe('the text routes and a URL that cannot be decoded', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses malformed percent-encoding before the route, as a documented problem', async () => {
    for (const suffix of ['/verdict', '/cid']) {
      const answer = await getText(server, `/api/phone/06%ZZ345678${suffix}`);
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    }
  });
});

describe('the text routes with the operator’s own rule (VERDICT_*, CID_MAX_LENGTH)', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({
      scenarios: {
        [SUSPICIOUS]: KNOWN_NUMBER,
        [TRUSTWORTHY]: { ...UNKNOWN_NUMBER, tellowsApi: { fixture: 'api-single-object-lists.json' } },
      },
    });
    server = await startTestServer({
      env: {
        ...sites.env(),
        TELLOWS_API_KEY: 'test-partner-key',
        RATE_LIMIT_MAX: '0',
        VERDICT_BLOCK_SCORE: '9',
        VERDICT_WARN_SCORE: '8',
        VERDICT_NPV: 'block',
        VERDICT_WITHHELD: 'unknown',
        CID_MAX_LENGTH: '12',
      },
      overrides: { now: insideLegalHoursClock() },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('applies the thresholds, the NPV and withheld verdicts and the line length it was given', async () => {
    expect((await getText(server, `/api/phone/${SUSPICIOUS}/verdict`)).body).toBe('warn\n');
    expect((await getText(server, `/api/phone/${TRUSTWORTHY}/verdict`)).body).toBe('allow\n');
    expect((await getText(server, `/api/phone/${NPV}/verdict`)).body).toBe('block\n');
    expect((await getText(server, '/api/phone/anonymous/verdict')).body).toBe('unknown\n');
    expect((await getText(server, `/api/phone/${SUSPICIOUS}/cid`)).body).toBe('SPAM? 8/9 Dé');
    expect((await getText(server, `/api/phone/${NPV}/cid`)).body).toBe('Appel automa');
  });
});
