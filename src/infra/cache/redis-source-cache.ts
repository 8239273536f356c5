// The per-source result cache shared by every instance: entries live in Redis (entry-codec's ASCII form,
// hashed keys, expiring at the entry's `staleUntil`), under a small in-process LRU so a hot
// number does not pay a round trip on every lookup. A local copy is trusted for a few seconds
// only (LOCAL_TTL), so a refresh made by another instance reaches this one quickly; a local
// copy that needs refreshing is always re-read from Redis first, in case another instance has
// refreshed it already. When Redis is unusable, the local tier is the whole cache: reads and
// writes go on in memory, with entries kept until they go stale.
import { LRUCache } from 'lru-cache';
import type { RedisClient } from '../redis/redis-client.js';
import { CACHE_KEYS } from '../redis/keys.js';
import { decodeCachedResult, encodeCachedResult } from './entry-codec.js';
import type { CachedSourceResult, SourceResultCache } from '../../domain/ports/source-cache.js';

export interface RedisSourceCacheOptions {
  client: RedisClient;
  /** Entries held in process (default 10 000). */
  localMaxEntries?: number;
  /** How long a local copy is served without asking Redis (default 10 s). */
  localTtlMs?: number;
  now?: () => number;
}

export interface RedisSourceCache extends SourceResultCache {
  /** Entries in the local tier (tests, metrics). */
  localSize(): number;
  clearLocal(): void;
}

export const DEFAULT_LOCAL_MAX_ENTRIES = 10_000;
export const DEFAULT_LOCAL_TTL_MS = 10_000;

interface LocalEntry {
  value: CachedSourceResult;
  /** Until when this copy is served without asking Redis. */
  trustedUntilMs: number;
}

// The stored form is the memory cache's (entry-codec): what one writes, the other reads.
export { decodeCachedResult, encodeCachedResult } from './entry-codec.js';

/** Keys are `cache:<key>` (redis/keys.ts) under the client's prefix; `key` is already a keyed hash (toSourceCacheKey). */
export function createRedisSourceCache(options: RedisSourceCacheOptions): RedisSourceCache {
  const { client } = options;
  const now = options.now ?? Date.now;
  const localTtlMs = options.localTtlMs ?? DEFAULT_LOCAL_TTL_MS;
  const local = new LRUCache<string, LocalEntry>({
    max: options.localMaxEntries ?? DEFAULT_LOCAL_MAX_ENTRIES,
    ttlAutopurge: false,
    allowStale: false,
  });

  function keepLocally(key: string, value: CachedSourceResult): void {
    const lifetimeMs = value.staleUntil - now();
    if (lifetimeMs <= 0) {
      local.delete(key);
      return;
    }
    local.set(key, { value, trustedUntilMs: now() + localTtlMs }, { ttl: lifetimeMs });
  }

  return {
    async get(key) {
      const held = local.get(key);
      const nowMs = now();
      if (held !== undefined && held.trustedUntilMs > nowMs && held.value.freshUntil > nowMs) return held.value;
      return client.attempt(
        async (redis) => {
          const text = await redis.get(CACHE_KEYS.entry(key));
          const value = text === null ? undefined : decodeCachedResult(text);
          if (value === undefined) {
            // Evicted from Redis, or written here while Redis was away: the local copy still counts.
            return held !== undefined && held.value.staleUntil > now() ? held.value : undefined;
          }
          keepLocally(key, value);
          return value;
        },
        () => held?.value,
      );
    },
    async set(key, value, ttlSeconds) {
      if (ttlSeconds <= 0) {
        local.delete(key);
        await client.attempt(
          async (redis) => void (await redis.del(CACHE_KEYS.entry(key))),
          () => undefined,
        );
        return;
      }
      keepLocally(key, value);
      // Issued synchronously within this call: a coalescing lock released after this call is
      // released after the write on the same connection, so waiters on other instances find it.
      await client.attempt(
        async (redis) =>
          void (await redis.set(CACHE_KEYS.entry(key), encodeCachedResult(value), 'PX', Math.ceil(ttlSeconds * 1000))),
        () => undefined,
      );
    },
    // Only a local copy still trusted and fresh: anything else needs Redis.
    peek(key) {
      const held = local.get(key);
      const nowMs = now();
      return held !== undefined && held.trustedUntilMs > nowMs && held.value.freshUntil > nowMs
        ? held.value
        : undefined;
    },
    localSize: () => local.size,
    clearLocal: () => local.clear(),
  };
}
