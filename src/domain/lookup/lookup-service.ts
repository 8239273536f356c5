// The lookup engine: asks the three sources in parallel, each under its own deadline and its
// upstream's retry/breaker policy, the whole under the lookup deadline; caches each source's
// answer separately; shares one fetch among concurrent lookups of a number; and says, slot by
// slot, what it got and from where. It never rejects: every failure is a slot result.
//
// What is fresh, stale or expired, and what a failure leaves behind, is the cache policy
// (cache-policy.ts); one upstream fetch under its deadline and policy is source-fetch.ts; this
// file orchestrates the lookup deadline, the cache reads, coalescing and background refreshes.
// A lookup whose three slots are fresh hits in a cache that can be read synchronously (`peek`)
// is answered without any timer, abort signal or promise per slot (`peekFresh`).
import { setMaxListeners } from 'node:events';
import type { KeyedHasher } from '../ports/key-hasher.js';
import { sourceCacheKeyOf, type CachedSourceResult, type SourceResultCache } from '../ports/source-cache.js';
import { notFound, ok, type Source, type SourcesBySlot, type SourceStatus, type FailureReason } from '../ports/source.js';
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import { DEFAULT_TTL_JITTER_RATIO, freshnessOf, slotFromEntry, storeTtlSeconds, type CachePolicy } from './cache-policy.js';
import { createInProcessCoalescer, type FetchCoalescer } from './coalescer.js';
import { createUpstreamPolicy, type BreakerState, type ResilienceOptions, type UpstreamPolicy } from './resilience.js';
import { createSourceFetch, describeError, LookupDeadlineExceeded, REAL_TIMERS, type EngineTimers, type FetchResult, type LookupLogger } from './source-fetch.js';
import type { CacheState, FreshLookup, LookupResult, LookupService, SlotResult } from './types.js';

export type { FreshLookup } from './types.js';
export type { EngineTimers, LookupLogger } from './source-fetch.js';

/** The engine's deadlines and cache lifetimes, in the units their names say. */
export interface LookupTimings {
  /** Deadline of one upstream request, retries included. */
  sourceTimeoutMs: number;
  /** Deadline of a whole lookup: a slot not settled by then answers `timeout`. */
  lookupTimeoutMs: number;
  /** Lifetime of an `ok` answer. */
  cacheTtlSeconds: number;
  /** Lifetime of a `not_found` answer. */
  notFoundTtlSeconds: number;
  /** How long past its lifetime an answer may still be served as `stale`. */
  staleSeconds: number;
}

export interface SourceOutcomeEvent {
  slot: SourceSlot;
  upstream: string;
  status: SourceStatus;
  reason?: FailureReason;
  /** Time this lookup waited for the slot (0-ish for hits and stale answers). */
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
  /** Aborts background refreshes still running (shutdown). Lookups keep working. */
  close(): void;
  /** The breaker of the upstream behind a slot (readiness, tests). */
  breakerState(slot: SourceSlot): BreakerState;
  /**
   * Synchronous: the lookup when its three slots are fresh hits in a cache that can be peeked,
   * else undefined. Creates no timer, signal or promise; reports the hits like `lookup` does.
   */
  peekFresh(number: ParsedPhoneNumber, numberHash?: string): FreshLookup | undefined;
  freshUntilOf(result: LookupResult): number | undefined;
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
  const policies: Record<SourceSlot, UpstreamPolicy> = {
    primary: createUpstreamPolicy(resilience),
    community: createUpstreamPolicy(resilience),
    signals: createUpstreamPolicy(resilience),
  };
  const closing = new AbortController();
  // Every running background refresh listens to `closing`; their number is bounded by the
  // number of distinct stale keys, not by a small constant.
  setMaxListeners(0, closing.signal);
  /** Keys with a background refresh running in this process: one refresh per key. */
  const refreshing = new Set<string>();
  // Freshness bounds of the slot results and whole results this engine returned, for
  // freshUntilOf: kept beside the results so their shape (and the answers) stay as they are.
  const slotFreshUntil = new WeakMap<SlotResult, number>();
  const resultFreshUntil = new WeakMap<LookupResult, number>();
  const fetchAndStore = createSourceFetch({ policies, timers, sourceTimeoutMs: timings.sourceTimeoutMs, now, random, cachePolicy: policy, logger, writeCache });

