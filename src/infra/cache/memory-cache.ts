// In-process implementation of the per-source result cache: a bounded LRU (lru-cache 11), so
// memory stays flat whatever the traffic (`CACHE_MAX_ENTRIES`). Also the small front tier the
// Redis cache will sit behind.
import { LRUCache } from 'lru-cache';
import type { CachedSourceResult, SourceResultCache } from './source-cache.js';

export interface MemorySourceCacheOptions {
  /** CACHE_MAX_ENTRIES: the least recently used entry is dropped beyond this count. */
  maxEntries: number;
}

export interface MemorySourceCache extends SourceResultCache {
  /** Current entry count (readiness, metrics, tests). */
  size(): number;
  clear(): void;
}

export function createMemorySourceCache(options: MemorySourceCacheOptions): MemorySourceCache {
  const entries = new LRUCache<string, CachedSourceResult>({
    max: options.maxEntries,
    // Expired entries are dropped lazily on read; the service itself judges fresh/stale by
    // freshUntil/staleUntil, this TTL only bounds how long a dead entry holds memory.
    ttlAutopurge: false,
    allowStale: false,
  });
  return {
    async get(key) {
      return entries.get(key);
    },
    async set(key, value, ttlSeconds) {
      if (ttlSeconds <= 0) {
        entries.delete(key);
        return;
      }
      entries.set(key, value, { ttl: Math.ceil(ttlSeconds * 1000) });
    },
    size: () => entries.size,
    clear: () => entries.clear(),
  };
}
