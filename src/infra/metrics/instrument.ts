// Decorators that count what the fetchers and the source cache do, without those modules
// knowing about metrics: the composition root wraps them when metrics are on.
import type { SourceResultCache } from '../cache/source-cache.js';
import type { UpstreamFetcher } from '../http/types.js';
import type { CacheReadResult, ServiceMetrics } from './service-metrics.js';

/** Times every request an upstream's fetcher makes and counts it by HTTP status or outcome. */
export function instrumentUpstreamFetcher(fetcher: UpstreamFetcher, metrics: Pick<ServiceMetrics, 'recordUpstreamRequest'>): UpstreamFetcher {
  return {
    upstream: fetcher.upstream,
    pausedUntil: () => fetcher.pausedUntil(),
    async fetch(request) {
      const startedAt = performance.now();
      const result = await fetcher.fetch(request);
      const durationSeconds = (performance.now() - startedAt) / 1000;
      if (result.kind === 'response') {
        metrics.recordUpstreamRequest({ upstream: fetcher.upstream, status: String(result.response.status), reason: '', durationSeconds });
      } else {
        const { outcome } = result;
        const reason = outcome.status === 'blocked' || outcome.status === 'error' ? outcome.reason : '';
        metrics.recordUpstreamRequest({ upstream: fetcher.upstream, status: outcome.status, reason, durationSeconds });
      }
      return result;
    },
  };
}

/** The slot of a cache key `v1:<slot>:<hash>`; the hash is never used. */
function slotOfKey(key: string): string {
  const slot = key.split(':')[1];
  return slot === 'primary' || slot === 'community' || slot === 'signals' ? slot : 'unknown';
}

/**
 * Counts reads of one cache layer (`memory`, `redis`) as hit, stale (past its TTL, still
 * servable) or miss (absent or past its stale window), the way the engine will judge them.
 */
export function instrumentSourceCache<C extends SourceResultCache>(
  cache: C,
  layer: string,
  metrics: Pick<ServiceMetrics, 'recordCacheRead'>,
  now: () => number = Date.now,
): C {
  const wrapped: SourceResultCache = {
    async get(key) {
      const entry = await cache.get(key);
      const nowMs = now();
      const result: CacheReadResult = entry === undefined || entry.staleUntil <= nowMs ? 'miss' : entry.freshUntil > nowMs ? 'hit' : 'stale';
      metrics.recordCacheRead(layer, slotOfKey(key), result);
      return entry;
    },
    set: (key, value, ttlSeconds) => cache.set(key, value, ttlSeconds),
  };
  // Keeps the layer's extra methods (size(), clear()…) reachable through the wrapper.
  return Object.assign(Object.create(cache) as C, wrapped);
}
