// Every problem answer, on every route, is the one the published OpenAPI document describes for
// that route and status (its body validated with ajv against /openapi.json, its headers too),
// and the text routes (`/verdict`, `/cid`) keep their always-200 promise for anything the router
// hands them: a number segment over the router's 512 characters, raw or once decoded, included.
// Only a URL refused before routing (over 2048 characters, too many header fields) keeps a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { contractOf, type OpenApiDocument } from '../support/contracts.js';

const NUMBER = '0612345678';
const TEXT_ROUTES = new Set(['/api/phone/{number}/verdict', '/api/phone/{number}/cid']);

interface ProblemCase {
  name: string;
  /** The request target for a route template (with `{number}`). */
  target(template: string): string;
  init?: RequestInit;
  /** Only for routes with a number. */
  phoneOnly?: boolean;
  /** What a text route answers: 200 (a refused number) or 400 (refused before routing). */
  textStatus?: 200 | 400;
}

const withNumber = (template: string, number: string): string => template.replace('{number}', number);

const CASES: readonly ProblemCase[] = [
  { name: 'a refused number', target: (t) => withNumber(t, 'abc'), phoneOnly: true, textStatus: 200 },
  { name: 'a malformed ?wait', target: (t) => `${withNumber(t, NUMBER)}?wait=soon`, phoneOnly: true, textStatus: 200 },
  {
    name: 'a number segment of 600 characters',
    target: (t) => withNumber(t, '0'.repeat(600)),
    phoneOnly: true,
    textStatus: 200,
  },
  {
    name: 'a number segment of 513 characters',
    target: (t) => withNumber(t, `+${'3'.repeat(512)}`),
    phoneOnly: true,
    textStatus: 200,
  },
  {
    name: 'a segment of 600 characters once decoded',
    target: (t) => withNumber(t, '%30'.repeat(600)),
    phoneOnly: true,
    textStatus: 200,
  },
  {
    name: 'a segment of 200 characters once decoded (600 raw)',
    target: (t) => withNumber(t, '%30'.repeat(200)),
    phoneOnly: true,
    textStatus: 200,
  },
  {
    name: 'an over-long segment with ?lang=en',
    target: (t) => `${withNumber(t, '9'.repeat(700))}?lang=en`,
    phoneOnly: true,
    textStatus: 200,
  },
  {
    name: 'a URL over 2048 characters',
    target: (t) => `${withNumber(t, NUMBER)}?pad=${'x'.repeat(2100)}`,
    textStatus: 400,
  },
  {
    name: 'a number segment over 2048 characters',
    target: (t) => withNumber(t, '0'.repeat(2100)),
    phoneOnly: true,
    textStatus: 400,
  },
  {
    name: '101 header fields',
    target: (t) => withNumber(t, NUMBER),
    init: { headers: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-filler-${i}`, 'x'])) },
    textStatus: 400,
  },
  { name: 'POST', target: (t) => withNumber(t, NUMBER), init: { method: 'POST' } },
  {
    name: 'DELETE with an over-long segment',
    target: (t) => withNumber(t, '0'.repeat(600)),
    init: { method: 'DELETE' },
    phoneOnly: true,
  },
  { name: 'a path below the route', target: (t) => `${withNumber(t, NUMBER)}/nothing-here` },
];

interface Answered {
  status: number;
  contentType: string;
  body: string;
  mismatch: string | undefined;
}

async function send(server: TestServer, target: string, init: RequestInit = {}): Promise<Answered> {
  const response = await fetch(server.baseUrl + target, init);
  const body = await response.text();
  const contract = await contractOf(server.app);
  const contentType = response.headers.get('content-type') ?? '';
  const mismatch = contract.describeMismatch({
    method: init.method ?? 'GET',
    path: target,
    status: response.status,
    contentType,
    body,
    headers: response.headers,
  });
  return { status: response.status, contentType, body, mismatch };
}

async function documentedGetRoutes(server: TestServer): Promise<string[]> {
  const document: OpenApiDocument = (await contractOf(server.app)).document;
  return Object.entries(document.paths)
    .filter(([, item]) => item.get !== undefined)
    .map(([template]) => template);
}

describe('problem bodies match their route’s OpenAPI schema, and the text routes stay 200', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
  });
  afterAll(async () => server.close());

  it('walks every documented route with every problem case', async () => {
    const routes = await documentedGetRoutes(server);
    expect(routes).toEqual(
      expect.arrayContaining([
        '/api/phone/{number}',
        '/api/phone/{number}/verdict',
        '/api/phone/{number}/cid',
        '/health',
      ]),
    );
    const mismatches: string[] = [];
    let problems = 0;
    for (const template of routes) {
      for (const problemCase of CASES) {
        if (problemCase.phoneOnly === true && !template.includes('{number}')) continue;
        const target = problemCase.target(template);
        const answer = await send(server, target, problemCase.init);
        const label = `${problemCase.name} on ${template}`;
        if (answer.mismatch !== undefined) mismatches.push(`${label}: ${answer.mismatch}`);
        // Never a 500, and every failure in the problem shape.
        expect(answer.status, label).toBeLessThan(500);
        if (answer.status >= 400) {
          problems += 1;
          expect(answer.contentType, label).toMatch(/^application\/problem\+json/);
        }
        if (TEXT_ROUTES.has(template) && problemCase.textStatus !== undefined) {
          expect(answer.status, `${label}: ${answer.body.slice(0, 200)}`).toBe(problemCase.textStatus);
          if (problemCase.textStatus === 200) expect(answer.contentType, label).toBe('text/plain; charset=utf-8');
        }
      }
    }
    expect(problems).toBeGreaterThan(routes.length * 3);
    expect(mismatches).toEqual([]);
  });

  it('answers an over-long number on /verdict with `unknown` and on /cid with the invalid-number line', async () => {
    for (const number of ['0'.repeat(600), '%30'.repeat(600), `sip:${'1'.repeat(600)}@pbx`]) {
      const verdict = await send(server, `/api/phone/${number}/verdict`);
      expect(verdict).toMatchObject({
        status: 200,
        contentType: 'text/plain; charset=utf-8',
        body: 'unknown\n',
        mismatch: undefined,
      });
      expect(await send(server, `/api/phone/${number}/cid`)).toMatchObject({
        status: 200,
        body: 'Numéro invalide',
        mismatch: undefined,
      });
      expect(await send(server, `/api/phone/${number}/cid?lang=en`)).toMatchObject({
        status: 200,
        body: 'Invalid number',
        mismatch: undefined,
      });
    }
    // The same as a number the route itself refuses.
    expect((await send(server, '/api/phone/abc/cid?lang=en')).body).toBe('Invalid number');
  });

  it('answers HEAD on an over-long number with the text route’s headers and no body', async () => {
    const response = await fetch(`${server.baseUrl}/api/phone/${'0'.repeat(600)}/verdict`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-reputation-risk')).toBe('unknown');
    expect(await response.text()).toBe('');
  });
});

describe('problem bodies of the rate limit and of failed sources match the document', () => {
  let limited: TestServer;
  let failing: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ env: { RATE_LIMIT_MAX: '1' }, overrides: { sources: healthyFakeSources() } });
    const sources = healthyFakeSources();
    sources.primary.respond = () => ({ status: 'error', reason: 'timeout' });
    sources.community.respond = () => ({ status: 'error', reason: 'connection' });
    sources.signals.respond = () => ({ status: 'blocked', reason: 'http_429' });
    failing = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources } });
  });
  afterAll(async () => {
    await limited.close();
    await failing.close();
  });

  it('answers 429 on every rate-limited route, over-long segments included, as documented', async () => {
    const routes = (await documentedGetRoutes(limited)).filter((template) => template.includes('{number}'));
    await send(limited, withNumber(routes[0] ?? '', NUMBER));
    for (const template of routes) {
      for (const number of [NUMBER, '0'.repeat(600)]) {
        const answer = await send(limited, withNumber(template, number));
        expect(answer.status, template).toBe(429);
        expect(answer.mismatch).toBeUndefined();
      }
    }
  });

  it('answers 502 on the JSON routes and 200 on the text routes when every source fails, as documented', async () => {
    for (const template of await documentedGetRoutes(failing)) {
      if (!template.includes('{number}')) continue;
      const answer = await send(failing, withNumber(template, '0698765432'));
      expect(answer.mismatch).toBeUndefined();
      expect(answer.status, template).toBe(template.endsWith('/info') ? 200 : TEXT_ROUTES.has(template) ? 200 : 502);
    }
  });
});
