// The blocked-callers record shared by every instance: a sorted set `{blocked}:log` (member the
// E.164 number, score the time it was recorded) trimmed to `maxEntries` and to the retention,
// and one key per number `{blocked}:caller:<e164>` holding its score and reason, expiring with
// the retention on its own. One hash tag for both (redis/keys.ts): a record is one MULTI of
// both, the feed one MGET of the callers. Redis unusable: recording falls back to this process's
// memory record, and listing merges it in, so the feed keeps what this instance saw.
import type { BlockedCaller } from '../../domain/blocklist/feed-content.js';
import type { BlockedCallerLog } from '../../domain/ports/blocked-callers.js';
import type { RedisClient } from '../redis/redis-client.js';
import { BLOCKED_KEYS } from '../redis/keys.js';
import { createMemoryBlockedCallerLog } from './memory-blocked-callers.js';

const { log: SET_KEY, caller: callerKey } = BLOCKED_KEYS;

interface StoredCaller {
  score: number | null;
  reason: string;
  atMs: number;
}

function parseStored(e164: string, text: string | null): BlockedCaller | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as Partial<StoredCaller>;
    if (typeof value.reason !== 'string' || typeof value.atMs !== 'number') return undefined;
    const score = typeof value.score === 'number' ? value.score : null;
    return { e164, score, reason: value.reason.slice(0, 200), atMs: value.atMs };
  } catch {
    return undefined;
  }
}

export function createRedisBlockedCallerLog(options: {
  client: RedisClient;
  maxEntries: number;
  retentionMs: number;
}): BlockedCallerLog {
  const { client, maxEntries, retentionMs } = options;
  const fallback = createMemoryBlockedCallerLog({ maxEntries, retentionMs });
  return {
    record(caller) {
      const stored: StoredCaller = { score: caller.score, reason: caller.reason, atMs: caller.atMs };
      void client.attempt(
        async (redis) => {
          await redis
            .multi()
            .zadd(SET_KEY, caller.atMs, caller.e164)
            .zremrangebyscore(SET_KEY, '-inf', caller.atMs - retentionMs)
            .zremrangebyrank(SET_KEY, 0, -(maxEntries + 1))
            .pexpire(SET_KEY, retentionMs)
            .set(callerKey(caller.e164), JSON.stringify(stored), 'PX', retentionMs)
            .exec();
        },
        () => fallback.record(caller),
      );
    },
    forget(e164) {
      fallback.forget(e164);
      void client.attempt(
        async (redis) => {
          await redis.multi().zrem(SET_KEY, e164).del(callerKey(e164)).exec();
        },
        () => undefined,
      );
    },
    async list(nowMs) {
      const local = await fallback.list(nowMs);
      const shared = await client.attempt(
        async (redis) => {
          const members = await redis.zrevrangebyscore(
            SET_KEY,
            '+inf',
            `(${nowMs - retentionMs}`,
            'LIMIT',
            0,
            maxEntries,
          );
          if (members.length === 0) return [];
          const values = await redis.mget(...members.map(callerKey));
          return members.flatMap((e164, index) => parseStored(e164, values[index] ?? null) ?? []);
        },
        () => [] as BlockedCaller[],
      );
      if (local.length === 0) return shared;
      const merged = new Map<string, BlockedCaller>();
      for (const caller of [...shared, ...local]) {
        const known = merged.get(caller.e164);
        if (known === undefined || known.atMs < caller.atMs) merged.set(caller.e164, caller);
      }
      return [...merged.values()].sort((a, b) => b.atMs - a.atMs).slice(0, maxEntries);
    },
  };
}
