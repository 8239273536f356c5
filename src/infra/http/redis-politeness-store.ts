// Upstream politeness shared by every instance: a pause after 403/429 set by one instance stops
// all of them, and the per-minute budget counts every instance's requests (the same sliding-log
// script as the client rate limit, on Redis' clock). While Redis is unusable each instance
// keeps its own memory state, so politeness degrades to per-instance, never to none.
import type { RedisClient } from '../redis/redis-client.js';
import { hitSlidingLog } from '../redis/sliding-log-script.js';
import { BUDGET_WINDOW_MS, createMemoryPolitenessStore, type PauseState, type PolitenessStore } from './politeness-store.js';

/** How long the block count outlives the pause, so a block soon after a pause grows the backoff. */
const BLOCK_MEMORY_MS = 6 * 60 * 60_000;

/**
 * KEYS[1] = the upstream's pause hash; ARGV = untilMs, consecutiveBlocks, expiry in ms.
 * Keeps the later of the stored and the given pause: an instance never shortens a pause another
 * one set (two instances blocked at once both write).
 */
const WRITE_PAUSE_LUA = `
local stored = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
local untilMs = math.max(stored, tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'until', untilMs, 'blocks', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return untilMs
`;
const WRITE_PAUSE_COMMAND = 'phonerepWritePause';

type WithWritePause = RedisClient['redis'] & {
  [WRITE_PAUSE_COMMAND](key: string, untilMs: number, blocks: number, expiryMs: number): Promise<unknown>;
};

export interface RedisPolitenessStoreOptions {
  client: RedisClient;
  fallback?: PolitenessStore;
  now?: () => number;
}

/** Keys: `polite:pause:<upstream>` (hash) and `polite:budget:<upstream>` (sliding log). No number ever. */
export function createRedisPolitenessStore(options: RedisPolitenessStoreOptions): PolitenessStore {
  const { client } = options;
  const fallback = options.fallback ?? createMemoryPolitenessStore();
  const now = options.now ?? Date.now;
  let sequence = 0;
  const instanceId = Math.random().toString(36).slice(2, 10);

  function withWritePause(): WithWritePause {
    const redis = client.redis;
    if (!(WRITE_PAUSE_COMMAND in redis)) redis.defineCommand(WRITE_PAUSE_COMMAND, { numberOfKeys: 1, lua: WRITE_PAUSE_LUA });
    return redis as WithWritePause;
  }

  return {
    readPause: (upstream) =>
      client.attempt(
        async (redis) => {
          const [untilMs, blocks] = await redis.hmget(`polite:pause:${upstream}`, 'until', 'blocks');
          const local = await fallback.readPause(upstream);
          // A pause this instance took while Redis was away still holds after it returns.
          const state: PauseState = {
            untilMs: Math.max(Number(untilMs ?? 0) || 0, local.untilMs),
            consecutiveBlocks: Number(blocks ?? 0) || 0,
          };
          return state;
        },
        () => fallback.readPause(upstream),
      ),
    writePause: async (upstream, state) => {
      // The local copy is kept too: it is what this instance falls back to if Redis goes away.
      await fallback.writePause(upstream, state);
      await client.attempt(
        async () => {
          const expiryMs = Math.max(1000, state.untilMs - now()) + BLOCK_MEMORY_MS;
          await withWritePause()[WRITE_PAUSE_COMMAND](`polite:pause:${upstream}`, state.untilMs, state.consecutiveBlocks, expiryMs);
        },
        () => undefined,
      );
    },
    takeBudgetSlot: (upstream, requestsPerMinute, nowMs) =>
      client.attempt(
        async (redis) => {
          sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
          // Redis' clock, not `nowMs`: instances must agree on the minute.
          const result = await hitSlidingLog(redis, `polite:budget:${upstream}`, requestsPerMinute, BUDGET_WINDOW_MS, `${instanceId}:${sequence}`);
          return result.allowed ? { granted: true as const } : { granted: false as const, retryInMs: Math.max(1, result.resetMs) };
        },
        () => fallback.takeBudgetSlot(upstream, requestsPerMinute, nowMs),
      ),
  };
}
