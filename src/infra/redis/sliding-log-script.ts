// The exact sliding log of the memory rate-limit store, as one atomic Lua script: shared by the
// client rate limiter and the per-upstream request budget, so every instance counts against the
// same log. Time is Redis' own clock (TIME), not the caller's: instances whose clocks disagree
// still agree on the window. Scripts may call TIME before writing since Redis 5 (effects
// replication), which is the only mode from Redis 7 on.
import type { Redis } from 'ioredis';

/**
 * KEYS[1] = the log (a ZSET of accept times in ms); ARGV = limit, windowMs, a unique member suffix.
 * Returns {allowed (0|1), count after this request, ms until the oldest counted request leaves}.
 * Only accepted requests are added, like the memory store, so a refused client regains quota
 * as the window slides. The key expires one window after its newest entry.
 */
export const SLIDING_LOG_LUA = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  allowed = 1
end
local reset = 0
if count > 0 then
  local index = 0
  if allowed == 0 and count > limit then index = count - limit end
  local oldest = redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')
  if oldest[2] then reset = math.max(0, tonumber(oldest[2]) + window - now) end
end
return {allowed, count, reset}
`;

export interface SlidingLogResult {
  allowed: boolean;
  count: number;
  resetMs: number;
}

const COMMAND_NAME = 'phonerepSlidingLog';

type WithSlidingLog = Redis & {
  [COMMAND_NAME](key: string, limit: number, windowMs: number, member: string): Promise<unknown>;
};

/** Registers the script once per connection (EVALSHA, falling back to EVAL after a Redis restart). */
function withSlidingLog(redis: Redis): WithSlidingLog {
  if (!(COMMAND_NAME in redis)) redis.defineCommand(COMMAND_NAME, { numberOfKeys: 1, lua: SLIDING_LOG_LUA });
  return redis as WithSlidingLog;
}

/** Runs one sliding-log step on `key` (the connection's key prefix is applied by ioredis). */
export async function hitSlidingLog(redis: Redis, key: string, limit: number, windowMs: number, member: string): Promise<SlidingLogResult> {
  const reply = await withSlidingLog(redis)[COMMAND_NAME](key, limit, windowMs, member);
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error('unexpected sliding-log reply');
  const [allowed, count, resetMs] = reply.map(Number);
  if (allowed === undefined || count === undefined || resetMs === undefined || !Number.isFinite(count + resetMs)) {
    throw new Error('unexpected sliding-log reply');
  }
  return { allowed: allowed === 1, count, resetMs };
}
