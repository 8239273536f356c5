// The move of a deployment's data of record from the key layout before the hash tags (layout 1:
// `lists:rules`, `reports:n:<e164>`, `tokens`, `feed:blocked`…) to the tagged names of keys.ts,
// done by the service itself, once, before its stores read or write Redis: each store's first
// command waits for `ensureTaggedKeys` on its client (one per client, in memory).
//
// What moves: the lists, the reports (the votes, their index, the day caps, version and stream),
// the tokens and the blocked callers' record. What does not: the cache entries, the fetch locks
// and the client rate limiter's logs kept their names; the upstreams' pauses and budgets
// (`polite:…`) are left to expire (within minutes; a pause within hours) and start again empty.
//
// How: RENAME, which keeps a key's value and expiry, in scripts that move a key only while the
// old name exists and the new one does not. Each group's fixed keys move in one script, after
// the keys found by SCAN under their families (a number's votes, a caller of the feed), so a
// move cut short leaves the group's anchor (`lists:version`, `reports:expiry`…) in place and the
// next start carries on. Two instances starting at once both move; each key moves once, and
// neither reads before its own pass is over, which found every old key there was when it began.
// With no old anchor left, a start costs one EXISTS per anchor.
//
// A key held under both names (an instance of the old version kept writing after the move) is
// left under its old name and counted in the log, except the blocked callers' log, whose two
// sorted sets are merged. RENAME of two keys of different slots is refused by a Redis Cluster:
// the move is for the single Redis or Sentinel deployments the old layout ran on.
import type { Redis } from 'ioredis';
import type { RedisClient } from './redis-client.js';
import { BLOCKED_KEYS, LISTS_KEYS, REPORTS_KEYS, TOKENS_KEYS } from './keys.js';

export interface KeyMigrationLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Keys of layout 1, each with its name now, in groups moved as one. */
interface FixedGroup {
  name: string;
  moves: ReadonlyArray<readonly [from: string, to: string]>;
}

/** A family of keys of layout 1 (`<from><rest>`), found by SCAN, each moved to `to(rest)`. */
interface Family {
  group: string;
  from: string;
  to: (rest: string) => string;
}

const FAMILIES: readonly Family[] = [
  { group: 'reports', from: 'reports:n:', to: (rest) => REPORTS_KEYS.number(rest) },
  // `<day>:<token id>`, the day (YYYY-MM-DD) holding no colon.
  {
    group: 'reports',
    from: 'reports:cap:',
    to: (rest) => REPORTS_KEYS.cap(rest.slice(0, rest.indexOf(':')), rest.slice(rest.indexOf(':') + 1)),
  },
  { group: 'blocked', from: 'feed:caller:', to: (rest) => BLOCKED_KEYS.caller(rest) },
];

/** Moved after the families: while one of these is left, the move is not over. */
const FIXED_GROUPS: readonly FixedGroup[] = [
  {
    name: 'lists',
    moves: [
      ['lists:rules', LISTS_KEYS.rules],
      ['lists:changes', LISTS_KEYS.changes],
      ['lists:epoch', LISTS_KEYS.epoch],
      ['lists:version', LISTS_KEYS.version],
    ],
  },
  {
    name: 'reports',
    moves: [
      ['reports:changes', REPORTS_KEYS.changes],
      ['reports:version', REPORTS_KEYS.version],
      ['reports:expiry', REPORTS_KEYS.expiry],
    ],
  },
  { name: 'tokens', moves: [['tokens', TOKENS_KEYS.records]] },
  { name: 'blocked', moves: [['feed:blocked', BLOCKED_KEYS.log]] },
];

/** The names of layout 1 whose presence says a move is due (every group's fixed keys). */
export const LAYOUT_1_ANCHORS: readonly string[] = FIXED_GROUPS.flatMap((group) => group.moves.map(([from]) => from));

/**
 * KEYS = old, new, old, new…: each old key that exists is renamed to its new name when that is
 * free; two sorted sets under both names are merged (the later score kept) and the old deleted;
 * anything else under both names is left. Returns {moved, merged, left}.
 */
const MOVE_LUA = `
local moved, merged, left = 0, 0, 0
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('EXISTS', KEYS[i + 1]) == 0 then
      redis.call('RENAME', KEYS[i], KEYS[i + 1])
      moved = moved + 1
    elseif redis.call('TYPE', KEYS[i]).ok == 'zset' and redis.call('TYPE', KEYS[i + 1]).ok == 'zset' then
      local ttl = redis.call('PTTL', KEYS[i + 1])
      redis.call('ZUNIONSTORE', KEYS[i + 1], 2, KEYS[i + 1], KEYS[i], 'AGGREGATE', 'MAX')
      if ttl > 0 then redis.call('PEXPIRE', KEYS[i + 1], ttl) end
      redis.call('DEL', KEYS[i])
      merged = merged + 1
    else
      left = left + 1
    end
  end
end
return {moved, merged, left}
`;

