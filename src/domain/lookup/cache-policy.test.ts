import { describe, expect, it } from 'vitest';
import type { CachedSourceResult } from '../ports/source-cache.js';
import {
  entryAfterFailure,
  entryForAnswer,
  freshnessOf,
  jitteredTtlMs,
  slotFromEntry,
  storeTtlSeconds,
  type CachePolicy,
} from './cache-policy.js';

const POLICY: CachePolicy = { okTtlSeconds: 600, notFoundTtlSeconds: 60, staleSeconds: 3600, jitterRatio: 0.1 };
const T0 = Date.parse('2026-03-01T12:00:00.000Z');

function entry(overrides: Partial<CachedSourceResult> = {}): CachedSourceResult {
  return {
    status: 'ok',
    data: { score: 1 },
    fetchedAt: new Date(T0).toISOString(),
    freshUntil: T0 + 1000,
    staleUntil: T0 + 5000,
    ...overrides,
  };
}

describe('cache policy', () => {
  it('reads an entry as fresh before freshUntil, stale until staleUntil, expired after (and when absent)', () => {
    const e = entry();
    expect(freshnessOf(e, T0)).toBe('fresh');
    expect(freshnessOf(e, T0 + 999)).toBe('fresh');
    expect(freshnessOf(e, T0 + 1000)).toBe('stale');
    expect(freshnessOf(e, T0 + 4999)).toBe('stale');
    expect(freshnessOf(e, T0 + 5000)).toBe('expired');
    expect(freshnessOf(undefined, T0)).toBe('expired');
  });

  it('jitters a TTL within ± the ratio, with 0.5 meaning none', () => {
    expect(jitteredTtlMs(600, 0.1, 0.5)).toBe(600_000);
    expect(jitteredTtlMs(600, 0.1, 0)).toBe(540_000);
    expect(jitteredTtlMs(600, 0.1, 0.999_999)).toBe(660_000);
  });

  it('gives ok answers the ok TTL and not_found the shorter one, each followed by the stale window', () => {
    const okEntry = entryForAnswer('ok', { score: 3 }, T0, POLICY, 0.5);
    expect(okEntry).toEqual({
      status: 'ok',
      data: { score: 3 },
      fetchedAt: '2026-03-01T12:00:00.000Z',
      freshUntil: T0 + 600_000,
      staleUntil: T0 + 600_000 + 3_600_000,
    });
    const missing = entryForAnswer('not_found', { ignored: true }, T0, POLICY, 0.5);
    expect(missing).toMatchObject({
      status: 'not_found',
      data: null,
      freshUntil: T0 + 60_000,
      staleUntil: T0 + 60_000 + 3_600_000,
    });
  });

  it('records a failed refresh on a servable entry once, and never records an abort', () => {
    const e = entry();
    expect(entryAfterFailure(e, 'timeout', T0 + 2000)).toEqual({ ...e, lastFailure: 'timeout' });
    expect(entryAfterFailure({ ...e, lastFailure: 'timeout' }, 'timeout', T0 + 2000)).toBeUndefined();
    expect(entryAfterFailure(e, 'aborted', T0 + 2000)).toBeUndefined();
    expect(entryAfterFailure(e, 'timeout', T0 + 5000)).toBeUndefined();
    expect(entryAfterFailure(undefined, 'timeout', T0)).toBeUndefined();
  });

  it('keeps an entry in the store until its stale window ends, in whole seconds', () => {
    expect(storeTtlSeconds(entry(), T0)).toBe(5);
    expect(storeTtlSeconds(entry(), T0 + 4001)).toBe(1);
    expect(storeTtlSeconds(entry(), T0 + 5000)).toBe(0);
  });

  it('renders an entry as a slot result, with the refresh failure only on a stale copy', () => {
    const failedBefore = entry({ lastFailure: 'http_5xx' });
    expect(slotFromEntry(failedBefore, 'hit')).toEqual({
      status: 'ok',
      fetchedAt: failedBefore.fetchedAt,
      cache: 'hit',
      data: { score: 1 },
    });
    expect(slotFromEntry(failedBefore, 'stale')).toEqual({
      status: 'ok',
      fetchedAt: failedBefore.fetchedAt,
      cache: 'stale',
      data: { score: 1 },
      reason: 'http_5xx',
    });
    expect(slotFromEntry(entry({ status: 'not_found', data: null }), 'hit').data).toBeNull();
  });
});
