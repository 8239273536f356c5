// The lookup engine: asks the sources in parallel, each under its own deadline and its
// upstream's retry/breaker policy, the whole under the lookup deadline (or the caller's own,
// shorter one); caches each source's answer separately; shares one fetch among concurrent
// lookups of a number; and says, slot by slot, what it got and from where. It never rejects:
// every failure is a slot result.
//
// What is fresh, stale or expired, and what a failure leaves behind, is the cache policy
// (cache-policy.ts); one upstream fetch under its deadline and policy is source-fetch.ts; this
// file orchestrates the deadlines, the cache reads, coalescing and background refreshes.
// A source that does not cover the number (`covers`) is `skipped` before anything else: no
// cache read or write, no coalescing, no breaker, no budget. A caller that stops waiting (its
// deadline, its client gone) detaches from the fetch; the fetch runs to its own source deadline
// and fills the cache whoever still waits for it. A lookup whose every slot is a fresh hit in a
// cache that can be read synchronously (`peek`) is answered without any timer, abort signal or
// promise per slot (`peekFresh`).
import { setMaxListeners } from 'node:events';
import { anySignal } from '../abort-signals.js';
import type { KeyedHasher } from '../ports/key-hasher.js';
import { sourceCacheKeyOf, type CachedSourceResult, type SourceResultCache } from '../ports/source-cache.js';
import {
  causeOf,
  notFound,
  ok,
  type FailureCause,
  type FailureReason,
  type LookupClient,
  type Source,
  type SourcesBySlot,
  type SourceStatus,
} from '../ports/source.js';
import type { ParsedPhoneNumber } from '../phone-number.js';
import { mapSlots, settleSlots, SOURCE_SLOTS, type SourceDataBySlot, type SourceSlot } from '../report.js';
import {
  DEFAULT_TTL_JITTER_RATIO,
  freshnessOf,
  slotFromEntry,
  storeTtlSeconds,
  type CachePolicy,
} from './cache-policy.js';
import { createInProcessCoalescer, type FetchCoalescer } from './coalescer.js';
import { createUpstreamPolicy, type BreakerState, type ResilienceOptions, type UpstreamPolicy } from './resilience.js';
import {
  createSourceFetch,
  describeError,
  REAL_TIMERS,
  type EngineTimers,
  type FetchResult,
  type LookupLogger,
} from './source-fetch.js';
import {
  callerDeadlineMs,
  SKIPPED_NOT_COVERED,
  type AnsweredSlot,
  type CacheState,
  type FreshLookup,
  type LookupResult,
  type LookupService,
  type PendingSlot,
  type SlotResult,
} from './types.js';

export type { FreshLookup, LookupOptions } from './types.js';
export type { EngineTimers, LookupLogger } from './source-fetch.js';

/** The engine's deadlines and cache lifetimes, in the units their names say. */
export interface LookupTimings {
  /** Deadline of one upstream request, retries included. */
  sourceTimeoutMs: number;
  /** Deadline of a whole lookup: a slot not settled by then answers `timeout` (its fetch goes on). */
  lookupTimeoutMs: number;
  /** Lifetime of an `ok` answer. */
  cacheTtlSeconds: number;
  /** Lifetime of a `not_found` answer. */
  notFoundTtlSeconds: number;
  /** How long past its lifetime an answer may still be served as `stale`. */
  staleSeconds: number;
}

/**
 * One slot's answer to one lookup, for metrics and readiness. Skipped slots send none (no
 * upstream was concerned); a pending slot sends its fetch's own outcome when the fetch ends.
 */
export interface SourceOutcomeEvent {
  slot: SourceSlot;
  upstream: string;
  status: SourceStatus;
  reason?: FailureReason;
  /** With a reason: what the failure was (causeOf). */
  cause?: FailureCause;
  /** Time this lookup waited for the slot (0-ish for hits and stale answers; the whole fetch for a pending slot). */
  durationMs: number;
  cache: CacheState;
}

