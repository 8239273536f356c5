// Every Lua script the service runs, registered once per connection through ioredis' `scripts`
// option (createRedisClient), so each is sent by EVALSHA with a fallback to EVAL after a Redis
// restart, and callers call it as a typed command.
//
// The sliding log is the memory rate-limit store's exact algorithm as one atomic script: shared
// by the client rate limiter and the per-upstream request budget, so every instance counts
// against the same log. Time is Redis' own clock (TIME), not the caller's: instances whose clocks disagree
// still agree on the window. Scripts may call TIME before writing since Redis 5 (effects
// replication), which is the only mode from Redis 7 on.
import type { Redis, RedisOptions } from 'ioredis';

/**
 * `now`, Redis' own clock in ms: the sliding logs are read and written on it, so instances whose
 * clocks disagree still agree on the window.
 */
const NOW_MS_LUA = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS[1] = the log (a ZSET of accept times in ms); ARGV = limit, windowMs, a unique member suffix.
 * Returns {allowed (0|1), count after this request, ms until the oldest counted request leaves}.
 * Only accepted requests are added, like the memory store, so a refused client regains quota
 * as the window slides. The key expires one window after its newest entry.
 */
export const SLIDING_LOG_LUA = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
${NOW_MS_LUA}
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

/**
 * An upstream's budget with a client's share of it, in one atomic step (redis-politeness-store).
 * KEYS[1] = the upstream's log, KEYS[2] = the client's log for that upstream (unused when
 * clientLimit is 0); ARGV = limit, windowMs, a unique member suffix, cost, clientLimit.
 * Charges `cost` entries to both logs when both have room, else nothing.
 * Returns {granted (0|1), upstream count after, ms until the charge would fit, refused by (0 none, 1 budget, 2 share)}.
 */
export const BUDGET_SHARE_LUA = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local clientLimit = tonumber(ARGV[5])
${NOW_MS_LUA}
local function retryIn(key, count, lim)
  local leaving = math.max(1, count - (lim - cost))
  local entry = redis.call('ZRANGE', key, leaving - 1, leaving - 1, 'WITHSCORES')
  if entry[2] then return math.max(1, tonumber(entry[2]) + window - now) end
  return window
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count + cost > limit then return {0, count, retryIn(KEYS[1], count, limit), 1} end
if clientLimit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  local clientCount = redis.call('ZCARD', KEYS[2])
  if clientCount + cost > clientLimit then return {0, count, retryIn(KEYS[2], clientCount, clientLimit), 2} end
end
for i = 1, cost do
  local member = now .. ':' .. ARGV[3] .. ':' .. i
  redis.call('ZADD', KEYS[1], now, member)
  if clientLimit > 0 then redis.call('ZADD', KEYS[2], now, member) end
end
redis.call('PEXPIRE', KEYS[1], window)
if clientLimit > 0 then redis.call('PEXPIRE', KEYS[2], window) end
return {1, count + cost, 0, 0}
`;

/**
 * The upstream's budget log as every instance spent it: the requests in the sliding minute
 * ending now, on Redis' clock (the window BUDGET_SHARE_LUA keeps). Read-only; for the console.
 */
export const BUDGET_COUNT_LUA = `
${NOW_MS_LUA}
return redis.call('ZCOUNT', KEYS[1], '(' .. (now - tonumber(ARGV[1])), '+inf')
`;

export interface BudgetShareResult {
  granted: boolean;
  count: number;
  retryInMs: number;
  by: 'budget' | 'share' | undefined;
}

/** Compare-and-extend: only the holder's own token renews its lease (redis-fetch-coalescer). */
export const RENEW_LOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** Compare-and-delete: a holder whose lock expired never deletes the next holder's lock (redis-fetch-coalescer). */
export const RELEASE_LOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * KEYS[1] = an upstream's pause hash; ARGV = untilMs, consecutiveBlocks, expiry in ms.
 * Keeps the later of the stored and the given pause: an instance never shortens a pause another
 * one set (two instances blocked at once both write). Used by redis-politeness-store.
 */
export const WRITE_PAUSE_LUA = `
local stored = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
local untilMs = math.max(stored, tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'until', untilMs, 'blocks', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return untilMs
`;

/**
 * Lua, at the start of every change of the lists: refuses it (false, the staged hash dropped) when
 * {lists}:version is missing. Redis then never held the lists or lost them, and only the store's
 * full read sets it (redis-list-store.ts), writing back the newest state an instance or the lists
 * file knows first: a change taken into an emptied Redis would start the versions again at 1, and
 * a lists file already at that version from before would never be brought up to date. Then
 * `epoch` is the lists' epoch, set to `fresh` when Redis holds none (lists written before epochs).
 */
function listsEpoch(versionKey: string, key: string, fresh: string, staged?: string): string {
  const drop = staged === undefined ? '' : `redis.call('DEL', ${staged}) `;
  return `if redis.call('EXISTS', ${versionKey}) == 0 then ${drop}return false end
local epoch = redis.call('GET', ${key})
if not epoch then
  epoch = ${fresh}
  redis.call('SET', ${key}, epoch)
end
`;
}

/**
 * One change of the lists (redis-list-store.ts): the rule written or removed, {lists}:version
 * incremented, and the change added to {lists}:changes with that version, all at once, so the
 * stream's order is the versions' order. KEYS = {lists}:rules, {lists}:version, {lists}:changes,
 * {lists}:epoch. ARGV = 'put' | 'remove', the rule, its value (put), the stream's bound, an epoch
 * to set when there is none (a Redis that lost the lists starts a new one).
 * Returns {1 when added (put) or removed (remove), else 0; the version; the change's id; the epoch},
 * or false when {lists}:version is missing (listsEpoch).
 */
export const LISTS_CHANGE_LUA = `
${listsEpoch('KEYS[2]', 'KEYS[4]', 'ARGV[5]')}local done
local id
local v
if ARGV[1] == 'put' then
  done = redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  v = redis.call('INCR', KEYS[2])
  id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'v', v, 'e', epoch, 'op', 'put', 'rule', ARGV[2], 'value', ARGV[3])
