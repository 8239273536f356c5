// The rate limit shared by every instance: the same exact sliding log as the memory store,
// evaluated atomically in Redis, so a client gets at most `limit` requests through in any
// window across all instances together. When Redis is down or slow the decision comes from a
// per-instance memory store and goes back to Redis as soon as it answers again; a request is
// never failed or held up by Redis.
//
// The fallback remembers: the count Redis last reported for a client seeds the memory log when
// Redis goes away (as accepts made at the time of that report, so they leave the window no
// sooner than the real ones), and the accepts made in memory keep counting after Redis comes
// back, until they leave the window. One instance thus never lets a client through more than
// `limit` times in any window, across an outage; N instances at most N × `limit`
// (docs/reliability.md).
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/redis-client.js';
import { hitSlidingLog } from '../redis/scripts.js';
import { RATE_LIMIT_KEYS } from '../redis/keys.js';
import { createMemoryRateLimitStore, type MemoryRateLimitStore, type RateLimitStore } from './rate-limit-store.js';

/** Clients whose last shared count is remembered (the oldest are forgotten first). */
const LAST_SHARED_MAX = 100_000;

export interface RedisRateLimitStoreOptions {
  client: RedisClient;
  /** Used while Redis is unusable; a fresh per-instance memory store by default. */
  fallback?: MemoryRateLimitStore;
  now?: () => number;
}

/** Keys are `rl:<hashed client bucket>` (redis/keys.ts) under the client's prefix: never a raw address. */
export function createRedisRateLimitStore(options: RedisRateLimitStoreOptions): RateLimitStore {
  const { client } = options;
  const fallback = options.fallback ?? createMemoryRateLimitStore();
  // Members must be unique even for two accepts in the same millisecond on two instances.
  const instanceId = randomBytes(6).toString('base64url');
  let sequence = 0;
  const now = options.now ?? Date.now;
  /** Per client: what Redis last said its count was, and when. */
  const lastShared = new Map<string, { count: number; atMs: number }>();

  function rememberShared(key: string, count: number): void {
    lastShared.delete(key);
    lastShared.set(key, { count, atMs: now() });
    if (lastShared.size > LAST_SHARED_MAX) {
      const oldest = lastShared.keys().next();
      if (oldest.done !== true) lastShared.delete(oldest.value);
    }
  }

  return {
    hit: (key, limit, windowMs) =>
      client.attempt(
        async (redis) => {
          sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
          const result = await hitSlidingLog(
            redis,
            RATE_LIMIT_KEYS.log(key),
            limit,
            windowMs,
            `${instanceId}:${sequence}`,
          );
          rememberShared(key, result.count);
          let allowed = result.allowed;
          // Accepts made here while Redis was away are not in its log: until they leave the
          // window, the memory log must allow the request too.
          if (allowed && fallback.hasLiveLog(key)) allowed = fallback.hitSync(key, limit, windowMs).allowed;
          return {
            allowed,
            limit,
            remaining: allowed ? Math.max(0, limit - result.count) : 0,
            resetMs: result.resetMs,
          };
        },
        () => {
          const known = lastShared.get(key);
          if (known !== undefined) {
            fallback.seed(key, known.count, known.atMs, windowMs);
            lastShared.delete(key);
          }
          return fallback.hitSync(key, limit, windowMs);
        },
      ),
  };
}
