// What the lookup engine gives the HTTP layer: one result per slot, each saying where it
// came from. The engine (lookup-service.ts) fills it; the HTTP layer only renders it.
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import {
  SOURCE_STATUSES,
  type FailureCause,
  type FailureReason,
  type LookupClient,
  type SourceStatus,
} from '../ports/source.js';

/** Where a slot's answer came from: the cache while fresh, the upstream, or an expired entry. */
export const CACHE_STATES = ['hit', 'miss', 'stale'] as const;
export type CacheState = (typeof CACHE_STATES)[number];

/** Why a slot was not asked: the source does not cover the number (its plan, or a key it needs is not set). */
export const SKIP_REASONS = ['not_covered'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/**
 * Every status a slot of a lookup can have: a source's four outcomes, `skipped` (the source was
 * not asked: it does not cover the number) and `pending` (the caller's deadline passed while the
 * fetch went on in the background). Neither of the last two is a failure or a record.
 */
export const SLOT_STATUSES = [...SOURCE_STATUSES, 'skipped', 'pending'] as const;
export type SlotStatus = (typeof SLOT_STATUSES)[number];

/** A slot the upstream (or the cache of its answer) settled: one of the four source outcomes. */
export interface AnsweredSlot<S extends SourceSlot = SourceSlot> {
  status: SourceStatus;
  /** Why the slot is not `ok`, or why it was served stale (the last refresh's failure). */
  reason?: FailureReason;
  /**
   * What the failure of this fetch was, finer than its reason (a refused connection, a 503);
   * absent: the reason's own (causeOf).
   */
  cause?: FailureCause;
  /** ISO 8601 time the data (or failure) was obtained from the upstream. */
  fetchedAt: string;
  cache: CacheState;
  /** The slot's data when status is `ok` (possibly stale); null otherwise. */
  data: SourceDataBySlot[S] | null;
}

/** The source does not cover the number: not asked, no cache read or written, no breaker or budget touched. */
export interface SkippedSlot {
  status: 'skipped';
  reason: SkipReason;
  data: null;
}

/** The caller's deadline (`waitMs`) passed first; the fetch goes on and fills the cache. */
export interface PendingSlot {
  status: 'pending';
  data: null;
}

export type SlotResult<S extends SourceSlot = SourceSlot> = AnsweredSlot<S> | SkippedSlot | PendingSlot;

export type LookupResult = { [S in SourceSlot]: SlotResult<S> };

export const SKIPPED_NOT_COVERED: SkippedSlot = Object.freeze({ status: 'skipped', reason: 'not_covered', data: null });

export const isAnswered = <S extends SourceSlot>(slot: SlotResult<S>): slot is AnsweredSlot<S> =>
  slot.status !== 'skipped' && slot.status !== 'pending';

/**
 * Options of one lookup, chosen by its caller. An object, not positional arguments, so that
 * each caller names what it sets and a new option is one new member.
 */
export interface LookupOptions {
  /** The number's keyed hash, when the caller already holds it (saves computing it again). */
  numberHash?: string;
  /**
   * How long the caller waits (ms); bounded by callerDeadlineMs. A slot whose fetch has not
   * finished by then is answered `pending`; its fetch goes on and fills the cache.
   */
  waitMs?: number;
  /** Aborting it detaches this caller (its waiting slots answer `aborted`); it never cancels a fetch. */
  signal?: AbortSignal;
  /**
   * The API client asking (a keyed hash of its address, never the address): a fetch this
   * lookup starts is queued and charged as this client's (fair queueing, its share of each
   * upstream budget). Absent: the service's own (CLI, canary), with no share.
   */
  client?: LookupClient;
}

/**
 * The one place a caller's wait is bounded: the lookup deadline when it chose none (or one that
 * is not a number), else its wait between 0 and the lookup deadline. The engine's deadline and
 * the HTTP layer's `Preference-Applied` both come from here.
 */
export function callerDeadlineMs(waitMs: number | undefined, lookupTimeoutMs: number): number {
  if (waitMs === undefined || !Number.isFinite(waitMs)) return lookupTimeoutMs;
  return Math.min(Math.max(0, waitMs), lookupTimeoutMs);
}

export interface LookupService {
  /** Never rejects: every failure is inside the per-slot results. */
  lookup(number: ParsedPhoneNumber, options?: LookupOptions): Promise<LookupResult>;
  /**
   * Synchronous, when the engine can read its cache without I/O: the lookup if every slot is
   * a fresh hit, else undefined. Creates no timer, signal or promise.
   */
  peekFresh?(number: ParsedPhoneNumber, numberHash?: string): FreshLookup | undefined;
  /**
   * For a result this engine returned whose every slot is a fresh answer (hit or just fetched;
   * none stale, failed, skipped or pending): when the first stops being fresh (epoch ms). Else
   * undefined.
   */
  freshUntilOf?(result: LookupResult): number | undefined;
}

/** A lookup answered from fresh hits only, and when the first of them stops being fresh. */
export interface FreshLookup {
  result: LookupResult;
  /** Epoch ms (engine clock) at which the first slot turns stale. */
  freshUntilMs: number;
}
