// `?wait=<ms>` and `Prefer: wait=<s>` against upstream sites slower than the wait, through the
// real server over HTTP: the answer comes by the deadline with `pending` sources (a 200, never a
// 502), the fetches go on in the background and fill the cache for the next request, and a burst
// of callers still makes one upstream request per site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { insideLegalHoursClock } from '../../harness/legal-hours.js';
import { expectDocumentedAnswer } from '../support/contracts.js';

// Every upstream answers this late (telguarder's search is two requests: twice this, still
// inside SOURCE_TIMEOUT_MS); the waits below are far shorter.
const UPSTREAM_DELAY_MS = 1000;
const WAIT_MS = 200;

interface Answer {
  status: number;
  elapsedMs: number;
  text: string;
  headers: Headers;
}

async function get(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(server.baseUrl + path, { headers });
  const text = await response.text();
  const elapsedMs = performance.now() - started;
  await expectDocumentedAnswer(server.app, {
    method: 'GET',
    path,
    status: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    body: text,
    headers: response.headers,
  });
  return { status: response.status, elapsedMs, text, headers: response.headers };
}

interface ScoreBody {
  data: { score: number | null; risk: string };
  meta: { sources: Record<string, { status: string; cache: string }> };
}

/** The service in front of fake sites that each answer UPSTREAM_DELAY_MS late. */
async function startSlowService(): Promise<{ sites: FakeUpstreamSites; server: TestServer }> {
  const sites = await startFakeUpstreamSites({ delayMs: UPSTREAM_DELAY_MS, fallback: KNOWN_NUMBER });
  const server = await startTestServer({
    env: {
      ...sites.env(),
      TELLOWS_API_KEY: 'test-partner-key',
      RATE_LIMIT_MAX: '0',
      SOURCE_TIMEOUT_MS: '3000',
      LOOKUP_TIMEOUT_MS: '4000',
    },
    overrides: { now: insideLegalHoursClock() },
  });
  return { sites, server };
}

describe('?wait against upstreams slower than the wait', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    ({ sites, server } = await startSlowService());
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('answers by the deadline with pending sources, then from the cache the background fetch filled', async () => {
    const first = await get(server, `/api/phone/0612345611/score?wait=${WAIT_MS}`);
    expect(first.status).toBe(200);
    // The deadline is the behaviour under test (generous slack, still short of any upstream answer).
    expect(first.elapsedMs).toBeLessThan(UPSTREAM_DELAY_MS);
    const body = JSON.parse(first.text) as ScoreBody;
    expect(body.data).toMatchObject({ score: null, risk: 'unknown' });
    for (const slot of ['primary', 'community', 'signals'])
      expect(body.meta.sources[slot]?.status, slot).toBe('pending');
    expect(first.headers.get('cache-control')).toBe('no-store');

    // Without a wait, the next caller joins the fetches still running: no new upstream request.
    const joined = JSON.parse((await get(server, '/api/phone/0612345611/score')).text) as ScoreBody;
    expect(joined.data.score).toBe(8);
    expect(sites.total()).toBe(3);

    const cached = JSON.parse((await get(server, `/api/phone/0612345611/score?wait=${WAIT_MS}`)).text) as ScoreBody;
    expect(cached.data.score).toBe(8);
    for (const slot of ['primary', 'community', 'signals']) expect(cached.meta.sources[slot]?.cache, slot).toBe('hit');
    expect(sites.total()).toBe(3);
  });

  it('answers the text routes by the deadline: unknown, or the NPV rule, while nothing is known yet', async () => {
    const verdict = await get(server, `/api/phone/0612345622/verdict?wait=${WAIT_MS}`);
    expect(verdict.elapsedMs).toBeLessThan(UPSTREAM_DELAY_MS);
    expect(verdict.text).toBe('unknown\n');
    expect(verdict.headers.get('cache-control')).toBe('no-store');
    const npv = await get(server, `/api/phone/0162005622/verdict?wait=${WAIT_MS}`);
    expect(npv.text).toBe('warn\n');
    const cid = await get(server, `/api/phone/0162005623/cid?wait=${WAIT_MS}`);
    expect(cid.text).toBe('Appel automatisé (NPV)');
    // Once the background fetch is done (the unwaited call joins it), the verdict is the sources'.
    expect((await get(server, '/api/phone/0612345622/verdict')).text).toBe('block\n');
    expect((await get(server, `/api/phone/0612345622/verdict?wait=0`)).text).toBe('block\n');
    // Join the NPV numbers' background fetches too, so that none is still running after this test.
    expect((await get(server, '/api/phone/0162005622/verdict')).status).toBe(200);
    expect((await get(server, '/api/phone/0162005623/cid')).status).toBe(200);
  });

  it('takes Prefer: wait in seconds, and the smaller bound when both are given', async () => {
    const preferred = await get(server, '/api/phone/0612345644/verdict', { prefer: 'wait=0' });
    expect(preferred.text).toBe('unknown\n');
    expect(preferred.headers.get('preference-applied')).toBe('wait=0');
    const both = await get(server, `/api/phone/0612345655/score?wait=${WAIT_MS}`, { prefer: 'wait=3' });
    expect(both.elapsedMs).toBeLessThan(UPSTREAM_DELAY_MS);
    expect(both.headers.get('preference-applied')).toBe('wait=1');
  });
});

// A server of its own, so that no fetch another test left running is counted.
describe('?wait under a burst of callers', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    ({ sites, server } = await startSlowService());
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('makes one upstream request per site for a burst of waiting callers', async () => {
    const burst = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        get(server, `/api/phone/0612345633${i % 2 === 0 ? '/verdict' : '/score'}?wait=${WAIT_MS}`),
      ),
    );
    for (const answer of burst) expect(answer.status).toBe(200);
    await get(server, '/api/phone/0612345633/score');
    expect(sites.total()).toBe(3);
  });
});