else
  done = redis.call('HDEL', KEYS[1], ARGV[2])
  v = redis.call('INCR', KEYS[2])
  id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'v', v, 'e', epoch, 'op', 'remove', 'rule', ARGV[2])
end
return {done, v, id, epoch}
`;

/**
 * An import of the lists: the rules staged beforehand in a hash of their own (written in slices)
 * are added at once, replacing rules of the same spelling, with one `reload` change. KEYS =
 * {lists}:rules, {lists}:version, {lists}:changes, the staged hash (deleted), {lists}:epoch. ARGV = the
 * stream's bound, an epoch to set when there is none. Returns {rules replaced, the version, the
 * change's id, the epoch}, or false when {lists}:version is missing (listsEpoch).
 */
export const LISTS_MERGE_LUA = `
${listsEpoch('KEYS[2]', 'KEYS[5]', 'ARGV[2]', 'KEYS[4]')}local flat = redis.call('HGETALL', KEYS[4])
local replaced = 0
for i = 1, #flat, 2 do
  replaced = replaced + 1 - redis.call('HSET', KEYS[1], flat[i], flat[i + 1])
end
redis.call('DEL', KEYS[4])
local v = redis.call('INCR', KEYS[2])
local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[1], '*', 'v', v, 'op', 'reload')
return {replaced, v, id, epoch}
`;

/**
 * A restore of the lists (`phone-rep restore`): the rules staged beforehand in a hash of their
 * own (written in slices) replace every rule at once, with one `reload` change, so every
 * instance goes from the old rules to the new ones in one step. KEYS = {lists}:rules, {lists}:version,
 * {lists}:changes, the staged hash (moved in place; absent for no rule), {lists}:epoch. ARGV = the
 * stream's bound, an epoch to set when there is none. Returns {rules held before, the version,
 * the change's id, the epoch}, or false when {lists}:version is missing (listsEpoch).
 */
export const LISTS_REPLACE_LUA = `
${listsEpoch('KEYS[2]', 'KEYS[5]', 'ARGV[2]', 'KEYS[4]')}local before = redis.call('HLEN', KEYS[1])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[1])
  redis.call('PERSIST', KEYS[1])
else
  redis.call('DEL', KEYS[1])
