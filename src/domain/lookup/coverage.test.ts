// A source that does not cover the number is `skipped`: asked about nothing, cached nowhere,
// counted neither as a failure nor as a record (issue 20, "a source that was not asked says so").
import { describe, expect, it } from 'vitest';
import {
  belgianNumber,
  COMMUNITY_DATA,
  fakeSource,
  frenchMobile,
  PRIMARY_DATA,
  SIGNALS_DATA,
  START_TIME_MS,
  TEST_CONFIG,
  type FakeSources,
} from '../../../harness/lookup.js';
import { createMemorySourceCache } from '../../infra/cache/memory-cache.js';
import { createKeyedHasher } from '../../infra/hash.js';
import { sourceCacheKeyOf, type CachedSourceResult, type SourceResultCache } from '../ports/source-cache.js';
import { failed, notFound, ok } from '../ports/source.js';
import type { ParsedPhoneNumber } from '../phone-number.js';
import { buildReport, buildScoreResult, failureReasons, isAllSourcesFailed } from '../report-builder.js';
import { emptySourceData, SOURCE_SLOTS } from '../report.js';
import { createLookupService, type SourceOutcomeEvent } from './lookup-service.js';

const SKIPPED = { status: 'skipped', reason: 'not_covered' } as const;
const frenchOnly = (number: ParsedPhoneNumber): boolean => number.isFrenchPlan;

/** A cache that counts every read and write, peeks included. */
function watchedCache(): SourceResultCache & { reads: string[]; writes: string[] } {
  const inner = createMemorySourceCache({ maxEntries: 1000 });
  const reads: string[] = [];
  const writes: string[] = [];
  return {
    reads,
    writes,
    get: (key) => (reads.push(key), inner.get(key)),
    set: (key, value, ttl) => (writes.push(key), inner.set(key, value, ttl)),
    peek: (key) => (reads.push(key), inner.peek(key)),
  };
}

function engine(sources: FakeSources, options: { breakerThreshold?: number } = {}) {
  const cache = watchedCache();
  const events: SourceOutcomeEvent[] = [];
  const written: string[] = [];
  const hashKey = createKeyedHasher('coverage-secret-0123456789');
  const service = createLookupService({
    sources,
    cache,
    hashKey,
    timings: TEST_CONFIG,
    now: () => START_TIME_MS,
    random: () => 0.5,
    resilience: { breakerThreshold: options.breakerThreshold ?? 5 },
    onSourceOutcome: (event) => events.push(event),
    onSlotWritten: (numberHash) => written.push(numberHash),
  });
  return { service, cache, events, written, hashKey };
}

function frenchOnlySources(): FakeSources {
  const sources: FakeSources = {
    primary: fakeSource('primary', () => ok(PRIMARY_DATA)),
    community: fakeSource('community', () => ok(COMMUNITY_DATA)),
    signals: fakeSource('signals', () => ok(SIGNALS_DATA)),
  };
  for (const slot of SOURCE_SLOTS) sources[slot].covers = frenchOnly;
  return sources;
}

