import { afterEach, describe, expect, it } from 'vitest';
import {
  COMMUNITY_DATA,
  PRIMARY_DATA,
  SIGNALS_DATA,
  START_TIME_MS,
  TEST_CONFIG,
  answered,
  startEngineHarness,
  waitFor,
  distinctNumber,
  frenchMobile,
  upstreamPath,
  type EngineHarness,
} from '../../../harness/lookup.js';
import { buildReport, failureReasons } from '../report-builder.js';
import { createMemorySourceCache } from '../../infra/cache/memory-cache.js';
import { createKeyedHasher } from '../../infra/hash.js';
import { ok, type SourcesBySlot } from '../ports/source.js';
import { createLookupService, type EngineLookupService, type LookupServiceOptions } from './lookup-service.js';
import { RESILIENCE_DEFAULTS } from './resilience.js';

let harness: EngineHarness | undefined;

async function start(...args: Parameters<typeof startEngineHarness>): Promise<EngineHarness> {
  harness = await startEngineHarness(...args);
  return harness;
}

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('lookup service: fan-out and deadlines', () => {
  it('answers every slot ok from a cold cache, one request per upstream, with ISO fetchedAt', async () => {
    const h = await start();
    const result = await h.service.lookup(frenchMobile(1));
    expect(result.primary).toEqual({
      status: 'ok',
      fetchedAt: new Date(START_TIME_MS).toISOString(),
      cache: 'miss',
      data: PRIMARY_DATA,
    });
    expect(result.community).toMatchObject({ status: 'ok', cache: 'miss', data: COMMUNITY_DATA });
    expect(result.signals).toMatchObject({ status: 'ok', cache: 'miss', data: SIGNALS_DATA });
    expect(answered(result.signals).fetchedAt).toMatch(ISO_MS);
    expect(h.counts()).toEqual({ primary: 1, community: 1, signals: 1 });
  });

  it('answers within the lookup deadline when one upstream never answers: that slot error/timeout, the others full', async () => {
    const h = await start();
    h.upstreams.community.respondWith({ blackHole: true });
    const started = Date.now();
    const result = await h.service.lookup(frenchMobile(2));
    const elapsedMs = Date.now() - started;
    // The lookup deadline is the behaviour under test: without it this lookup would wait forever.
    // Generous slack for a loaded machine.
    expect(elapsedMs).toBeLessThan(TEST_CONFIG.lookupTimeoutMs + 2_000);
    expect(result.community).toMatchObject({ status: 'error', reason: 'timeout', cache: 'miss', data: null });
    expect(result.primary).toMatchObject({ status: 'ok', data: PRIMARY_DATA });
    expect(result.signals).toMatchObject({ status: 'ok', data: SIGNALS_DATA });
    // The abandoned request is aborted, not left hanging on the upstream.
    await waitFor(() => h.upstreams.community.pendingCount() === 0);
    expect(h.upstreams.community.requestCount()).toBe(1);
  });

  it('gives a slot still pending at the lookup deadline error/timeout and aborts its fetch', async () => {
    // Source deadline longer than the lookup deadline: the lookup deadline is what cuts.
    const h = await start({ timings: { ...TEST_CONFIG, sourceTimeoutMs: 2000, lookupTimeoutMs: 300 } });
    h.upstreams.primary.respondWith({ blackHole: true });
    const result = await h.service.lookup(frenchMobile(3));
    expect(result.primary).toMatchObject({ status: 'error', reason: 'timeout', data: null });
    expect(result.community.status).toBe('ok');
    await waitFor(() => h.upstreams.primary.pendingCount() === 0);
  });

  it('counts a fetch abandoned at the lookup deadline as an upstream timeout for the breaker', async () => {
    const h = await start({
      timings: { ...TEST_CONFIG, sourceTimeoutMs: 2000, lookupTimeoutMs: 200 },
      resilience: { breakerThreshold: 1, breakerHalfOpenAfterMs: 10_000 },
    });
    h.upstreams.primary.respondWith({ blackHole: true });
    await h.service.lookup(frenchMobile(14));
    await waitFor(() => h.service.breakerState('primary') === 'open');
    expect((await h.service.lookup(frenchMobile(15))).primary).toMatchObject({
      status: 'error',
      reason: 'circuit_open',
    });
  });

  it('lets a caller that leaves detach: the fetch runs on, fills the cache and never counts against the breaker', async () => {
    const h = await start({ resilience: { breakerThreshold: 1, breakerHalfOpenAfterMs: 10_000 } });
    // Slower than the caller's patience, well within the source deadline (300 ms).
    h.upstreams.primary.respondWith({ status: 200, body: PRIMARY_DATA, delayMs: 100 });
    const controller = new AbortController();
    const leaving = h.service.lookup(frenchMobile(16), { signal: controller.signal });
    await waitFor(() => h.upstreams.primary.pendingCount() === 1);
    controller.abort();
    expect((await leaving).primary).toMatchObject({ status: 'error', reason: 'aborted', data: null });
    const primaryKey = (key: string): boolean => key.includes(':primary:');
    await waitFor(() => h.cache.keysWritten.some(primaryKey));
    expect(h.service.breakerState('primary')).toBe('closed');
    const next = await h.service.lookup(frenchMobile(16));
    expect(next.primary).toMatchObject({ status: 'ok', cache: 'hit', data: PRIMARY_DATA });
    expect(h.counts().primary).toBe(1);
  });

  it('answers error/aborted on every unfinished slot when the caller aborts', async () => {
    const h = await start();
    for (const upstream of Object.values(h.upstreams)) upstream.respondWith({ blackHole: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const result = await h.service.lookup(frenchMobile(4), { signal: controller.signal });
    for (const slot of [result.primary, result.community, result.signals]) {
      expect(slot).toMatchObject({ status: 'error', reason: 'aborted', data: null });
    }
    await waitFor(() => Object.values(h.upstreams).every((upstream) => upstream.pendingCount() === 0));
  });

  it('maps 404 to not_found, 429 to blocked and refused connections to error/connection', async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ status: 404 });
    h.upstreams.community.respondWith({ status: 429, headers: { 'retry-after': '120' } });
    await h.upstreams.signals.close();
    const result = await h.service.lookup(frenchMobile(5));
    expect(result.primary).toMatchObject({ status: 'not_found', cache: 'miss', data: null });
    expect(answered(result.primary).reason).toBeUndefined();
    expect(result.community).toMatchObject({ status: 'blocked', reason: 'http_429', data: null });
    expect(result.signals).toMatchObject({ status: 'error', reason: 'connection', data: null });
  });
});

