// The lookup engine: asks the three sources in parallel, each under its own deadline and its
// upstream's retry/breaker policy, the whole under the lookup deadline; caches each source's
// answer separately; shares one fetch among concurrent lookups of a number; and says, slot by
// slot, what it got and from where. It never rejects: every failure is a slot result.
//
// Cache semantics (per slot, per number):
// - `ok` lives CACHE_TTL_S, `not_found` CACHE_NOT_FOUND_TTL_S, ±10 % jitter so entries written
//   together do not expire together; failures are never cached.
// - Past its TTL but within CACHE_STALE_S an entry is served at once as `stale` while one
//   background refresh runs (stale-while-revalidate). A failed refresh leaves the entry in place
//   and records its reason, which later stale answers carry (stale-if-error): a banned or broken
//   upstream degrades to old data, not to no data.
import { setMaxListeners } from 'node:events';
import type { Config } from '../../config/config.js';
import type { KeyedHasher } from '../../infra/hash.js';
import { sourceCacheKeyOf, type CachedSourceResult, type SourceResultCache } from '../../infra/cache/source-cache.js';
import { failed, notFound, ok, type Source, type SourceOutcome, type SourcesBySlot, type SourceStatus } from '../../sources/source.js';
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';
import { createInProcessCoalescer, type FetchCoalescer } from './coalescer.js';
import { createUpstreamPolicy, type BreakerState, type ResilienceOptions, type UpstreamPolicy } from './resilience.js';
import type { CacheState, LookupResult, LookupService, SlotResult } from './types.js';

export type LookupConfig = Pick<Config, 'SOURCE_TIMEOUT_MS' | 'LOOKUP_TIMEOUT_MS' | 'CACHE_TTL_S' | 'CACHE_NOT_FOUND_TTL_S' | 'CACHE_STALE_S'>;

/** One slot's outcome in one lookup: the hook metrics plug into. Carries no number. */
export interface SourceOutcomeEvent {
  slot: SourceSlot;
  upstream: string;
  status: SourceStatus;
  reason?: string;
  /** Time this lookup waited for the slot (0-ish for hits and stale answers). */
  durationMs: number;
  cache: CacheState;
}

export interface LookupLogger {
  warn(obj: object, msg: string): void;
}

export interface LookupServiceOptions {
  sources: SourcesBySlot;
  cache: SourceResultCache;
  hashKey: KeyedHasher;
  config: LookupConfig;
  /** Defaults to an in-process single-flight; the Redis issue passes a distributed one. */
  coalescer?: FetchCoalescer;
  /** Retry and breaker settings, the same for every upstream (each gets its own breaker). */
  resilience?: ResilienceOptions;
  /** Clock for cache freshness and `fetchedAt` (epoch ms). Deadlines use real timers. */
  now?: () => number;
  /** Source of randomness for TTL jitter, in [0, 1). */
  random?: () => number;
  /** Relative TTL jitter: 0.1 means ±10 %. */
  ttlJitterRatio?: number;
  logger?: LookupLogger;
  onSourceOutcome?: (event: SourceOutcomeEvent) => void;
}

export interface EngineLookupService extends LookupService {
  /** Aborts background refreshes still running (shutdown). Lookups keep working. */
  close(): void;
  /** The breaker of the upstream behind a slot (readiness, tests). */
  breakerState(slot: SourceSlot): BreakerState;
}

interface FetchResult<S extends SourceSlot> {
  outcome: SourceOutcome<SourceDataBySlot[S]>;
  fetchedAt: string;
}

const DEFAULT_TTL_JITTER_RATIO = 0.1;

/** Abort reason of a lookup whose deadline passed, so a fetch everyone abandoned for that reason counts as a timeout. */
class LookupDeadlineExceeded extends Error {
  override name = 'LookupDeadlineExceeded';
}

