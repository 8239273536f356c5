// The cache of per-source results: one entry per (slot, number), holding what one upstream
// answered and until when it may be served. The memory and Redis implementations both hold an
// entry in one stored form (entry-codec.ts), so values stay JSON-serialisable, and keys never
// contain a phone number in clear.
import type { SourceSlot } from '../report.js';
import type { KeyedHasher } from './key-hasher.js';
import type { FailureReason } from './source.js';

/** Only answers worth remembering are cached: failures never are. */
export type CachedStatus = 'ok' | 'not_found';

export interface CachedSourceResult {
  status: CachedStatus;
  /** The slot's data for `ok` (the reader knows the slot's type from the key); null for `not_found`. */
  data: unknown;
  /** ISO 8601 time the upstream answered. */
  fetchedAt: string;
  /** Epoch ms until which the entry is served as a `hit`. */
  freshUntil: number;
  /** Epoch ms until which the entry may be served as `stale` (stale-while-revalidate / stale-if-error). */
  staleUntil: number;
  /** Reason of the last failed refresh, shown with the stale copy; absent after a successful fetch. */
  lastFailure?: FailureReason;
}

export interface SourceResultCache {
  /** Resolves undefined on a miss. An implementation that cannot reach its store answers a miss rather than rejecting. */
  get(key: string): Promise<CachedSourceResult | undefined>;
  /** `ttlSeconds` is how long the store keeps the entry (until `staleUntil`); it may evict earlier. */
  set(key: string, value: CachedSourceResult, ttlSeconds: number): Promise<void>;
  /**
   * A synchronous read, for stores that hold entries in this process; absent on stores that
   * cannot answer without I/O. Counts as a read (keeps the entry recent) like `get`.
   */
  peek?(key: string): CachedSourceResult | undefined;
}

/** Bump when the stored form (entry-codec), a slot's data or the key changes, so old entries are ignored. */
export const SOURCE_CACHE_KEY_VERSION = 'v3';

/**
 * The cache key of one slot's result for one number: `v3:<slot>:<keyed hash of the E.164>`.
 * A store dump reveals no number without the secret. One hash per number serves its three
 * slots (`toSourceCacheKeys`), since a keyed hash is the dearest step of a cached lookup.
 */
export function toSourceCacheKey(hashKey: KeyedHasher, slot: SourceSlot, e164: string): string {
  return sourceCacheKeyOf(slot, hashKey(e164));
}

export function sourceCacheKeyOf(slot: SourceSlot, numberHash: string): string {
  return `${SOURCE_CACHE_KEY_VERSION}:${slot}:${numberHash}`;
}
