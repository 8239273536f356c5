// The legal calling hours in the answers (docs/legal-hours.md): the real application on loopback
// (startTestServer) with an injected clock on the engine and the routes, the real front cache and
// real HTTP. The sources give every number a score of 2 (allowed by the score) or nothing, so what
// decides is VERDICT_NPV, VERDICT_CALL_CENTRE and VERDICT_OUTSIDE_HOURS.
import { afterEach, describe, expect, it } from 'vitest';
import { scoredSources } from '../../harness/scored-sources.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const NPV = '0162123456';
const CALL_CENTRE = '0189712345'; // an Aircall fixed block
const MOBILE = '0612345678';
const SCORES = { '+33162123456': 2, '+33189712345': 2, '+33612345678': 2 };

// Monday 30 November 2026, Paris on winter time (UTC+1).
const AT_19_59_59 = Date.parse('2026-11-30T18:59:59Z');
const AT_20_00_01 = Date.parse('2026-11-30T19:00:01Z');
const AT_15_00 = Date.parse('2026-11-30T14:00:00Z');

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(clock: { nowMs: number }, env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({
    env: { RATE_LIMIT_MAX: '0', ...env },
    overrides: { sources: scoredSources(SCORES), now: () => clock.nowMs },
  });
  servers.push(server);
  return server;
}

async function get(server: TestServer, path: string) {
  const response = await fetch(`${server.baseUrl}${path}`);
  return { status: response.status, headers: response.headers, body: await response.text() };
}

function maxAgeOf(cacheControl: string | null): number {
  const match = /max-age=(\d+)/.exec(cacheControl ?? '');
  if (match === null) throw new Error(`no max-age in ${String(cacheControl)}`);
  return Number(match[1]);
}

describe('no answer crosses a legal-hours boundary', () => {
  it('answers an NPV number warn at 19:59:59 and block at 20:00:01 through the front cache, never held', async () => {
    const clock = { nowMs: AT_19_59_59 - 60_000 };
    const server = await start(clock);
    const front = server.deps.app.frontCache;
    // Looked up once earlier, so every slot is a fresh cache hit: a number without the hours'
    // rule would now be held in the front cache (the control below).
    await get(server, `/api/phone/${NPV}/verdict`);
    await get(server, `/api/phone/${MOBILE}/verdict`);

    clock.nowMs = AT_19_59_59;
    const before = await get(server, `/api/phone/${NPV}/verdict`);
    expect(before.body).toBe('warn\n');
    // Valid one second at most: the boundary is at 20:00:00.
    expect(maxAgeOf(before.headers.get('cache-control'))).toBeLessThanOrEqual(1);
    expect(before.headers.get('etag')).toBeNull();
    const control = await get(server, `/api/phone/${MOBILE}/verdict`);
    expect(control.body).toBe('allow\n');
    expect(control.headers.get('etag')).not.toBeNull();
    expect(front?.size()).toBe(1);

    clock.nowMs = AT_20_00_01;
    const after = await get(server, `/api/phone/${NPV}/verdict`);
    expect(after.body).toBe('block\n');
    expect(after.headers.get('etag')).toBeNull();
    // Until Tuesday 10:00 Paris (09:00 UTC), 13 h 59 min 59 s later, capped by the slots' freshness.
    expect(maxAgeOf(after.headers.get('cache-control'))).toBeLessThanOrEqual(
      (Date.parse('2026-12-01T09:00:00Z') - AT_20_00_01) / 1000,
    );
    const report = JSON.parse((await get(server, `/api/phone/${NPV}`)).body) as { meta: { hints: string[] } };
    expect(report.meta.hints).toEqual(['npv', 'outside_legal_hours']);
    // The control number is held; the NPV one never was.
    expect(front?.size()).toBe(1);
  });

  it('gives the two sides of the boundary on two instances, each with its clock', async () => {
    const first = await start({ nowMs: AT_19_59_59 });
    const second = await start({ nowMs: AT_20_00_01 });
    for (const number of [NPV, CALL_CENTRE]) {
      expect((await get(first, `/api/phone/${number}/verdict`)).body).toBe('warn\n');
      expect((await get(second, `/api/phone/${number}/verdict`)).body).toBe('block\n');
      // And again, now that each instance has the slots fresh.
      expect((await get(first, `/api/phone/${number}/verdict`)).body).toBe('warn\n');
      expect((await get(second, `/api/phone/${number}/verdict`)).body).toBe('block\n');
    }
  });

  it('follows VERDICT_CALL_CENTRE and VERDICT_OUTSIDE_HOURS', async () => {
    const clock = { nowMs: AT_15_00 };
    const server = await start(clock, { VERDICT_CALL_CENTRE: 'allow', VERDICT_OUTSIDE_HOURS: 'warn' });
    expect((await get(server, `/api/phone/${CALL_CENTRE}/verdict`)).body).toBe('allow\n');
    clock.nowMs = AT_20_00_01;
    expect((await get(server, `/api/phone/${CALL_CENTRE}/verdict`)).body).toBe('warn\n');
    expect((await get(server, `/api/phone/${MOBILE}/verdict`)).body).toBe('allow\n');
  });
});