describe('lookup service: every source down', () => {
  it('with nothing cached: every slot failed, the report says allSourcesFailed with each reason', async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ blackHole: true });
    h.upstreams.community.respondWith({ status: 429, headers: { 'retry-after': '30' } });
    await h.upstreams.signals.close();
    const result = await h.service.lookup(frenchMobile(6));
    const built = buildReport(frenchMobile(6), result);
    expect(built.allSourcesFailed).toBe(true);
    expect(failureReasons(result)).toEqual({ primary: 'timeout', community: 'http_429', signals: 'connection' });
  });

  it('with a stale copy: every slot ok from the stale copy, not allSourcesFailed', async () => {
    const h = await start();
    await h.service.lookup(frenchMobile(9));
    h.advanceSeconds(TEST_CONFIG.cacheTtlSeconds * 2);
    for (const upstream of Object.values(h.upstreams)) await upstream.close();
    const result = await h.service.lookup(frenchMobile(9));
    const built = buildReport(frenchMobile(9), result);
    expect(built.allSourcesFailed).toBe(false);
    expect(built.report.sources).toEqual({ primary: PRIMARY_DATA, community: COMMUNITY_DATA, signals: SIGNALS_DATA });
    expect(Object.values(built.meta.sources).map((meta) => ('cache' in meta ? meta.cache : meta.status))).toEqual([
      'stale',
      'stale',
      'stale',
    ]);
  });
});

