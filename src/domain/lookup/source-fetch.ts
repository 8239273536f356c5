// One upstream fetch of one slot, the work a coalesced flight shares: the request under the
// source deadline and the upstream's retry and breaker policy, raced against its signal so an
// adapter that ignores the signal still cannot hold a lookup, then what is worth keeping written
// to the cache (an answer, or a failure recorded on the entry it leaves behind).
//
// The signals a fetch runs under, outermost first, and why each exists:
//   1. the run's: aborted only when the engine closes (shutdown). Callers waiting for the fetch
//      are not among them: a caller that stops waiting (its deadline, `?wait`, its client gone)
//      detaches in lookup-service.ts, and the fetch runs on to fill the cache for the next one;
//   2. the source deadline (SOURCE_TIMEOUT_MS), here, which no fetch outlives;
//   3. each attempt's, from the policy, so a retry starts with a fresh request (resilience.ts).
// Why a fetch was abandoned decides how the breaker counts it: the source deadline passing is
// the upstream being too slow (`timeout`); a shutdown is not (`aborted`).
import { anySignal } from '../abort-signals.js';
import type { CachedSourceResult } from '../ports/source-cache.js';
import {
  causeOf,
  failed,
  type LookupClient,
  type Source,
  type SourceCall,
  type SourceOutcome,
} from '../ports/source.js';
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import { entryAfterFailure, entryForAnswer, type CachePolicy } from './cache-policy.js';
import type { UpstreamPolicy } from './resilience.js';

/** Timers the deadlines use; tests inject their own to run deadlines without real waits. */
export interface EngineTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: EngineTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface LookupLogger {
  warn(obj: object, msg: string): void;
}

export interface FetchResult<S extends SourceSlot> {
  outcome: SourceOutcome<SourceDataBySlot[S]>;
  fetchedAt: string;
  /** The cached entry's freshness bound, when the outcome was cached. */
  freshUntil?: number;
}

export interface SourceFetchOptions {
  policies: Record<SourceSlot, UpstreamPolicy>;
  timers: EngineTimers;
  sourceTimeoutMs: number;
  now: () => number;
  random: () => number;
  cachePolicy: CachePolicy;
  logger: LookupLogger | undefined;
  /** Writes a slot's entry (not awaited by the answer) and tells what is built on the slots. */
  writeCache: (key: string, slot: SourceSlot, numberHash: string, entry: CachedSourceResult) => void;
}

export type SourceFetch = <S extends SourceSlot>(
  source: Source<S>,
  number: ParsedPhoneNumber,
  key: string,
  numberHash: string,
  previous: CachedSourceResult | undefined,
  /** Aborts the fetch early: the engine closing, never a caller leaving. */
  runSignal: AbortSignal,
  /** The client whose lookup started the fetch (fair queueing and shares in the fetchers). */
  client?: LookupClient,
) => Promise<FetchResult<S>>;

export function createSourceFetch(options: SourceFetchOptions): SourceFetch {
  const { policies, timers, sourceTimeoutMs, now, random, cachePolicy, logger, writeCache } = options;

  /** One upstream request, raced against its signal. */
  function callSource<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    signal: AbortSignal,
    abortReason: () => 'timeout' | 'aborted',
    call: SourceCall,
  ): Promise<SourceOutcome<SourceDataBySlot[S]>> {
    if (signal.aborted) return Promise.resolve(failed(abortReason()));
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(failed(abortReason()));
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => source.lookup(number, signal, call))
        .then(
          (outcome) => resolve(outcome),
          (error: unknown) => {
            // An adapter that throws broke its contract; the nearest honest reason is that we
            // could not read what the upstream gave.
            logger?.warn(
              { slot: source.slot, upstream: source.name, err: describeError(error) },
              'source threw instead of returning an outcome',
            );
            resolve(failed(signal.aborted ? abortReason() : 'parse'));
          },
        )
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /**
   * One line per failed fetch, with its cause class (docs/reliability.md#why-a-source-fails): the
   * slot, the upstream, the reason, the cause and, for a page it could not read, the markers it
   * lacked. Never the number nor a URL (they hold it); `aborted` (we gave up) is no failure.
   */
  function logFailure(source: Source, outcome: SourceOutcome<unknown>): void {
    if (logger === undefined || outcome.status === 'ok' || outcome.status === 'not_found') return;
    if (outcome.reason === 'aborted') return;
    const cause = causeOf(outcome);
    const named = outcome.status === 'error' ? (outcome.missing ?? []) : [];
    const missing = named.length > 0 ? [...named] : undefined;
    const details = {
      slot: source.slot,
      upstream: source.name,
      status: outcome.status,
      reason: outcome.reason,
      cause,
      ...(missing === undefined ? {} : { missing }),
    };
    const markers = missing === undefined ? '' : ` (missing markers: ${missing.join(', ')})`;
    logger.warn(details, `${source.name} failed: ${cause}${markers}`);
  }

  const fetchAndStore: SourceFetch = async (source, number, key, numberHash, previous, runSignal, client) => {
    const slot = source.slot;
    const deadline = new AbortController();
    const timer = timers.setTimeout(() => deadline.abort(), sourceTimeoutMs);
    const { signal, release } = anySignal([runSignal, deadline.signal]);
    const abortReason = (): 'timeout' | 'aborted' => (deadline.signal.aborted ? 'timeout' : 'aborted');
    let outcome: SourceOutcome<SourceDataBySlot[typeof slot]>;
    const deadlineAt = Date.now() + sourceTimeoutMs;
    // The fetchers send nothing they cannot give its time on the wire before this deadline, so
    // the deadline passing is the upstream being slow, never a wait in this service's own queue.
    const call: SourceCall = client === undefined ? { deadlineAt } : { client, deadlineAt };
    try {
      outcome = await policies[slot].execute(
        (attemptSignal) => callSource(source, number, attemptSignal, abortReason, call),
        {
          signal,
          deadlineAt,
          // The per-slot cache key carries the number's keyed hash: the breaker counts distinct numbers by it.
          numberKey: key,
        },
      );
    } finally {
      timers.clearTimeout(timer);
      release();
    }
    // Shut down mid-fetch: whatever the adapter made of the abort, say why we aborted.
    if (runSignal.aborted && !deadline.signal.aborted) outcome = failed(abortReason());
    logFailure(source, outcome);
    const fetchedAtMs = now();
    if (outcome.status === 'ok' || outcome.status === 'not_found') {
      const entry = entryForAnswer(
        outcome.status,
        outcome.status === 'ok' ? outcome.data : null,
        fetchedAtMs,
        cachePolicy,
        random(),
      );
      writeCache(key, slot, numberHash, entry);
      return { outcome, fetchedAt: entry.fetchedAt, freshUntil: entry.freshUntil };
    }
    const kept = entryAfterFailure(previous, outcome.reason, fetchedAtMs);
    if (kept !== undefined) writeCache(key, slot, numberHash, kept);
    return { outcome, fetchedAt: new Date(fetchedAtMs).toISOString() };
  };
  return fetchAndStore;
}

/** Error text for logs, truncated; error objects from adapters never carry the number by contract. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, 200);
}