export interface LookupServiceOptions {
  sources: SourcesBySlot;
  cache: SourceResultCache;
  hashKey: KeyedHasher;
  timings: LookupTimings;
  /** Defaults to an in-process single-flight; a shared deployment passes the Redis one. */
  coalescer?: FetchCoalescer;
  /** Retry and breaker settings, the same for every upstream (each gets its own breaker). */
  resilience?: ResilienceOptions;
  /** Clock for cache freshness and `fetchedAt` (epoch ms). */
  now?: () => number;
  /** Timers for the deadlines (default: the real ones). */
  timers?: EngineTimers;
  /** Source of randomness for TTL jitter, in [0, 1). */
  random?: () => number;
  /** Relative TTL jitter: 0.1 means ±10 %. */
  ttlJitterRatio?: number;
  logger?: LookupLogger;
  onSourceOutcome?: (event: SourceOutcomeEvent) => void;
  /** Told after any slot of a number is written to the cache (a refresh, a recorded failure): caches built on top of the slots drop their copy. */
  onSlotWritten?: (numberHash: string) => void;
}

export interface EngineLookupService extends LookupService {
  /** Aborts fetches and background refreshes still running (shutdown). Lookups keep working. */
  close(): void;
  /** The breaker of the upstream behind a slot (readiness, tests). */
  breakerState(slot: SourceSlot): BreakerState;
  /**
   * Synchronous: the lookup when every slot is a fresh hit in a cache that can be peeked,
   * else undefined (also when a source does not cover the number). Creates no timer, signal
   * or promise; reports the hits like `lookup` does.
   */
  peekFresh(number: ParsedPhoneNumber, numberHash?: string): FreshLookup | undefined;
  freshUntilOf(result: LookupResult): number | undefined;
}

/** Why a caller stopped waiting for a slot: its own deadline (`pending`), the lookup deadline, its client gone. */
type Departure = 'pending' | 'timeout' | 'aborted';

/** What a lookup's slots wait under: one signal for the caller leaving, and why it left. */
interface Waiting {
  signal: AbortSignal;
  departure: () => Departure;
}

const LEFT = Symbol('left');