describe('lookup service: retry', () => {
  it('retries a 5xx once and no more', async () => {
    const h = await start();
    h.upstreams.signals.respondWith({ status: 503 });
    const result = await h.service.lookup(frenchMobile(10));
    expect(result.signals).toMatchObject({ status: 'error', reason: 'http_5xx' });
    expect(h.upstreams.signals.requestCount()).toBe(2);
    expect(h.upstreams.primary.requestCount()).toBe(1);
  });

  it('serves the retry’s answer when the upstream recovers after one 5xx', async () => {
    const h = await start();
    h.upstreams.signals.respondWith(({ countForPath }) =>
      countForPath === 1 ? { status: 502 } : { status: 200, body: SIGNALS_DATA },
    );
    const result = await h.service.lookup(frenchMobile(11));
    expect(result.signals).toMatchObject({ status: 'ok', data: SIGNALS_DATA });
    expect(h.upstreams.signals.requestCount()).toBe(2);
  });

  it('does not retry not_found, blocked or timeout', async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ status: 404 });
    h.upstreams.community.respondWith({ status: 429 });
    h.upstreams.signals.respondWith({ blackHole: true });
    await h.service.lookup(frenchMobile(12));
    expect(h.counts()).toEqual({ primary: 1, community: 1, signals: 1 });
  });

  it('does not retry when too little of the source deadline remains', async () => {
    // The 503 comes after about 600 of the 1000 ms; a retry needs 20 (max backoff) + 500 ms left.
    const h = await start({
      timings: { ...TEST_CONFIG, sourceTimeoutMs: 1000, lookupTimeoutMs: 1500 },
      resilience: { retryInitialDelayMs: 10, retryMaxDelayMs: 20, retryMinRemainingMs: 500 },
    });
    h.upstreams.signals.respondWith({ status: 503, delayMs: 600 });
    const result = await h.service.lookup(frenchMobile(13));
    expect(result.signals).toMatchObject({ status: 'error', reason: 'http_5xx' });
    expect(h.upstreams.signals.requestCount()).toBe(1);
  });
});

