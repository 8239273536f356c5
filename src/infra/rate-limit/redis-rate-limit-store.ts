// The rate limit shared by every instance: the same exact sliding log as the memory store,
// evaluated atomically in Redis, so a client gets at most `limit` requests through in any
// window across all instances together. When Redis is down or slow the decision comes from a
// per-instance memory store (each instance then enforces the limit on its own) and goes back
// to Redis as soon as it answers again; a request is never failed or held up by Redis.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/redis-client.js';
import { hitSlidingLog } from '../redis/sliding-log-script.js';
import { createMemoryRateLimitStore, type RateLimitStore } from './rate-limit-store.js';

export interface RedisRateLimitStoreOptions {
  client: RedisClient;
  /** Used while Redis is unusable; a fresh per-instance memory store by default. */
  fallback?: RateLimitStore;
}

/** Keys are `rl:<hashed client bucket>` under the client's prefix: never a raw address. */
export function createRedisRateLimitStore(options: RedisRateLimitStoreOptions): RateLimitStore {
  const { client } = options;
  const fallback = options.fallback ?? createMemoryRateLimitStore();
  // Members must be unique even for two accepts in the same millisecond on two instances.
  const instanceId = randomBytes(6).toString('base64url');
  let sequence = 0;
  return {
    hit: (key, limit, windowMs) =>
      client.attempt(
        async (redis) => {
          sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
          const result = await hitSlidingLog(redis, `rl:${key}`, limit, windowMs, `${instanceId}:${sequence}`);
          return { allowed: result.allowed, limit, remaining: Math.max(0, limit - result.count), resetMs: result.resetMs };
        },
        () => fallback.hit(key, limit, windowMs),
      ),
  };
}
