// What the lookup engine gives the HTTP layer: one result per slot, each saying where it
// came from. The engine (lookup-service.ts) fills it; the HTTP layer only renders it.
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import type { SourceStatus } from '../../sources/source.js';

export type CacheState = 'hit' | 'miss' | 'stale';

export interface SlotResult<S extends SourceSlot = SourceSlot> {
  status: SourceStatus;
  /** Why the slot is not `ok` (a FailureReason), or why it was served stale. */
  reason?: string;
  /** ISO 8601 time the data (or failure) was obtained from the upstream. */
  fetchedAt: string;
  cache: CacheState;
  /** The slot's data when status is `ok` (possibly stale); null otherwise. */
  data: SourceDataBySlot[S] | null;
}

export type LookupResult = { [S in SourceSlot]: SlotResult<S> };

export interface LookupService {
  /** Never rejects: every failure is inside the per-slot results. */
  lookup(number: ParsedPhoneNumber, signal?: AbortSignal): Promise<LookupResult>;
}
