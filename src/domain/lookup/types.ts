// What the lookup engine gives the HTTP layer: one result per slot, each saying where it
// came from. The engine (lookup-service.ts) fills it; the HTTP layer only renders it.
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import type { FailureReason, SourceStatus } from '../ports/source.js';

/** Where a slot's answer came from: the cache while fresh, the upstream, or an expired entry. */
export const CACHE_STATES = ['hit', 'miss', 'stale'] as const;
export type CacheState = (typeof CACHE_STATES)[number];

export interface SlotResult<S extends SourceSlot = SourceSlot> {
  status: SourceStatus;
  /** Why the slot is not `ok`, or why it was served stale (the last refresh's failure). */
  reason?: FailureReason;
  /** ISO 8601 time the data (or failure) was obtained from the upstream. */
  fetchedAt: string;
  cache: CacheState;
  /** The slot's data when status is `ok` (possibly stale); null otherwise. */
  data: SourceDataBySlot[S] | null;
}

export type LookupResult = { [S in SourceSlot]: SlotResult<S> };

export interface LookupService {
  /**
   * Never rejects: every failure is inside the per-slot results. `numberHash`, when the caller
   * already holds the number's keyed hash, saves computing it again.
   */
  lookup(number: ParsedPhoneNumber, signal?: AbortSignal, numberHash?: string, options?: LookupOptions): Promise<LookupResult>;
  /**
   * Synchronous, when the engine can read its cache without I/O: the lookup if its three slots
   * are fresh hits, else undefined. Creates no timer, signal or promise.
   */
  peekFresh?(number: ParsedPhoneNumber, numberHash?: string): FreshLookup | undefined;
  /**
   * For a result this engine returned whose three slots are fresh answers (hits or just
   * fetched, none stale or failed): when the first stops being fresh (epoch ms). Else undefined.
   */
  freshUntilOf?(result: LookupResult): number | undefined;
}

export interface LookupOptions {
  waitMs?: number;
}

/** A lookup answered from three fresh hits, and when the first of them stops being fresh. */
export interface FreshLookup {
  result: LookupResult;
  /** Epoch ms (engine clock) at which the first slot turns stale. */
  freshUntilMs: number;
}