end
local v = redis.call('INCR', KEYS[2])
local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[1], '*', 'v', v, 'e', epoch, 'op', 'reload')
return {before, v, id, epoch}
`;

/**
 * Puts back the lists in Redis after Redis lost them (redis-list-store.ts), unless someone wrote
 * meanwhile. KEYS = {lists}:version, {lists}:rules, the staged copy of the rules (a hash written in
 * slices beforehand), {lists}:changes, {lists}:epoch. ARGV = the version read before ('' when it was
 * missing), the new version, the stream's bound, the new epoch. Moves the staged copy in place of
 * the rules, sets the version and a new epoch (the lists' lineage changed: a writer whose change
 * went into the old one sends it again) and adds a `reload` change. Returns the change's stream
 * id, or false (nothing done, the staged copy dropped) when the version is no longer the one read.
 * RENAME keeps the staged hash's expiry: PERSIST takes it off, or the lists would vanish with it.
 */
export const LISTS_RESTORE_LUA = `
local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then
  redis.call('DEL', KEYS[3])
  return false
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('RENAME', KEYS[3], KEYS[2])
  redis.call('PERSIST', KEYS[2])
else
  redis.call('DEL', KEYS[2])
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[5], ARGV[4])
return redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[3], '*', 'v', ARGV[2], 'op', 'reload')
`;

/**
 * One reporter's vote (redis-report-store.ts), with the per-token daily cap, all at once: past
 * the cap nothing changes. KEYS = the number's hash ({reports}:n:<e164>), {reports}:expiry,
 * the token's count of the day ({reports}:cap:<day>:<token id>), {reports}:version, {reports}:changes.
 * ARGV = token id, the vote as JSON, its time (ms), its member of {reports}:expiry
 * (`<e164> <token id>`), the cap, the count's lifetime (ms), the retention (ms), the stream's
 * bound, the number. The hash lives until its newest vote expires (PEXPIREAT).
 * Returns {1, count of the day, 1 when added (0 replaced), version, change id}, or {0, count} past the cap.
 */
export const REPORTS_RECORD_LUA = `
local used = tonumber(redis.call('GET', KEYS[3]) or '0')
if used >= tonumber(ARGV[5]) then return {0, used} end
redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
local added = redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
local newest = tonumber(ARGV[3])
for _, value in ipairs(redis.call('HVALS', KEYS[1])) do
  local ok, decoded = pcall(cjson.decode, value)
  if ok and type(decoded) == 'table' and tonumber(decoded.at) and tonumber(decoded.at) > newest then
    newest = tonumber(decoded.at)
  end
end
redis.call('PEXPIREAT', KEYS[1], string.format('%.0f', newest + tonumber(ARGV[7])))
local v = redis.call('INCR', KEYS[4])
local id = redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[8], '*', 'v', v, 'op', 'put', 'n', ARGV[9], 't', ARGV[1], 'value', ARGV[2])
return {1, used + 1, added, v, id}
`;

/**
 * Deletes up to ARGV[3] votes cast at or before ARGV[1] (ms), found through {reports}:expiry,
 * and, when any was, notes one `expire` change. KEYS = {reports}:expiry, {reports}:version,
 * {reports}:changes. ARGV = the cut-off, the stream's bound, the batch size, the hashes' full key
 * prefix (the connection's prefix and `{reports}:n:`).
 * Returns {votes deleted, version, change id} ({0} when none was).
 */
export const REPORTS_EXPIRE_LUA = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
if #members == 0 then return {0} end
for _, member in ipairs(members) do
  local space = string.find(member, ' ', 1, true)
  if space then
    redis.call('HDEL', ARGV[4] .. string.sub(member, 1, space - 1), string.sub(member, space + 1))
  end
  redis.call('ZREM', KEYS[1], member)
end
local v = redis.call('INCR', KEYS[2])
local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'v', v, 'op', 'expire', 'before', ARGV[1])
return {#members, v, id}
`;

/** The `scripts` option of every connection createRedisClient opens. */
export const REDIS_SCRIPTS = {
  phonerepSlidingLog: { numberOfKeys: 1, lua: SLIDING_LOG_LUA },
  phonerepRenewLock: { numberOfKeys: 1, lua: RENEW_LOCK_LUA },
  phonerepReleaseLock: { numberOfKeys: 1, lua: RELEASE_LOCK_LUA },
  phonerepWritePause: { numberOfKeys: 1, lua: WRITE_PAUSE_LUA },
  phonerepBudgetShare: { numberOfKeys: 2, lua: BUDGET_SHARE_LUA },
  phonerepBudgetCount: { numberOfKeys: 1, lua: BUDGET_COUNT_LUA },
  phonerepListsChange: { numberOfKeys: 4, lua: LISTS_CHANGE_LUA },
  phonerepListsMerge: { numberOfKeys: 5, lua: LISTS_MERGE_LUA },
  phonerepListsRestore: { numberOfKeys: 5, lua: LISTS_RESTORE_LUA },
  phonerepListsReplace: { numberOfKeys: 5, lua: LISTS_REPLACE_LUA },
  phonerepReportsRecord: { numberOfKeys: 5, lua: REPORTS_RECORD_LUA },
  phonerepReportsExpire: { numberOfKeys: 3, lua: REPORTS_EXPIRE_LUA },
} as const satisfies NonNullable<RedisOptions['scripts']>;