const SCAN_COUNT = 1000;
const MOVE_BATCH = 500;

/** `text` as a SCAN pattern matching itself only. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

interface Tally {
  moved: number;
  merged: number;
  left: number;
}

async function moveAll(redis: Redis, pairs: ReadonlyArray<readonly [string, string]>, tally: Tally): Promise<void> {
  for (let start = 0; start < pairs.length; start += MOVE_BATCH) {
    const keys = pairs.slice(start, start + MOVE_BATCH).flat();
    const reply = await redis.eval(MOVE_LUA, keys.length, ...keys);
    const [moved = 0, merged = 0, left = 0] = Array.isArray(reply) ? reply.map(Number) : [];
    tally.moved += moved;
    tally.merged += merged;
    tally.left += left;
  }
}

/** The keys of layout 1 of `family` (SCAN: the connection's key prefix is not applied to MATCH). */
async function familyMoves(redis: Redis, keyPrefix: string, family: Family): Promise<Array<[string, string]>> {
  const pattern = `${globEscape(keyPrefix + family.from)}*`;
  const pairs: Array<[string, string]> = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
    cursor = next;
    for (const key of batch) {
      const rest = key.slice(keyPrefix.length + family.from.length);
      pairs.push([key.slice(keyPrefix.length), family.to(rest)]);
    }
  } while (cursor !== '0');
  return pairs;
}

export interface KeyMigrationResult {
  /** Whether any key of layout 1 was found. */
  found: boolean;
  /** Per group (lists, reports, tokens, blocked): keys renamed, merged, left under both names. */
  groups: Record<string, Tally>;
}

/**
 * Moves every key of layout 1 under the connection's key prefix to its tagged name (see the top
 * of this file). Safe to run again and from several processes at once. Throws on a Redis error
 * (what was moved stays moved; the next run carries on).
 */
export async function migrateKeyLayout(
  redis: Redis,
  keyPrefix: string,
  logger?: KeyMigrationLogger,
): Promise<KeyMigrationResult> {
  const groups: Record<string, Tally> = {};
  const tallyOf = (name: string): Tally => (groups[name] ??= { moved: 0, merged: 0, left: 0 });
  // One EXISTS a key: a multi-key EXISTS of names in several slots would be refused by a cluster.
  const anchors = await Promise.all(LAYOUT_1_ANCHORS.map((key) => redis.exists(key)));
  if (anchors.every((count) => count === 0)) return { found: false, groups };
  for (const family of FAMILIES)
    await moveAll(redis, await familyMoves(redis, keyPrefix, family), tallyOf(family.group));
  for (const group of FIXED_GROUPS) await moveAll(redis, group.moves, tallyOf(group.name));
  const moved = Object.values(groups).reduce((sum, tally) => sum + tally.moved + tally.merged, 0);
  const left = Object.values(groups).reduce((sum, tally) => sum + tally.left, 0);
  // Counts only: a key's name may hold a phone number.
  if (moved > 0)
    logger?.info(
      {
        redis: 'keys-moved',
        keys: moved,
        groups: Object.keys(groups).filter((name) => (groups[name]?.moved ?? 0) > 0),
      },
      'redis: keys of the layout before hash tags moved to their tagged names (docs/operations.md#redis-keys)',
    );
  if (left > 0)
    logger?.warn(
      { redis: 'keys-left', keys: left },
      'redis: keys of the layout before hash tags left in place, their tagged names being in use: an instance of an older version still writes them (docs/operations.md#redis-keys)',
    );
  return { found: true, groups };
}

const settled = new WeakMap<RedisClient, Promise<void>>();

/**
 * Resolves once the keys of layout 1 under `client`'s prefix were moved (migrateKeyLayout), by
 * this client: the first call starts the move, the others wait for it; after a failure the next
 * call tries again. The data-of-record stores call it before their first command.
 */
export function ensureTaggedKeys(client: RedisClient, logger?: KeyMigrationLogger): Promise<void> {
  let done = settled.get(client);
  if (done === undefined) {
    done = migrateKeyLayout(client.redis, client.keyPrefix, logger).then(() => undefined);
    settled.set(client, done);
    done.catch(() => settled.delete(client));
  }
  return done;
}