describe('lookup service: cache', () => {
  it('answers a cached lookup without any upstream request', async () => {
    const h = await start();
    const first = await h.service.lookup(frenchMobile(20));
    const second = await h.service.lookup(frenchMobile(20));
    expect(h.counts()).toEqual({ primary: 1, community: 1, signals: 1 });
    expect(second.primary).toEqual({ ...first.primary, cache: 'hit' });
    expect(answered(second.community).cache).toBe('hit');
    expect(answered(second.signals).cache).toBe('hit');
  });

  it('caches not_found for notFoundTtlSeconds and ok for cacheTtlSeconds', async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ status: 404 });
    await h.service.lookup(frenchMobile(21));
    h.advanceSeconds(TEST_CONFIG.notFoundTtlSeconds - 1);
    const within = await h.service.lookup(frenchMobile(21));
    expect(within.primary).toMatchObject({ status: 'not_found', cache: 'hit' });
    h.advanceSeconds(2);
    const after = await h.service.lookup(frenchMobile(21));
    expect(after.primary).toMatchObject({ status: 'not_found', cache: 'stale' });
    expect(after.community).toMatchObject({ status: 'ok', cache: 'hit' });
  });

  it.each([
    [0, 0.9],
    [0.999_999, 1.1],
  ])('jitters the TTL within ten percent (random %s gives TTL × %s)', async (randomValue, factor) => {
    const h = await start({ random: () => randomValue });
    await h.service.lookup(frenchMobile(27));
    h.advanceSeconds(TEST_CONFIG.cacheTtlSeconds * factor - 2);
    expect(answered((await h.service.lookup(frenchMobile(27))).primary).cache).toBe('hit');
    h.advanceSeconds(4);
    expect(answered((await h.service.lookup(frenchMobile(27))).primary).cache).toBe('stale');
  });

  it("does not cache failures: once the breaker's brief memory of the failing number has passed, the upstream is asked again", async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ status: 503 });
    await h.service.lookup(frenchMobile(22));
    h.upstreams.primary.respondWith({ status: 200, body: PRIMARY_DATA });
    // Within the memory the failure is answered without asking (see resilience.ts).
    expect((await h.service.lookup(frenchMobile(22))).primary).toMatchObject({
      status: 'error',
      reason: 'http_5xx',
      cache: 'miss',
    });
    expect(h.upstreams.primary.requestCount()).toBe(2);
    h.advanceSeconds(RESILIENCE_DEFAULTS.numberFailureMemoryMs / 1000);
    const result = await h.service.lookup(frenchMobile(22));
    expect(result.primary).toMatchObject({ status: 'ok', cache: 'miss' });
    expect(h.upstreams.primary.requestCount()).toBe(3);
  });

  it('serves a stale copy at once and refreshes it once in the background', async () => {
    const h = await start();
    await h.service.lookup(frenchMobile(23));
    h.advanceSeconds(TEST_CONFIG.cacheTtlSeconds + 1);
    const refreshed = { ...PRIMARY_DATA, searches: 999 };
    h.upstreams.primary.respondWith({ status: 200, body: refreshed, delayMs: 100 });
    const writesBefore = h.cache.keysWritten.length;
    const staleAnswers = await Promise.all(Array.from({ length: 10 }, () => h.service.lookup(frenchMobile(23))));
    for (const answer of staleAnswers) {
      expect(answer.primary).toMatchObject({ status: 'ok', cache: 'stale', data: PRIMARY_DATA });
      expect(answered(answer.primary).reason).toBeUndefined();
    }
    // The one background refresh has written its result.
    await waitFor(() => h.cache.keysWritten.slice(writesBefore).some((key) => key.includes(':primary:')));
    expect(h.upstreams.primary.requestCount()).toBe(2);
    const after = await h.service.lookup(frenchMobile(23));
    expect(after.primary).toMatchObject({ status: 'ok', cache: 'hit', data: refreshed });
    expect(h.upstreams.primary.requestCount()).toBe(2);
  });

  it('keeps serving the stale copy when every upstream is down, with the refresh failure as reason', async () => {
    const h = await start();
    await h.service.lookup(frenchMobile(24));
    h.advanceSeconds(TEST_CONFIG.cacheTtlSeconds + 1);
    for (const upstream of Object.values(h.upstreams)) upstream.respondWith({ status: 500 });
    const writesBefore = h.cache.keysWritten.length;
    const first = await h.service.lookup(frenchMobile(24));
    expect(first.primary).toMatchObject({ status: 'ok', cache: 'stale', data: PRIMARY_DATA });
    expect(first.community).toMatchObject({ status: 'ok', cache: 'stale', data: COMMUNITY_DATA });
    expect(first.signals).toMatchObject({ status: 'ok', cache: 'stale', data: SIGNALS_DATA });
    // Each slot's failed refresh (first try and retry) has recorded its reason on the stale entry.
    await waitFor(() => h.cache.keysWritten.length === writesBefore + 3);
    expect(Object.values(h.upstreams).map((upstream) => upstream.requestCount())).toEqual([3, 3, 3]);
    const second = await h.service.lookup(frenchMobile(24));
    expect(second.primary).toMatchObject({ status: 'ok', cache: 'stale', reason: 'http_5xx', data: PRIMARY_DATA });
    expect(answered(second.primary).fetchedAt).toBe(new Date(START_TIME_MS).toISOString());
  });

  it('stops serving a copy older than staleSeconds', async () => {
    const h = await start();
    await h.service.lookup(frenchMobile(25));
    h.advanceSeconds(TEST_CONFIG.cacheTtlSeconds + TEST_CONFIG.staleSeconds + 1);
    h.upstreams.primary.respondWith({ status: 500 });
    const result = await h.service.lookup(frenchMobile(25));
    expect(result.primary).toMatchObject({ status: 'error', reason: 'http_5xx', cache: 'miss', data: null });
  });

  it('keys the cache by slot and one keyed hash of the number, never the number in clear', async () => {
    const h = await start();
    const number = frenchMobile(26);
    await h.service.lookup(number);
    expect(h.cache.keysWritten).toHaveLength(3);
    for (const key of h.cache.keysWritten) {
      expect(key).toMatch(/^v3:(primary|community|signals):[A-Za-z0-9_-]{22}$/);
      expect(key).not.toContain('612345626');
    }
    expect(new Set(h.cache.keysWritten).size).toBe(3);
    expect(new Set(h.cache.keysWritten.map((key) => key.split(':')[2])).size).toBe(1);
  });
});