export function createLookupService(options: LookupServiceOptions): EngineLookupService {
  const { sources, cache, hashKey, config } = options;
  const coalescer = options.coalescer ?? createInProcessCoalescer();
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const jitterRatio = options.ttlJitterRatio ?? DEFAULT_TTL_JITTER_RATIO;
  const logger = options.logger;
  const policies: Record<SourceSlot, UpstreamPolicy> = {
    primary: createUpstreamPolicy(options.resilience),
    community: createUpstreamPolicy(options.resilience),
    signals: createUpstreamPolicy(options.resilience),
  };
  const closing = new AbortController();
  // Every running background refresh listens to `closing`; their number is bounded by the
  // number of distinct stale keys, not by a small constant.
  setMaxListeners(0, closing.signal);
  /** Keys with a background refresh running in this process: one refresh per key. */
  const refreshing = new Set<string>();

  function isoAt(epochMs: number): string {
    return new Date(epochMs).toISOString();
  }

  function jitteredTtlMs(ttlSeconds: number): number {
    return Math.round(ttlSeconds * 1000 * (1 + (random() * 2 - 1) * jitterRatio));
  }

  async function readCache(key: string, slot: SourceSlot): Promise<CachedSourceResult | undefined> {
    try {
      return await cache.get(key);
    } catch (error) {
      logger?.warn({ slot, err: describeError(error) }, 'source cache read failed; treating as a miss');
      return undefined;
    }
  }

  function writeCache(key: string, slot: SourceSlot, value: CachedSourceResult): void {
    const ttlSeconds = Math.ceil((value.staleUntil - now()) / 1000);
    // Not awaited: the answer does not wait for a remote store; a lost write only costs a refetch.
    cache.set(key, value, ttlSeconds).catch((error: unknown) => {
      logger?.warn({ slot, err: describeError(error) }, 'source cache write failed');
    });
  }

  /** One upstream request, raced against its signal: an adapter that ignores the signal still cannot hold the lookup. */
  function callSource<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    signal: AbortSignal,
    abortReason: () => 'timeout' | 'aborted',
  ): Promise<SourceOutcome<SourceDataBySlot[S]>> {
    if (signal.aborted) return Promise.resolve(failed(abortReason()));
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(failed(abortReason()));
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => source.lookup(number, signal))
        .then(
          (outcome) => resolve(outcome),
          (error: unknown) => {
            // An adapter that throws broke its contract; the nearest honest reason is that we
            // could not read what the upstream gave.
            logger?.warn({ slot: source.slot, upstream: source.name, err: describeError(error) }, 'source threw instead of returning an outcome');
            resolve(failed(signal.aborted ? abortReason() : 'parse'));
          },
        )
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** The shared work of one coalesced fetch: request (with retry/breaker), then cache what is worth caching. */
  async function fetchAndStore<S extends SourceSlot>(
    source: Source<S>,
    number: ParsedPhoneNumber,
    key: string,
    previous: CachedSourceResult | undefined,
    sharedSignal: AbortSignal,
  ): Promise<FetchResult<S>> {
    const slot = source.slot;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), config.SOURCE_TIMEOUT_MS);
    const signal = AbortSignal.any([sharedSignal, deadline.signal]);
    // Abandoned because the lookup deadline passed is still the upstream being too slow (it
    // counts for the breaker); abandoned because the clients left is not.
    const abortReason = (): 'timeout' | 'aborted' =>
      deadline.signal.aborted || sharedSignal.reason instanceof LookupDeadlineExceeded ? 'timeout' : 'aborted';
    let outcome: SourceOutcome<SourceDataBySlot[S]>;
    try {
      outcome = await policies[slot].execute((attemptSignal) => callSource(source, number, attemptSignal, abortReason), {
        signal,
        deadlineAt: Date.now() + config.SOURCE_TIMEOUT_MS,
      });
    } finally {
      clearTimeout(timer);
    }
    // Everyone waiting gave up: whatever the adapter made of the abort, say why we aborted.
    if (sharedSignal.aborted && !deadline.signal.aborted) outcome = failed(abortReason());
    const fetchedAtMs = now();
    const fetchedAt = isoAt(fetchedAtMs);
    if (outcome.status === 'ok' || outcome.status === 'not_found') {
      const freshUntil =
        fetchedAtMs + jitteredTtlMs(outcome.status === 'ok' ? config.CACHE_TTL_S : config.CACHE_NOT_FOUND_TTL_S);
      writeCache(key, slot, {
        status: outcome.status,
        data: outcome.status === 'ok' ? outcome.data : null,
        fetchedAt,
        freshUntil,
        staleUntil: freshUntil + config.CACHE_STALE_S * 1000,
      });
    } else if (previous !== undefined && previous.staleUntil > fetchedAtMs && outcome.reason !== 'aborted' && previous.lastFailure !== outcome.reason) {
      writeCache(key, slot, { ...previous, lastFailure: outcome.reason });
    }
    return { outcome, fetchedAt };
  }

  /** The slot of a caller that stopped waiting (lookup deadline or client gone): no data, says why. */
  function abandonedSlot<S extends SourceSlot>(reason: 'timeout' | 'aborted'): SlotResult<S> {
    return { status: 'error', reason, fetchedAt: isoAt(now()), cache: 'miss', data: null };
  }

  function fromCache<S extends SourceSlot>(entry: CachedSourceResult, cacheState: CacheState): SlotResult<S> {
    const result: SlotResult<S> = {
      status: entry.status,
      fetchedAt: entry.fetchedAt,
      cache: cacheState,
      data: entry.status === 'ok' ? (entry.data as SourceDataBySlot[S]) : null,
    };
    if (cacheState === 'stale' && entry.lastFailure !== undefined) result.reason = entry.lastFailure;
    return result;
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
    return { outcome: entry.status === 'ok' ? ok(entry.data as SourceDataBySlot[S]) : notFound(), fetchedAt: entry.fetchedAt };
  }

  function refreshInBackground<S extends SourceSlot>(source: Source<S>, number: ParsedPhoneNumber, key: string, previous: CachedSourceResult): void {
    if (closing.signal.aborted || refreshing.has(key)) return;
    refreshing.add(key);
    coalescer
      // readSettled: with a shared coalescer, a refresh another instance is already making
      // ends this one as soon as its result is in the shared cache.
      .run(key, (shared) => fetchAndStore(source, number, key, previous, shared), { signal: closing.signal, readSettled: () => readSettledFromCache<S>(key, source.slot) })
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
    const nowMs = now();
    if (cached !== undefined && cached.freshUntil > nowMs) return fromCache<S>(cached, 'hit');
    if (cached !== undefined && cached.staleUntil > nowMs) {
      refreshInBackground(source, number, key, cached);
      return fromCache<S>(cached, 'stale');
    }
    try {
      const fetched = await coalescer.run<FetchResult<S>>(key, (shared) => fetchAndStore(source, number, key, undefined, shared), {
        signal: callerSignal,
        readSettled: () => readSettledFromCache<S>(key, slot),
      });
      return fromFetch(fetched);
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
    if (options.onSourceOutcome !== undefined) {
      const event: SourceOutcomeEvent = {
        slot: source.slot,
        upstream: source.name,
        status: result.status,
        durationMs: performance.now() - startedAt,
        cache: result.cache,
      };
      if (result.reason !== undefined) event.reason = result.reason;
      try {
        options.onSourceOutcome(event);
      } catch (error) {
        logger?.warn({ slot: source.slot, err: describeError(error) }, 'onSourceOutcome hook threw');
      }
    }
    return result;
  }

  return {
    async lookup(number, signal) {
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new LookupDeadlineExceeded()), config.LOOKUP_TIMEOUT_MS);
      const callerSignal = signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, signal]);
      const callerAbortReason = (): 'timeout' | 'aborted' => (deadline.signal.aborted ? 'timeout' : 'aborted');
      const numberHash = hashKey(number.e164);
      try {
        const [primary, community, signals] = await Promise.all([
          lookupSlot(sources.primary, number, numberHash, callerSignal, callerAbortReason),
          lookupSlot(sources.community, number, numberHash, callerSignal, callerAbortReason),
          lookupSlot(sources.signals, number, numberHash, callerSignal, callerAbortReason),
        ]);
        return { primary, community, signals } satisfies LookupResult;
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      closing.abort();
    },
    breakerState(slot) {
      return policies[slot].breakerState();
    },
  };
}

/** Error text for logs, truncated; error objects from adapters never carry the number by contract. */
function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, 200);
}
