// Decorators that count what the fetchers and the source cache do, without those modules
// knowing about metrics: the composition root wraps them when metrics are on.
import type { SourceResultCache } from '../../domain/ports/source-cache.js';
import { isSourceSlot } from '../../domain/report.js';
import type { UpstreamFetcher } from '../http/types.js';
import type { CacheReadResult, ServiceMetrics } from './service-metrics.js';

/**
 * The HTTP status behind a fetcher's failure: 403 and 429 pause the upstream and are
 * reported by reason; of a 5xx the fetcher keeps only the class.
 */
const STATUS_CODE_OF_REASON: Readonly<Record<string, string>> = { http_403: '403', http_429: '429', http_5xx: '5xx' };

/**
 * Outcomes the fetcher answers without sending anything: a spent budget, a pause after
 * 403/429, no concurrency slot in time. They are not requests to the site, so they are not
 * counted as such (nor is any failure the fetcher marks `notSent`: a caller gone first).
 */
const NOT_SENT_REASONS: ReadonlySet<string> = new Set(['budget', 'paused', 'queue']);

/** Times every request an upstream's fetcher makes and counts it by outcome, HTTP status and reason. */
export function instrumentUpstreamFetcher(
  fetcher: UpstreamFetcher,
  metrics: Pick<ServiceMetrics, 'declareUpstream' | 'recordUpstreamRequest'>,
): UpstreamFetcher {
  metrics.declareUpstream(fetcher.upstream);
  return {
    upstream: fetcher.upstream,
    pausedUntil: () => fetcher.pausedUntil(),
    ...(fetcher.budget === undefined ? {} : { budget: () => fetcher.budget?.() ?? { used: 0, perMinute: 0 } }),
    async fetch(request) {
      const startedAt = performance.now();
      const result = await fetcher.fetch(request);
      const durationSeconds = (performance.now() - startedAt) / 1000;
      if (result.kind === 'response') {
        metrics.recordUpstreamRequest({
          upstream: fetcher.upstream,
          outcome: 'response',
          statusCode: String(result.response.status),
          reason: '',
          durationSeconds,
        });
      } else {
        const { kind, reason } = result.failure;
        if (result.notSent === true || (kind === 'blocked' && NOT_SENT_REASONS.has(reason))) return result;
        metrics.recordUpstreamRequest({
          upstream: fetcher.upstream,
          outcome: kind,
          statusCode: STATUS_CODE_OF_REASON[reason] ?? '',
          reason,
          durationSeconds,
        });
      }
      return result;
    },
  };
}

/** The slot of a cache key `<version>:<slot>:<hash>`; the hash is never used. */
function slotOfKey(key: string): string {
  const slot = key.split(':')[1];
  return slot !== undefined && isSourceSlot(slot) ? slot : 'unknown';
}

/**
 * Counts reads of one cache layer (`memory`, `redis`) as hit, stale (past its TTL, still
 * servable) or miss (absent or past its stale window), the way the engine will judge them.
 */
export function instrumentSourceCache<C extends SourceResultCache>(
  cache: C,
  layer: string,
  metrics: Pick<ServiceMetrics, 'declareCacheLayer' | 'recordCacheRead'>,
  now: () => number = Date.now,
): C {
  metrics.declareCacheLayer(layer);
  const wrapped: SourceResultCache = {
    async get(key) {
      const entry = await cache.get(key);
      const nowMs = now();
      const result: CacheReadResult =
        entry === undefined || entry.staleUntil <= nowMs ? 'miss' : entry.freshUntil > nowMs ? 'hit' : 'stale';
      metrics.recordCacheRead(layer, slotOfKey(key), result);
      return entry;
    },
    set: (key, value, ttlSeconds) => cache.set(key, value, ttlSeconds),
  };
  const peek = cache.peek?.bind(cache);
  if (peek !== undefined) {
    // The engine peeks for fresh hits only; whatever it finds is counted as `get` would count it.
    wrapped.peek = (key) => {
      const entry = peek(key);
      const nowMs = now();
      const result: CacheReadResult =
        entry === undefined || entry.staleUntil <= nowMs ? 'miss' : entry.freshUntil > nowMs ? 'hit' : 'stale';
      metrics.recordCacheRead(layer, slotOfKey(key), result);
      return entry;
    };
  }
  // Keeps the layer's extra methods (size(), clear()…) reachable through the wrapper.
  return Object.assign(Object.create(cache) as C, wrapped);
}