describe('?at= on the text routes', () => {
  it('answers for the given instant, never cached nor held, and says which instant', async () => {
    const clock = { nowMs: AT_15_00 };
    const server = await start(clock);
    const front = server.deps.app.frontCache;
    // Sunday 29 November 2026 at 11:00 Paris, and Monday 21:30: outside; Monday 15:00: inside.
    const sunday = await get(server, `/api/phone/${CALL_CENTRE}/verdict?at=2026-11-29T11:00:00%2B01:00`);
    expect(sunday.body).toBe('block\n');
    expect(sunday.headers.get('cache-control')).toBe('no-store');
    expect(sunday.headers.get('etag')).toBeNull();
    expect(sunday.headers.get('x-answer-at')).toBe('2026-11-29T10:00:00.000Z');
    expect((await get(server, `/api/phone/${NPV}/verdict?at=2026-11-30T20:30:00Z`)).body).toBe('block\n');
    expect((await get(server, `/api/phone/${NPV}/verdict`)).body).toBe('warn\n');
    const cid = await get(server, `/api/phone/${NPV}/cid?at=2026-11-30T20:30:00Z&lang=en`);
    expect(cid.headers.get('cache-control')).toBe('no-store');
    const withCid = await get(server, `/api/phone/${NPV}/verdict?cid=en&at=2026-11-30T20:30:00Z`);
    expect(withCid.body.split('\n')[0]).toBe('block');
    // Even a number the hours do not concern: `?at` is never held (its slots are fresh by now).
    await get(server, `/api/phone/${MOBILE}/verdict`);
    const sizeBefore = front?.size();
    const mobile = await get(server, `/api/phone/${MOBILE}/verdict?at=2026-11-30T20:30:00Z`);
    expect(mobile.body).toBe('allow\n');
    expect(mobile.headers.get('cache-control')).toBe('no-store');
    expect(mobile.headers.get('etag')).toBeNull();
    expect(front?.size()).toBe(sizeBefore);
  });

  it.each(['tomorrow', '2026-11-30T21:30:00', '2026-13-40T25:00:00Z', ''])(
    'ignores the malformed at=%j: the answer is for now, said by X-Answer-At, never cached',
    async (at) => {
      const server = await start({ nowMs: AT_15_00 });
      const answer = await get(server, `/api/phone/${NPV}/verdict?at=${encodeURIComponent(at)}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('warn\n');
      expect(answer.headers.get('x-answer-at')).toBe(new Date(AT_15_00).toISOString());
      expect(answer.headers.get('cache-control')).toBe('no-store');
    },
  );
});

describe('the /cid words', () => {
  it('names a call-centre block at a legal hour and the hours outside them, in French and English', async () => {
    const clock = { nowMs: AT_15_00 };
    const server = await start(clock);
    expect((await get(server, `/api/phone/${CALL_CENTRE}/cid`)).body).toBe('Plateforme d’appels');
    expect((await get(server, `/api/phone/${CALL_CENTRE}/cid?lang=en`)).body).toBe('Call centre');
    expect((await get(server, `/api/phone/${CALL_CENTRE}/verdict?cid=en`)).body).toBe('warn\nCall centre\n');
    clock.nowMs = AT_20_00_01;
    expect((await get(server, `/api/phone/${CALL_CENTRE}/cid`)).body).toBe('Hors horaires légaux');
    expect((await get(server, `/api/phone/${NPV}/cid?lang=en`)).body).toBe('Outside legal hours');
    expect((await get(server, `/api/phone/${NPV}/verdict?cid=fr`)).body).toBe('block\nHors horaires légaux\n');
  });
});