describe('lookup service: coalescing', () => {
  it('costs each upstream exactly one request for 200 concurrent cold lookups of one number', async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ status: 200, body: PRIMARY_DATA, delayMs: 50 });
    h.upstreams.community.respondWith({ status: 200, body: COMMUNITY_DATA, delayMs: 50 });
    h.upstreams.signals.respondWith({ status: 404, delayMs: 50 });
    const results = await Promise.all(Array.from({ length: 200 }, () => h.service.lookup(frenchMobile(30))));
    expect(h.counts()).toEqual({ primary: 1, community: 1, signals: 1 });
    for (const result of results) {
      expect(result.primary).toMatchObject({ status: 'ok', cache: 'miss', data: PRIMARY_DATA });
      expect(result.signals).toMatchObject({ status: 'not_found', cache: 'miss' });
    }
    expect(h.upstreams.primary.requestCount(upstreamPath(frenchMobile(30)))).toBe(1);
  });

  it('keeps a shared fetch running for the callers still waiting when one caller gives up', async () => {
    const h = await start();
    h.upstreams.primary.respondWith({ status: 200, body: PRIMARY_DATA, delayMs: 100 });
    const impatient = new AbortController();
    const first = h.service.lookup(frenchMobile(31), { signal: impatient.signal });
    const second = h.service.lookup(frenchMobile(31));
    setTimeout(() => impatient.abort(), 20);
    expect((await first).primary).toMatchObject({ status: 'error', reason: 'aborted' });
    expect((await second).primary).toMatchObject({ status: 'ok', data: PRIMARY_DATA });
    expect(h.upstreams.primary.requestCount()).toBe(1);
  });
});

describe('lookup service: circuit breaker', () => {
  it('opens after failures of distinct numbers, answers circuit_open at once while open, and closes after a successful probe', async () => {
    const h = await start({
      resilience: { breakerThreshold: 3, breakerHalfOpenAfterMs: 400, retryMinRemainingMs: 10_000 },
    });
    h.upstreams.signals.respondWith({ blackHole: true });
    for (let n = 0; n < 3; n += 1) {
      const result = await h.service.lookup(distinctNumber(100 + n));
      expect(result.signals).toMatchObject({ status: 'error', reason: 'timeout' });
    }
    expect(h.service.breakerState('signals')).toBe('open');
    expect(h.upstreams.signals.requestCount()).toBe(3);

    const whileOpen = await h.service.lookup(distinctNumber(200));
    // The slot answers without asking the upstream (whose failures each took the source deadline).
    const signalsEvent = h.events.filter((event) => event.slot === 'signals').at(-1);
    expect(signalsEvent).toMatchObject({ status: 'error', reason: 'circuit_open', cache: 'miss' });
    expect(whileOpen.signals).toMatchObject({ status: 'error', reason: 'circuit_open', data: null });
    expect(whileOpen.primary.status).toBe('ok');
    expect(h.upstreams.signals.requestCount()).toBe(3);

    h.upstreams.signals.respondWith({ status: 200, body: SIGNALS_DATA });
    // The breaker reads the engine's clock.
    h.advanceSeconds(1);
    const probe = await h.service.lookup(distinctNumber(201));
    expect(probe.signals).toMatchObject({ status: 'ok', data: SIGNALS_DATA });
    expect(h.service.breakerState('signals')).toBe('closed');
    expect(h.upstreams.signals.requestCount()).toBe(4);
  });

  it('does not count not_found or blocked answers as failures', async () => {
    const h = await start({ resilience: { breakerThreshold: 2, breakerHalfOpenAfterMs: 10_000 } });
    h.upstreams.primary.respondWith({ status: 404 });
    h.upstreams.community.respondWith({ status: 403, headers: { 'retry-after': '1' } });
    for (let n = 0; n < 4; n += 1) await h.service.lookup(distinctNumber(300 + n));
    expect(h.service.breakerState('primary')).toBe('closed');
    expect(h.service.breakerState('community')).toBe('closed');
  });
});

describe('lookup service: politeness pause', () => {
  it('answers blocked for every number while one upstream pauses after a 429, the other slots unaffected', async () => {
    const h = await start();
    h.upstreams.community.respondWith({ status: 429, headers: { 'retry-after': '60' } });
    const first = await h.service.lookup(distinctNumber(400));
    expect(first.community).toMatchObject({ status: 'blocked', reason: 'http_429', data: null });
    for (let n = 1; n <= 3; n += 1) {
      const result = await h.service.lookup(distinctNumber(400 + n));
      expect(result.community).toMatchObject({ status: 'blocked', reason: 'paused', data: null });
      expect(result.primary).toMatchObject({ status: 'ok', data: PRIMARY_DATA });
      expect(result.signals).toMatchObject({ status: 'ok', data: SIGNALS_DATA });
    }
    expect(h.counts()).toEqual({ primary: 4, community: 1, signals: 4 });
  });
});