/** The commands REDIS_SCRIPTS adds to a connection (ioredis cannot infer them from the option). */
export interface ScriptCommands {
  phonerepSlidingLog(key: string, limit: number, windowMs: number, member: string): Promise<unknown>;
  phonerepRenewLock(key: string, token: string, leaseMs: number): Promise<unknown>;
  phonerepReleaseLock(key: string, token: string): Promise<unknown>;
  phonerepWritePause(key: string, untilMs: number, blocks: number, expiryMs: number): Promise<unknown>;
  phonerepBudgetShare(
    key: string,
    clientKey: string,
    limit: number,
    windowMs: number,
    member: string,
    cost: number,
    clientLimit: number,
  ): Promise<unknown>;
  phonerepBudgetCount(key: string, windowMs: number): Promise<unknown>;
  phonerepListsChange(
    rules: string,
    version: string,
    changes: string,
    epoch: string,
    op: 'put' | 'remove',
    rule: string,
    value: string,
    maxLength: number,
    newEpoch: string,
  ): Promise<unknown>;
  phonerepListsMerge(
    rules: string,
    version: string,
    changes: string,
    staged: string,
    epoch: string,
    maxLength: number,
    newEpoch: string,
  ): Promise<unknown>;
  phonerepListsRestore(
    version: string,
    rules: string,
    staged: string,
    changes: string,
    epoch: string,
    expected: string,
    next: number,
    maxLength: number,
    newEpoch: string,
  ): Promise<unknown>;
  phonerepListsReplace(
    rules: string,
    version: string,
    changes: string,
    staged: string,
    epoch: string,
    maxLength: number,
    newEpoch: string,
  ): Promise<unknown>;
  phonerepReportsRecord(
    hash: string,
    expiry: string,
    cap: string,
    version: string,
    changes: string,
    tokenId: string,
    value: string,
    at: number,
    member: string,
    maxPerDay: number,
    capTtlMs: number,
    retentionMs: number,
    maxLength: number,
    e164: string,
  ): Promise<unknown>;
  phonerepReportsExpire(
    expiry: string,
    version: string,
    changes: string,
    cutoff: number,
    maxLength: number,
    batch: number,
    hashPrefix: string,
  ): Promise<unknown>;
}

/** A connection opened with REDIS_SCRIPTS. */
export type ScriptedRedis = Redis & ScriptCommands;

/** Runs one sliding-log step on `key` (the connection's key prefix is applied by ioredis). */
export async function hitSlidingLog(
  redis: ScriptedRedis,
  key: string,
  limit: number,
  windowMs: number,
  member: string,
): Promise<SlidingLogResult> {
  const reply = await redis.phonerepSlidingLog(key, limit, windowMs, member);
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error('unexpected sliding-log reply');
  const [allowed, count, resetMs] = reply.map(Number);
  if (allowed === undefined || count === undefined || resetMs === undefined || !Number.isFinite(count + resetMs)) {
    throw new Error('unexpected sliding-log reply');
  }
  return { allowed: allowed === 1, count, resetMs };
}

/** Runs one budget-and-share step (BUDGET_SHARE_LUA); `clientLimit` 0 = no client share checked. */
export async function takeBudgetShare(
  redis: ScriptedRedis,
  key: string,
  clientKey: string,
  limits: { limit: number; windowMs: number; cost: number; clientLimit: number },
  member: string,
): Promise<BudgetShareResult> {
  const reply = await redis.phonerepBudgetShare(
    key,
    clientKey,
    limits.limit,
    limits.windowMs,
    member,
    limits.cost,
    limits.clientLimit,
  );
  if (!Array.isArray(reply) || reply.length !== 4) throw new Error('unexpected budget reply');
  const [granted, count, retryInMs, by] = reply.map(Number);
  if (
    granted === undefined ||
    count === undefined ||
    retryInMs === undefined ||
    by === undefined ||
    !Number.isFinite(count + retryInMs + by)
  ) {
    throw new Error('unexpected budget reply');
  }
  return { granted: granted === 1, count, retryInMs, by: by === 1 ? 'budget' : by === 2 ? 'share' : undefined };
}
