// Upstream politeness shared by every instance: a pause after 403/429 set by one instance stops
// all of them, and the per-minute budget counts every instance's requests (the same sliding-log
// script as the client rate limit, on Redis' clock). While Redis is unusable each instance
// keeps its own memory state, so politeness degrades to per-instance, never to none; and that
// state remembers: the budget count Redis last reported seeds it, and the requests made in
// memory keep counting after Redis returns until they leave the minute (docs/reliability.md).
import type { RedisClient } from '../redis/redis-client.js';
import { takeBudgetShare } from '../redis/scripts.js';
import { POLITENESS_KEYS } from '../redis/keys.js';
import {
  BUDGET_WINDOW_MS,
  costOf,
  createMemoryPolitenessStore,
  type MemoryPolitenessStore,
  type PauseState,
  type PolitenessStore,
} from './politeness-store.js';

/** How long the block count outlives the pause, so a block soon after a pause grows the backoff. */
const BLOCK_MEMORY_MS = 6 * 60 * 60_000;

export interface RedisPolitenessStoreOptions {
  client: RedisClient;
  fallback?: MemoryPolitenessStore;
  now?: () => number;
}

/**
 * Keys (redis/keys.ts): `{polite:<upstream>}:pause` (hash), `{polite:<upstream>}:budget` (sliding
 * log) and `{polite:<upstream>}:share:<client hash>` (a client's sliding log, its share), one hash
 * tag per upstream since the budget script takes the budget and a share together. No number nor
 * address ever.
 */
export function createRedisPolitenessStore(options: RedisPolitenessStoreOptions): PolitenessStore {
  const { client } = options;
  const fallback = options.fallback ?? createMemoryPolitenessStore();
  const now = options.now ?? Date.now;
  let sequence = 0;
  const instanceId = Math.random().toString(36).slice(2, 10);
  /** Per upstream: the budget count Redis last reported, and when (this instance's clock). */
  const lastShared = new Map<string, { count: number; atMs: number }>();

  return {
    readPause: (upstream) =>
      client.attempt(
        async (redis) => {
          const [untilMs, blocks] = await redis.hmget(POLITENESS_KEYS.pause(upstream), 'until', 'blocks');
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
        async (redis) => {
          const expiryMs = Math.max(1000, state.untilMs - now()) + BLOCK_MEMORY_MS;
          await redis.phonerepWritePause(
            POLITENESS_KEYS.pause(upstream),
            state.untilMs,
            state.consecutiveBlocks,
            expiryMs,
          );
        },
        () => undefined,
      );
    },
    takeBudgetSlot: (upstream, requestsPerMinute, nowMs, charge) =>
      client.attempt(
        async (redis) => {
          sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
          const cost = costOf(requestsPerMinute, charge);
          const clientLimit = charge?.client !== undefined && charge.clientLimit !== undefined ? charge.clientLimit : 0;
          // Redis' clock, not `nowMs`: instances must agree on the minute. The client's log is
          // keyed by its hash (never its address).
          const result = await takeBudgetShare(
            redis,
            POLITENESS_KEYS.budget(upstream),
            POLITENESS_KEYS.share(upstream, charge?.client ?? '-'),
            { limit: requestsPerMinute, windowMs: BUDGET_WINDOW_MS, cost, clientLimit },
            `${instanceId}:${sequence}`,
          );
          lastShared.set(upstream, { count: result.count, atMs: now() });
          if (!result.granted)
            return { granted: false as const, retryInMs: Math.max(1, result.retryInMs), by: result.by ?? 'budget' };
          // Requests made here while Redis was away are not in its log: until they leave the
          // minute, the memory log must grant the slot too.
          if (fallback.hasLiveBudget(upstream, nowMs))
            return fallback.takeBudgetSlot(upstream, requestsPerMinute, nowMs, charge);
          return { granted: true as const };
        },
        async () => {
          const known = lastShared.get(upstream);
          if (known !== undefined) {
            fallback.seedBudget(upstream, known.count, known.atMs, nowMs);
            lastShared.delete(upstream);
          }
          return fallback.takeBudgetSlot(upstream, requestsPerMinute, nowMs, charge);
        },
      ),
    sharedBudgetUsed: (upstream) =>
      client.attempt(
        async (redis) => {
          const count = Number(await redis.phonerepBudgetCount(POLITENESS_KEYS.budget(upstream), BUDGET_WINDOW_MS));
          return Number.isSafeInteger(count) && count >= 0 ? count : undefined;
        },
        () => undefined,
      ),
  };
}