describe('lookup engine: sources that do not cover the number', () => {
  it('skips every source for a number none covers: no source asked, no cache read or written, no event', async () => {
    const sources = frenchOnlySources();
    const { service, cache, events, written } = engine(sources);
    const result = await service.lookup(belgianNumber());
    for (const slot of SOURCE_SLOTS) {
      expect(result[slot]).toEqual({ ...SKIPPED, data: null });
      expect(sources[slot].calls).toBe(0);
    }
    expect(cache.reads).toEqual([]);
    expect(cache.writes).toEqual([]);
    expect(written).toEqual([]);
    expect(events).toEqual([]);
    // Never held as fresh: the front cache must not keep an answer nobody was asked for.
    expect(service.freshUntilOf(result)).toBeUndefined();
    expect(service.peekFresh(belgianNumber())).toBeUndefined();
  });

  it('answers every-slot-skipped as a 200 with empty fields and the skips in meta, score null', async () => {
    const { service } = engine(frenchOnlySources());
    const number = belgianNumber();
    const result = await service.lookup(number);
    const built = buildReport(number, result);
    expect(built.allSourcesFailed).toBe(false);
    expect(built.report.sources).toEqual(emptySourceData());
    expect(built.meta.sources).toEqual({ primary: SKIPPED, community: SKIPPED, signals: SKIPPED });
    const score = buildScoreResult(number, result);
    expect(score.score).toMatchObject({ score: null, risk: 'unknown' });
    expect(score.meta.scoreSource).toBeNull();
    expect(score.allSourcesFailed).toBe(false);
  });

  it('serves nothing a cache holds for a slot that is not covered (an entry left by an older version)', async () => {
    const sources = frenchOnlySources();
    const { service, cache, hashKey } = engine(sources);
    const number = belgianNumber();
    const poisoned: CachedSourceResult = {
      status: 'not_found',
      data: null,
      fetchedAt: new Date(START_TIME_MS).toISOString(),
      freshUntil: START_TIME_MS + 60_000,
      staleUntil: START_TIME_MS + 120_000,
    };
    for (const slot of SOURCE_SLOTS) await cache.set(sourceCacheKeyOf(slot, hashKey(number.e164)), poisoned, 120);
    cache.writes.length = 0;
    const result = await service.lookup(number);
    for (const slot of SOURCE_SLOTS) expect(result[slot].status).toBe('skipped');
    expect(cache.reads).toEqual([]);
  });

  it('asks only the covering source; its failure alone is the 502, its not_found a 200 without score', async () => {
    const sources = frenchOnlySources();
    sources.primary.covers = () => true; // tellows with a partner key reads any number
    sources.primary.respond = () => failed('http_5xx');
    const { service, cache, events } = engine(sources);
    const number = belgianNumber();
    const failing = await service.lookup(number);
    expect(failing.primary).toMatchObject({ status: 'error', reason: 'http_5xx' });
    expect(failing.community).toEqual({ ...SKIPPED, data: null });
    expect(isAllSourcesFailed(failing)).toBe(true);
    expect(failureReasons(failing)).toEqual({ primary: 'http_5xx', community: 'not_covered', signals: 'not_covered' });
    expect(events.map((event) => event.slot)).toEqual(['primary']);
    expect(cache.reads.every((key) => key.includes(':primary:'))).toBe(true);

    sources.primary.respond = () => notFound();
    const other: ParsedPhoneNumber = { ...number, e164: '+32470000001', number: '+32470000001' };
    const unknown = await service.lookup(other);
    expect(isAllSourcesFailed(unknown)).toBe(false);
    expect(buildScoreResult(other, unknown).score).toMatchObject({ score: null, risk: 'unknown' });
    expect(cache.writes.every((key) => key.includes(':primary:'))).toBe(true);
    expect(sources.community.calls + sources.signals.calls).toBe(0);
  });

  it('scores from the covering sources only', async () => {
    const sources = frenchOnlySources();
    sources.primary.covers = () => true;
    const { service } = engine(sources);
    const result = await service.lookup(belgianNumber());
    const score = buildScoreResult(belgianNumber(), result);
    expect(score.score.score).toBe(PRIMARY_DATA.score);
    expect(score.meta.sources.signals).toEqual(SKIPPED);
  });

  it('never touches a breaker for a skipped source, however many numbers are asked', async () => {
    const sources = frenchOnlySources();
    sources.primary.respond = () => failed('http_5xx');
    sources.community.respond = () => failed('http_5xx');
    sources.signals.respond = () => failed('http_5xx');
    const { service } = engine(sources, { breakerThreshold: 1 });
    for (let n = 0; n < 5; n += 1) await service.lookup({ ...belgianNumber(), e164: `+3247000000${n}` });
    for (const slot of SOURCE_SLOTS) expect(service.breakerState(slot)).toBe('closed');
    // The French number right after is asked as usual.
    const french = await service.lookup(frenchMobile(3));
    expect(french.primary).toMatchObject({ status: 'error', reason: 'http_5xx' });
  });

  it('asks every source that has no coverage rule (fakes, older adapters)', async () => {
    const sources: FakeSources = {
      primary: fakeSource('primary', () => ok(PRIMARY_DATA)),
      community: fakeSource('community', () => ok(COMMUNITY_DATA)),
      signals: fakeSource('signals', () => ok(SIGNALS_DATA)),
    };
    const { service } = engine(sources);
    const result = await service.lookup(belgianNumber());
    for (const slot of SOURCE_SLOTS) expect(result[slot].status).toBe('ok');
  });
});