/** The value of a promise that never rejects, or LEFT as soon as the signal aborts (the promise goes on). */
function unlessLeft<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof LEFT> {
  if (signal.aborted) return Promise.resolve(LEFT);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(LEFT);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

export function createLookupService(options: LookupServiceOptions): EngineLookupService {
  const { sources, cache, hashKey, timings } = options;
  const timers = options.timers ?? REAL_TIMERS;
  const coalescer = options.coalescer ?? createInProcessCoalescer();
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const policy: CachePolicy = {
    okTtlSeconds: timings.cacheTtlSeconds,
    notFoundTtlSeconds: timings.notFoundTtlSeconds,
    staleSeconds: timings.staleSeconds,
    jitterRatio: options.ttlJitterRatio ?? DEFAULT_TTL_JITTER_RATIO,
  };
  const logger = options.logger;
  const resilience: ResilienceOptions = { now, ...options.resilience };
  const policies = mapSlots<Record<SourceSlot, UpstreamPolicy>>(() => createUpstreamPolicy(resilience));
  const closing = new AbortController();
  // Every running fetch and background refresh listens to `closing`; their number is bounded
  // by the number of distinct keys in flight, not by a small constant.
  setMaxListeners(0, closing.signal);
  /** Keys with a background refresh running in this process: one refresh per key. */
  const refreshing = new Set<string>();
  // Freshness bounds of the slot results and whole results this engine returned, for
  // freshUntilOf: kept beside the results so their shape (and the answers) stay as they are.
  const slotFreshUntil = new WeakMap<SlotResult, number>();
  const resultFreshUntil = new WeakMap<LookupResult, number>();
  const fetchAndStore = createSourceFetch({
    policies,
    timers,
    sourceTimeoutMs: timings.sourceTimeoutMs,
    now,
    random,
    cachePolicy: policy,
    logger,
    writeCache,
  });

  function isoAt(epochMs: number): string {
    return new Date(epochMs).toISOString();
  }

  /** The one question asked before any cache, coalescer, breaker or budget. */
  function covers(source: Source, number: ParsedPhoneNumber): boolean {
    if (source.covers === undefined) return true;
    try {
      return source.covers(number);
    } catch (error) {
      // A coverage rule that throws is a bug; asking the upstream is what happened before it existed.
      logger?.warn({ slot: source.slot, err: describeError(error) }, 'covers() threw; asking the source');
      return true;
    }
  }

  async function readCache(key: string, slot: SourceSlot): Promise<CachedSourceResult | undefined> {
    try {
      return await cache.get(key);
    } catch (error) {
      logger?.warn({ slot, err: describeError(error) }, 'source cache read failed; treating as a miss');
      return undefined;
    }
  }

  function writeCache(key: string, slot: SourceSlot, numberHash: string, value: CachedSourceResult): void {
    // Not awaited: the answer does not wait for a remote store; a lost write only costs a refetch.
    cache.set(key, value, storeTtlSeconds(value, now())).catch((error: unknown) => {
      logger?.warn({ slot, err: describeError(error) }, 'source cache write failed');
    });
    if (options.onSlotWritten !== undefined) {
      try {
        options.onSlotWritten(numberHash);
      } catch (error) {
        logger?.warn({ slot, err: describeError(error) }, 'onSlotWritten hook threw');
      }
    }
  }

  /** A slot with no data that says why: a failure of ours or the caller's, not the upstream's answer. */
  function errorSlot<S extends SourceSlot>(reason: 'timeout' | 'aborted'): AnsweredSlot<S> {
    return { status: 'error', reason, fetchedAt: isoAt(now()), cache: 'miss', data: null };
  }

  /** The slot of a caller that stopped waiting: `pending` when it chose its deadline, else an error. */
  function departedSlot<S extends SourceSlot>(departure: Departure): PendingSlot | AnsweredSlot<S> {
    return departure === 'pending' ? { status: 'pending', data: null } : errorSlot<S>(departure);
  }

  function fromFetch<S extends SourceSlot>({ outcome, fetchedAt }: FetchResult<S>): AnsweredSlot<S> {
    switch (outcome.status) {
      case 'ok':
        return { status: 'ok', fetchedAt, cache: 'miss', data: outcome.data };
      case 'not_found':
        return { status: 'not_found', fetchedAt, cache: 'miss', data: null };
      default:
        return {
          status: outcome.status,
          reason: outcome.reason,
          cause: causeOf(outcome),
          fetchedAt,
          cache: 'miss',
          data: null,
        };
    }
  }

  /** A fresh entry another instance (or an earlier flight) stored, as a fetch result; undefined until there is one. */
  async function readSettledFromCache<S extends SourceSlot>(
    key: string,
    slot: SourceSlot,
  ): Promise<FetchResult<S> | undefined> {
    const entry = await readCache(key, slot);
    if (entry === undefined || entry.freshUntil <= now()) return undefined;
    return {
      outcome: entry.status === 'ok' ? ok(entry.data as SourceDataBySlot[S]) : notFound(),
      fetchedAt: entry.fetchedAt,
      freshUntil: entry.freshUntil,
    };
  }

  /**
   * The key's shared fetch: joined if one is in flight, else started. Its callers only wait for
   * it; `closing` (shutdown) is the one signal that ends it early, so a caller that leaves
   * never turns a healthy upstream's fetch into a `timeout` on its breaker.
   */
  function sharedFetch<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    key: string,
    numberHash: string,
    previous: CachedSourceResult | undefined,
    client: LookupClient | undefined,
  ): Promise<FetchResult<S>> {
    // A flight joined by several clients is charged to the one that started it.
    return coalescer.run<FetchResult<S>>(
      key,
      (runSignal) => fetchAndStore(source, number, key, numberHash, previous, runSignal, client),
      {
        runSignal: closing.signal,
        // With a shared coalescer, a fetch another instance is already making ends this one as
        // soon as its result is in the shared cache.
        readSettled: () => readSettledFromCache<S>(key, source.slot),
      },
    );
  }

  function refreshInBackground<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    key: string,
    numberHash: string,
    previous: CachedSourceResult,
    client: LookupClient | undefined,
  ): void {
    if (closing.signal.aborted || refreshing.has(key)) return;
    refreshing.add(key);
    sharedFetch(source, number, key, numberHash, previous, client)
      .catch(() => undefined) // a failed refresh is recorded in the entry; nobody waits for it
      .finally(() => refreshing.delete(key));
  }

  async function resolveSlot<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    numberHash: string,
    client: LookupClient | undefined,
  ): Promise<AnsweredSlot<S>> {
    const slot = source.slot;
    const key = sourceCacheKeyOf(slot, numberHash);
    const cached = await readCache(key, slot);
    const freshness = freshnessOf(cached, now());
    if (cached !== undefined && freshness === 'fresh') {
      const hit = slotFromEntry<S>(cached, 'hit');
      slotFreshUntil.set(hit, cached.freshUntil);
      return hit;
    }
    if (cached !== undefined && freshness === 'stale') {
      refreshInBackground(source, number, key, numberHash, cached, client);
      return slotFromEntry<S>(cached, 'stale');
    }
    let fetched: FetchResult<S>;
    try {
      fetched = await sharedFetch(source, number, key, numberHash, undefined, client);
    } catch {
      // The shared fetch ended without a result: shutdown, or another instance's fetch of this
      // key outlived the wait for it (redis-fetch-coalescer.ts).
      return errorSlot<S>(closing.signal.aborted ? 'aborted' : 'timeout');
    }
    const fetchedSlot = fromFetch(fetched);
    if (fetched.freshUntil !== undefined) slotFreshUntil.set(fetchedSlot, fetched.freshUntil);
    return fetchedSlot;
  }

  /** A slot's result, settled by the caller's deadline at the latest, whatever the cache or the source do. */
  async function lookupSlot<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    numberHash: string,
    waiting: Waiting,
    client: LookupClient | undefined,
  ): Promise<SlotResult<S>> {
    if (!covers(source, number)) return SKIPPED_NOT_COVERED;
    const startedAt = performance.now();
    const resolving = resolveSlot(source, number, numberHash, client).catch((error: unknown): AnsweredSlot<S> => {
      logger?.warn({ slot: source.slot, err: describeError(error) }, 'lookup slot failed unexpectedly');
      return errorSlot<S>('aborted');
    });
    const settled = await unlessLeft(resolving, waiting.signal);
    if (settled !== LEFT) {
      reportOutcome(source, settled, performance.now() - startedAt);
      return settled;
    }
    const departed = departedSlot<S>(waiting.departure());
    if (departed.status === 'pending') {
      // The fetch goes on: what it ends with is this lookup's outcome, reported when it comes.
      void resolving.then((late) => reportOutcome(source, late, performance.now() - startedAt));
    } else {
      reportOutcome(source, departed, performance.now() - startedAt);
    }
    return departed;
  }

  function reportOutcome(source: Source, result: AnsweredSlot, durationMs: number): void {
    if (options.onSourceOutcome === undefined) return;
    const event: SourceOutcomeEvent = {
      slot: source.slot,
      upstream: source.name,
      status: result.status,
      durationMs,
      cache: result.cache,
    };
    if (result.reason !== undefined) {
      event.reason = result.reason;
      event.cause = result.cause ?? causeOf({ reason: result.reason });
    }
    try {
      options.onSourceOutcome(event);
    } catch (error) {
      logger?.warn({ slot: source.slot, err: describeError(error) }, 'onSourceOutcome hook threw');
    }
  }

  /** A slot's entry when it is fresh in a synchronously readable cache; undefined otherwise. */
  function peekFreshEntry(slot: SourceSlot, numberHash: string, nowMs: number): CachedSourceResult | undefined {
    if (cache.peek === undefined) return undefined;
    let entry: CachedSourceResult | undefined;
    try {
      entry = cache.peek(sourceCacheKeyOf(slot, numberHash));
    } catch {
      return undefined;
    }
    return entry !== undefined && entry.freshUntil > nowMs ? entry : undefined;
  }

  function peekFresh(number: ParsedPhoneNumber, numberHash: string): FreshLookup | undefined {
    // An answer with a skipped slot is never held as fresh (front cache): not even peeked.
    if (!SOURCE_SLOTS.every((slot) => covers(sources[slot], number))) return undefined;
    const nowMs = now();
    const entries: Partial<Record<SourceSlot, CachedSourceResult>> = {};
    let freshUntilMs = Number.POSITIVE_INFINITY;
    for (const slot of SOURCE_SLOTS) {
      const entry = peekFreshEntry(slot, numberHash, nowMs);
      if (entry === undefined) return undefined;
      entries[slot] = entry;
      freshUntilMs = Math.min(freshUntilMs, entry.freshUntil);
    }
    const result = mapSlots<LookupResult>((slot) => {
      const entry = entries[slot];
      // Every slot was filled above, or we returned.
      if (entry === undefined) throw new Error('unreachable: a slot without its entry');
      return slotFromEntry(entry, 'hit') as LookupResult[typeof slot];
    });
    for (const slot of SOURCE_SLOTS) {
      const hit = result[slot];
      if (hit.status !== 'skipped' && hit.status !== 'pending') reportOutcome(sources[slot], hit, 0);
    }
    return { result, freshUntilMs };
  }

  return {
    async lookup(number, lookupOptions = {}) {
      const { signal, waitMs } = lookupOptions;
      const numberHash = lookupOptions.numberHash ?? hashKey(number.e164);
      const fresh = peekFresh(number, numberHash);
      if (fresh !== undefined) {
        resultFreshUntil.set(fresh.result, fresh.freshUntilMs);
        return fresh.result;
      }
      // The caller's wait, when it chose one, bounds the lookup (never beyond the lookup
      // deadline); slots still fetching then are `pending`, and at the lookup deadline `timeout`.
      const chosen = waitMs !== undefined && Number.isFinite(waitMs);
      const deadlineMs = callerDeadlineMs(waitMs, timings.lookupTimeoutMs);
      const deadline = new AbortController();
      const timer = timers.setTimeout(() => deadline.abort(), deadlineMs);
      const linked = signal === undefined ? undefined : anySignal([deadline.signal, signal]);
      const waiting: Waiting = {
        signal: linked?.signal ?? deadline.signal,
        departure: () => (deadline.signal.aborted ? (chosen ? 'pending' : 'timeout') : 'aborted'),
      };
      try {
        const result = await settleSlots<LookupResult>(
          (slot) =>
            lookupSlot(sources[slot], number, numberHash, waiting, lookupOptions?.client) as Promise<
              LookupResult[typeof slot]
            >,
        );
        let freshUntil = Number.POSITIVE_INFINITY;
        for (const slot of SOURCE_SLOTS)
          freshUntil = Math.min(freshUntil, slotFreshUntil.get(result[slot]) ?? Number.NEGATIVE_INFINITY);
        if (freshUntil !== Number.NEGATIVE_INFINITY) resultFreshUntil.set(result, freshUntil);
        return result;
      } finally {
        timers.clearTimeout(timer);
        linked?.release();
      }
    },
    peekFresh(number, numberHash) {
      return peekFresh(number, numberHash ?? hashKey(number.e164));
    },
    freshUntilOf(result) {
      return resultFreshUntil.get(result);
    },
    close() {
      closing.abort();
    },
    breakerState(slot) {
      return policies[slot].breakerState();
    },
  };
}
