// The all-fresh path: three fresh hits in a peekable cache answer without timers or signals.
import { describe, expect, it } from 'vitest';
import {
  COMMUNITY_DATA,
  PRIMARY_DATA,
  SIGNALS_DATA,
  START_TIME_MS,
  TEST_CONFIG,
  answered,
  frenchMobile,
} from '../../../harness/lookup.js';
import { createMemorySourceCache } from '../../infra/cache/memory-cache.js';
import { createKeyedHasher } from '../../infra/hash.js';
import { ok, type SourcesBySlot } from '../ports/source.js';
import { createLookupService, type EngineTimers } from './lookup-service.js';

function countingTimers(): EngineTimers & { created: number } {
  const timers = {
    created: 0,
    setTimeout(callback: () => void, ms: number): unknown {
      timers.created += 1;
      return setTimeout(callback, ms);
    },
    clearTimeout(handle: unknown): void {
      clearTimeout(handle as ReturnType<typeof setTimeout>);
    },
  };
  return timers;
}

function engine() {
  const calls = { count: 0 };
  const sources = {
    primary: { slot: 'primary', name: 'tellows', lookup: async () => (calls.count++, ok(PRIMARY_DATA)) },
    community: { slot: 'community', name: 'numeroinconnu', lookup: async () => (calls.count++, ok(COMMUNITY_DATA)) },
    signals: { slot: 'signals', name: 'telguarder', lookup: async () => (calls.count++, ok(SIGNALS_DATA)) },
  } satisfies SourcesBySlot;
  const clock = { nowMs: START_TIME_MS };
  const timers = countingTimers();
  const written: string[] = [];
  const service = createLookupService({
    sources,
    cache: createMemorySourceCache({ maxEntries: 100 }),
    hashKey: createKeyedHasher('fresh-path-secret-0123456789'),
    timings: TEST_CONFIG,
    now: () => clock.nowMs,
    random: () => 0.5,
    timers,
    onSlotWritten: (numberHash) => written.push(numberHash),
  });
  return { service, clock, timers, calls, written };
}

describe('lookup engine: all-fresh path', () => {
  it('answers three fresh hits without creating a deadline timer, and peekFresh says until when', async () => {
    const { service, clock, timers, calls } = engine();
    await service.lookup(frenchMobile(1));
    const timersAfterMiss = timers.created;
    expect(timersAfterMiss).toBeGreaterThan(0);
    expect(calls.count).toBe(3);
    clock.nowMs += 1000;
    const again = await service.lookup(frenchMobile(1));
    expect(timers.created).toBe(timersAfterMiss);
    expect(calls.count).toBe(3);
    expect([answered(again.primary).cache, answered(again.community).cache, answered(again.signals).cache]).toEqual([
      'hit',
      'hit',
      'hit',
    ]);
    const fresh = service.peekFresh(frenchMobile(1));
    expect(fresh?.result).toEqual(again);
    expect(fresh?.freshUntilMs).toBe(START_TIME_MS + TEST_CONFIG.cacheTtlSeconds * 1000);
    service.close();
  });

  it('peekFresh answers undefined when any slot is missing or no longer fresh', async () => {
    const { service, clock } = engine();
    expect(service.peekFresh(frenchMobile(2))).toBeUndefined();
    await service.lookup(frenchMobile(2));
    clock.nowMs += TEST_CONFIG.cacheTtlSeconds * 1000;
    expect(service.peekFresh(frenchMobile(2))).toBeUndefined();
    service.close();
  });

  it('tells who built on the slots each time a slot of the number is written, by keyed hash only', async () => {
    const { service, written } = engine();
    await service.lookup(frenchMobile(3));
    expect(written).toHaveLength(3);
    expect(new Set(written).size).toBe(1);
    expect(written[0]).not.toContain('612345603');
    service.close();
  });
});