  function isoAt(epochMs: number): string {
    return new Date(epochMs).toISOString();
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

  /** The slot of a caller that stopped waiting (lookup deadline or client gone): no data, says why. */
  function abandonedSlot<S extends SourceSlot>(reason: 'timeout' | 'aborted'): SlotResult<S> {
    return { status: 'error', reason, fetchedAt: isoAt(now()), cache: 'miss', data: null };
  }

  function fromFetch<S extends SourceSlot>({ outcome, fetchedAt }: FetchResult<S>): SlotResult<S> {
    switch (outcome.status) {
      case 'ok':
        return { status: 'ok', fetchedAt, cache: 'miss', data: outcome.data };
      case 'not_found':
        return { status: 'not_found', fetchedAt, cache: 'miss', data: null };
      default:
        return { status: outcome.status, reason: outcome.reason, fetchedAt, cache: 'miss', data: null };
    }
  }

  /** A fresh entry another instance (or an earlier flight) stored, as a fetch result; undefined until there is one. */
  async function readSettledFromCache<S extends SourceSlot>(key: string, slot: SourceSlot): Promise<FetchResult<S> | undefined> {
    const entry = await readCache(key, slot);
    if (entry === undefined || entry.freshUntil <= now()) return undefined;
    return { outcome: entry.status === 'ok' ? ok(entry.data as SourceDataBySlot[S]) : notFound(), fetchedAt: entry.fetchedAt, freshUntil: entry.freshUntil };
  }

  function refreshInBackground<S extends SourceSlot>(source: Source<S>, number: ParsedPhoneNumber, key: string, numberHash: string, previous: CachedSourceResult): void {
    if (closing.signal.aborted || refreshing.has(key)) return;
    refreshing.add(key);
    coalescer
      // readSettled: with a shared coalescer, a refresh another instance is already making
      // ends this one as soon as its result is in the shared cache.
      .run(key, (shared) => fetchAndStore(source, number, key, numberHash, previous, shared), { signal: closing.signal, readSettled: () => readSettledFromCache<S>(key, source.slot) })
      .catch(() => undefined) // a failed refresh is recorded in the entry; nobody waits for it
      .finally(() => refreshing.delete(key));
  }

  async function resolveSlot<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    numberHash: string,
    callerSignal: AbortSignal,
    callerAbortReason: () => 'timeout' | 'aborted',
  ): Promise<SlotResult<S>> {
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
      refreshInBackground(source, number, key, numberHash, cached);
      return slotFromEntry<S>(cached, 'stale');
    }
    try {
      const fetched = await coalescer.run<FetchResult<S>>(key, (shared) => fetchAndStore(source, number, key, numberHash, undefined, shared), {
        signal: callerSignal,
        readSettled: () => readSettledFromCache<S>(key, slot),
      });
      const fetchedSlot = fromFetch(fetched);
      if (fetched.freshUntil !== undefined) slotFreshUntil.set(fetchedSlot, fetched.freshUntil);
      return fetchedSlot;
    } catch {
      return abandonedSlot<S>(callerAbortReason());
    }
  }

  /** A slot's result, settled by the lookup deadline at the latest, whatever the cache or the source do. */
  async function lookupSlot<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    numberHash: string,
    callerSignal: AbortSignal,
    callerAbortReason: () => 'timeout' | 'aborted',
  ): Promise<SlotResult<S>> {
    const startedAt = performance.now();
    const abandoned = (): SlotResult<S> => abandonedSlot<S>(callerAbortReason());
    const result = callerSignal.aborted
      ? abandoned()
      : await new Promise<SlotResult<S>>((resolve) => {
          const onAbort = (): void => resolve(abandoned());
          callerSignal.addEventListener('abort', onAbort, { once: true });
          resolveSlot(source, number, numberHash, callerSignal, callerAbortReason)
            .then(resolve, (error: unknown) => {
              logger?.warn({ slot: source.slot, err: describeError(error) }, 'lookup slot failed unexpectedly');
              resolve(abandoned());
            })
            .finally(() => callerSignal.removeEventListener('abort', onAbort));
        });
    reportOutcome(source, result, performance.now() - startedAt);
    return result;
  }

  function reportOutcome(source: Source<SourceSlot>, result: SlotResult, durationMs: number): void {
    if (options.onSourceOutcome === undefined) return;
    const event: SourceOutcomeEvent = { slot: source.slot, upstream: source.name, status: result.status, durationMs, cache: result.cache };
    if (result.reason !== undefined) event.reason = result.reason;
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
    const nowMs = now();
    const primary = peekFreshEntry('primary', numberHash, nowMs);
    if (primary === undefined) return undefined;
    const community = peekFreshEntry('community', numberHash, nowMs);
    if (community === undefined) return undefined;
    const signals = peekFreshEntry('signals', numberHash, nowMs);
    if (signals === undefined) return undefined;
    const result: LookupResult = {
      primary: slotFromEntry<'primary'>(primary, 'hit'),
      community: slotFromEntry<'community'>(community, 'hit'),
      signals: slotFromEntry<'signals'>(signals, 'hit'),
    };
    reportOutcome(sources.primary, result.primary, 0);
    reportOutcome(sources.community, result.community, 0);
    reportOutcome(sources.signals, result.signals, 0);
    return { result, freshUntilMs: Math.min(primary.freshUntil, community.freshUntil, signals.freshUntil) };
  }

  return {
    async lookup(number, signal, givenHash) {
      const numberHash = givenHash ?? hashKey(number.e164);
      const fresh = peekFresh(number, numberHash);
      if (fresh !== undefined) {
        resultFreshUntil.set(fresh.result, fresh.freshUntilMs);
        return fresh.result;
      }
      const deadline = new AbortController();
      const timer = timers.setTimeout(() => deadline.abort(new LookupDeadlineExceeded()), timings.lookupTimeoutMs);
      const callerSignal = signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, signal]);
      const callerAbortReason = (): 'timeout' | 'aborted' => (deadline.signal.aborted ? 'timeout' : 'aborted');
      try {
        const [primary, community, signals] = await Promise.all([
          lookupSlot(sources.primary, number, numberHash, callerSignal, callerAbortReason),
          lookupSlot(sources.community, number, numberHash, callerSignal, callerAbortReason),
          lookupSlot(sources.signals, number, numberHash, callerSignal, callerAbortReason),
        ]);
        const result: LookupResult = { primary, community, signals };
        const primaryUntil = slotFreshUntil.get(primary);
        const communityUntil = slotFreshUntil.get(community);
        const signalsUntil = slotFreshUntil.get(signals);
        if (primaryUntil !== undefined && communityUntil !== undefined && signalsUntil !== undefined) {
          resultFreshUntil.set(result, Math.min(primaryUntil, communityUntil, signalsUntil));
        }
        return result;
      } finally {
        timers.clearTimeout(timer);
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
