// The per-slot cache policy as pure functions: how long an answer lives, how fresh an entry is
// at a given instant, what a failed refresh leaves behind, and how an entry reads as a slot
// result. No I/O, no clock of its own: the engine passes its clock reading and its randomness.
//
// - `ok` lives `okTtlSeconds`, `not_found` `notFoundTtlSeconds`, each ± `jitterRatio` so entries
//   written together do not expire together; failures are never cached.
// - Past its TTL but within `staleSeconds` an entry is `stale`: served at once while one
//   background refresh runs (stale-while-revalidate). A failed refresh keeps the entry and
//   records its reason, which later stale answers carry (stale-if-error).
import type { CachedSourceResult } from '../ports/source-cache.js';
import type { FailureReason } from '../ports/source.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import type { AnsweredSlot, CacheState } from './types.js';

export interface CachePolicy {
  okTtlSeconds: number;
  notFoundTtlSeconds: number;
  staleSeconds: number;
  /** Relative TTL jitter: 0.1 means ±10 %. */
  jitterRatio: number;
}

export const DEFAULT_TTL_JITTER_RATIO = 0.1;

export type Freshness = 'fresh' | 'stale' | 'expired';

/** How an entry (or its absence) reads at `nowMs`. */
export function freshnessOf(entry: CachedSourceResult | undefined, nowMs: number): Freshness {
  if (entry === undefined) return 'expired';
  if (entry.freshUntil > nowMs) return 'fresh';
  return entry.staleUntil > nowMs ? 'stale' : 'expired';
}

/** A TTL in ms with its jitter applied; `random` is one draw in [0, 1) (0.5 means no jitter). */
export function jitteredTtlMs(ttlSeconds: number, jitterRatio: number, random: number): number {
  return Math.round(ttlSeconds * 1000 * (1 + (random * 2 - 1) * jitterRatio));
}

/** The entry an answer worth caching becomes. */
export function entryForAnswer(
  status: 'ok' | 'not_found',
  data: unknown,
  fetchedAtMs: number,
  policy: CachePolicy,
  random: number,
): CachedSourceResult {
  const freshUntil =
    fetchedAtMs +
    jitteredTtlMs(status === 'ok' ? policy.okTtlSeconds : policy.notFoundTtlSeconds, policy.jitterRatio, random);
  return {
    status,
    data: status === 'ok' ? data : null,
    fetchedAt: new Date(fetchedAtMs).toISOString(),
    freshUntil,
    staleUntil: freshUntil + policy.staleSeconds * 1000,
  };
}

/**
 * What a failed fetch leaves in the cache: the previous entry carrying the failure's reason, or
 * undefined when nothing needs writing (no servable previous entry, an abort, or the same
 * reason already recorded).
 */
export function entryAfterFailure(
  previous: CachedSourceResult | undefined,
  reason: FailureReason,
  nowMs: number,
): CachedSourceResult | undefined {
  if (previous === undefined || previous.staleUntil <= nowMs) return undefined;
  if (reason === 'aborted' || previous.lastFailure === reason) return undefined;
  return { ...previous, lastFailure: reason };
}

/** How long the store keeps an entry: until its stale window ends, in whole seconds. */
export function storeTtlSeconds(entry: CachedSourceResult, nowMs: number): number {
  return Math.ceil((entry.staleUntil - nowMs) / 1000);
}

/** A cached entry as the slot result of a lookup; a stale copy says why its refresh failed, if it did. */
export function slotFromEntry<S extends SourceSlot>(
  entry: CachedSourceResult,
  cacheState: CacheState,
): AnsweredSlot<S> {
  const result: AnsweredSlot<S> = {
    status: entry.status,
    fetchedAt: entry.fetchedAt,
    cache: cacheState,
    data: entry.status === 'ok' ? (entry.data as SourceDataBySlot[S]) : null,
  };
  if (cacheState === 'stale' && entry.lastFailure !== undefined) result.reason = entry.lastFailure;
  return result;
}