describe('lookup service: outcome hook', () => {
  it('reports one event per slot per lookup, without the number', async () => {
    const h = await start();
    h.upstreams.signals.respondWith({ status: 404 });
    await h.service.lookup(frenchMobile(50));
    await h.service.lookup(frenchMobile(50));
    expect(h.events).toHaveLength(6);
    expect(h.events.slice(0, 3).map((event) => [event.slot, event.upstream, event.status, event.cache])).toEqual([
      ['primary', 'tellows', 'ok', 'miss'],
      ['community', 'numeroinconnu', 'ok', 'miss'],
      ['signals', 'telguarder', 'not_found', 'miss'],
    ]);
    expect(h.events.slice(3).every((event) => event.cache === 'hit')).toBe(true);
    expect(JSON.stringify(h.events)).not.toContain('6123456');
  });
});

describe('lookup service: misbehaving dependencies', () => {
  const okSources = {
    primary: { slot: 'primary', name: 'tellows', lookup: async () => ok(PRIMARY_DATA) },
    community: { slot: 'community', name: 'numeroinconnu', lookup: async () => ok(COMMUNITY_DATA) },
    signals: { slot: 'signals', name: 'telguarder', lookup: async () => ok(SIGNALS_DATA) },
  } satisfies SourcesBySlot;

  function serviceWith(options: Partial<LookupServiceOptions>): { service: EngineLookupService; warnings: object[] } {
    const warnings: object[] = [];
    const service = createLookupService({
      sources: okSources,
      cache: createMemorySourceCache({ maxEntries: 100 }),
      hashKey: createKeyedHasher('misbehaving-test-secret-123'),
      timings: TEST_CONFIG,
      logger: { warn: (obj) => warnings.push(obj) },
      ...options,
    });
    return { service, warnings };
  }

  it('treats a cache that fails to read as a miss and logs it without the number', async () => {
    const { service, warnings } = serviceWith({
      cache: { get: () => Promise.reject(new Error('store down')), set: async () => undefined },
    });
    const result = await service.lookup(frenchMobile(60));
    expect(result.primary).toMatchObject({ status: 'ok', cache: 'miss', data: PRIMARY_DATA });
    expect(warnings.length).toBeGreaterThan(0);
    expect(JSON.stringify(warnings)).not.toContain('6123456');
  });

  it('still settles every slot by the lookup deadline when the cache never answers', async () => {
    const { service } = serviceWith({ cache: { get: () => new Promise(() => undefined), set: async () => undefined } });
    const result = await service.lookup(frenchMobile(61));
    for (const slot of [result.primary, result.community, result.signals])
      expect(slot).toMatchObject({ status: 'error', reason: 'timeout' });
  });

  it('answers an error for a source that throws instead of returning an outcome', async () => {
    const { service, warnings } = serviceWith({
      sources: {
        ...okSources,
        community: {
          slot: 'community',
          name: 'numeroinconnu',
          lookup: () => {
            throw new Error('adapter bug');
          },
        },
      },
    });
    const result = await service.lookup(frenchMobile(62));
    expect(result.community).toMatchObject({ status: 'error', reason: 'parse', data: null });
    expect(result.primary.status).toBe('ok');
    // The adapter's bug, then the failed fetch with its cause class.
    expect(warnings).toEqual([
      expect.objectContaining({ slot: 'community', upstream: 'numeroinconnu' }),
      { slot: 'community', upstream: 'numeroinconnu', status: 'error', reason: 'parse', cause: 'layout' },
    ]);
  });

  it('answers timeout for a source that ignores its abort signal', async () => {
    const { service } = serviceWith({
      sources: {
        ...okSources,
        signals: { slot: 'signals', name: 'telguarder', lookup: () => new Promise(() => undefined) },
      },
    });
    const result = await service.lookup(frenchMobile(63));
    expect(result.signals).toMatchObject({ status: 'error', reason: 'timeout' });
    expect(result.primary.status).toBe('ok');
  });

  it('keeps answering when the outcome hook throws', async () => {
    const { service, warnings } = serviceWith({
      onSourceOutcome: () => {
        throw new Error('metrics broke');
      },
    });
    const result = await service.lookup(frenchMobile(64));
    expect(result.primary.status).toBe('ok');
    expect(warnings).toHaveLength(3);
  });
});
