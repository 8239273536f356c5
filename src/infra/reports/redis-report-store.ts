// The reports in Redis (REDIS_URL), data of record shared by every instance, under the key prefix
// (redis/keys.ts), all with the hash tag {reports} (the scripts use them together):
//   {reports}:n:<e164>             hash, token id → the vote as JSON {r, at, c?}; expires (PEXPIREAT)
//                                  when its newest vote passes REPORT_RETENTION_DAYS
//   {reports}:expiry               sorted set, `<e164> <token id>` scored by the vote's time: the
//                                  index of every vote, read at start and pruned past retention
//   {reports}:cap:<day>:<token id> the token's count of votes recorded that UTC day (2 days' life)
//   {reports}:version              counter, +1 for every change, in the same script as the change
//   {reports}:changes              stream of the changes {v, op: put | expire, n, t, value | before},
//                                  trimmed to about STREAM_MAX_LENGTH entries
// The expiry and restore scripts reach the number's hashes through their names (not passed as
// keys): the tag keeps them in the slot of the keys they are given.
//
// A vote and its cap check are one script (REPORTS_RECORD_LUA): two instances recording at once
// lose nothing and never pass the cap together. Every instance follows the stream as the lists
// do (redis/change-stream-follower.ts): a blocking XREAD on a connection of its own, changes applied in
// version order, anything else (a gap, a trimmed stream, a lost connection) a full read. Its own
// vote is in force here as soon as Redis took it; on a primary with replicas (Sentinel) it is
// acknowledged once a replica holds it too (redis/replica-copy.ts), so a failover loses no
// acknowledged vote.
import { REPORT_RATINGS, ReportStoreUnavailable, type ReportVote } from '../../domain/ports/caller-reports.js';
import { redisReadyWithin, type RedisClient } from '../redis/redis-client.js';
import type { ScriptedRedis } from '../redis/scripts.js';
import { REPORTS_KEYS } from '../redis/keys.js';
import { ensureTaggedKeys } from '../redis/redis-key-migration.js';
import { followChangeStream, type ChangeStreamFollower } from '../redis/change-stream-follower.js';
import { awaitReplicaCopy } from '../redis/replica-copy.js';
import { EXPIRE_INTERVAL_MS, type ReportSettings, type ReportStore, type ReportStoreLogger } from './report-store.js';
import { createVoteBook, DAY_MS, secondsToUtcMidnight, utcDayOf } from './vote-book.js';
import { voteInForce } from '../../domain/reports/evidence.js';

const { numberPrefix: NUMBER, number: numberKey, expiry: EXPIRY, cap: capKey } = REPORTS_KEYS;
const { version: VERSION, changes: CHANGES } = REPORTS_KEYS;
/** About how many changes the stream keeps: an instance further behind reads everything again. */
export const STREAM_MAX_LENGTH = 10_000;
const READ_BATCH = 500;
const EXPIRE_BATCH = 1000;

export interface RedisReportStoreOptions {
  client: RedisClient;
  /** Quit the client on close (the CLI's own). */
  ownsClient?: boolean;
  settings: ReportSettings;
  logger?: ReportStoreLogger;
  /** Follow the other instances' changes (the service); the CLI reads once. Default true. */
  watch?: boolean;
  onChange?: () => void;
  clock?: () => number;
  streamMaxLength?: number;
  /** How long opening waits for Redis before it starts with no vote (default 2 s). */
  connectWaitMs?: number;
}

const RATINGS: ReadonlySet<string> = new Set(REPORT_RATINGS);

function encodeVote(vote: ReportVote): string {
  return JSON.stringify({ r: vote.rating, at: vote.at, ...(vote.comment === undefined ? {} : { c: vote.comment }) });
}

function decodeVote(e164: string, tokenId: string, json: string): ReportVote | undefined {
  try {
    const value = JSON.parse(json) as { r?: unknown; at?: unknown; c?: unknown };
    if (typeof value.r !== 'string' || !RATINGS.has(value.r) || typeof value.at !== 'number') return undefined;
    return {
      e164,
      tokenId,
      rating: value.r as ReportVote['rating'],
      at: value.at,
      ...(typeof value.c === 'string' ? { comment: value.c } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Every vote replaced at once (a restore): each number's hash found through {reports}:expiry is
 * deleted, then the given votes written with their index and expiry, and one `reload` change
 * noted, so every instance reads everything again. KEYS = {reports}:expiry, {reports}:version,
 * {reports}:changes. ARGV = the hashes' full key prefix, the stream's bound, the retention (ms),
 * then e164, token id, value, time (ms) for each vote. Returns the votes indexed before.
 */
const REPORTS_REPLACE_LUA = `
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local deleted = {}
for _, member in ipairs(members) do
  local space = string.find(member, ' ', 1, true)
  if space then
    local key = ARGV[1] .. string.sub(member, 1, space - 1)
    if not deleted[key] then
      deleted[key] = true
      redis.call('DEL', key)
    end
  end
end
redis.call('DEL', KEYS[1])
local newest = {}
for i = 4, #ARGV, 4 do
  local key = ARGV[1] .. ARGV[i]
  local at = tonumber(ARGV[i + 3])
  redis.call('HSET', key, ARGV[i + 1], ARGV[i + 2])
  redis.call('ZADD', KEYS[1], at, ARGV[i] .. ' ' .. ARGV[i + 1])
  if newest[key] == nil or newest[key] < at then newest[key] = at end
end
for key, at in pairs(newest) do
  redis.call('PEXPIREAT', key, string.format('%.0f', at + tonumber(ARGV[3])))
end
local v = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'v', v, 'op', 'reload')
return #members
`;

function fieldsOf(fields: readonly string[]): Map<string, string> {
  const named = new Map<string, string>();
  for (let at = 0; at + 1 < fields.length; at += 2) named.set(fields[at] as string, fields[at + 1] as string);
  return named;
}

export async function openRedisReportStore(options: RedisReportStoreOptions): Promise<ReportStore> {
  const { client, settings, logger } = options;
  const clock = options.clock ?? Date.now;
  const maxLength = options.streamMaxLength ?? STREAM_MAX_LENGTH;
  const retentionMs = settings.retentionDays * DAY_MS;
  const watching = options.watch !== false;
  const book = createVoteBook(settings, clock);
  let loadedVersion = -1;
  let lastId = '0-0';
  let closed = false;
  const stop = new AbortController();
  const changed = (): void => options.onChange?.();

  async function run<T>(what: string, op: (redis: ScriptedRedis) => Promise<T>): Promise<T> {
    if (client.redis.status !== 'ready')
      throw new ReportStoreUnavailable(`the reports could not be ${what} in Redis: Redis is not reachable`);
    try {
      // Once per client: the keys of the layout before hash tags moved first (redis-key-migration.ts).
      await ensureTaggedKeys(client, logger);
      return await op(client.redis);
    } catch (error) {
      client.reportFailure(error);
      throw new ReportStoreUnavailable(`the reports could not be ${what} in Redis: ${(error as Error).message}`);
    }
  }

  /**
   * After a write: on a primary with replicas, once one holds it (replica-copy.ts), so a failover
   * right after cannot lose it. Refused (503) otherwise; the reporter sends the vote again (it replaces itself).
   */
  async function copied(): Promise<void> {
    try {
      await awaitReplicaCopy(client.redis);
    } catch (error) {
      throw new ReportStoreUnavailable(`the report is not yet on a Redis replica: ${(error as Error).message}`);
    }
  }

  /** Reads every vote in force (through {reports}:expiry) and the version and stream position before it. */
  async function fullRead(): Promise<void> {
    const head = await run('read', (redis) =>
      redis.multi().get(VERSION).xrevrange(CHANGES, '+', '-', 'COUNT', 1).exec(),
    );
    const versionText = head?.[0]?.[1] as string | null | undefined;
    const last = (head?.[1]?.[1] ?? []) as Array<[string, string[]]>;
    const members = await run('read', (redis) => redis.zrangebyscore(EXPIRY, `(${clock() - retentionMs}`, '+inf'));
    const numbers = [...new Set(members.map((member) => member.slice(0, member.indexOf(' '))))];
    const votes: ReportVote[] = [];
    for (let start = 0; start < numbers.length; start += READ_BATCH) {
      const batch = numbers.slice(start, start + READ_BATCH);
      const replies = await run('read', (redis) => {
        const pipeline = redis.pipeline();
        for (const e164 of batch) pipeline.hgetall(numberKey(e164));
        return pipeline.exec();
      });
      batch.forEach((e164, at) => {
        const hash = (replies?.[at]?.[1] ?? {}) as Record<string, string>;
        for (const [tokenId, json] of Object.entries(hash)) {
          const vote = decodeVote(e164, tokenId, json);
          if (vote !== undefined) votes.push(vote);
        }
      });
    }
    book.replaceAll(votes);
    loadedVersion = versionText === null || versionText === undefined ? 0 : Number(versionText);
    lastId = last[0]?.[0] ?? '0-0';
    changed();
  }

  let reads: Promise<void> = Promise.resolve();
  function readAll(): Promise<void> {
    const read = reads.then(fullRead);
    reads = read.catch(() => undefined);
    return read;
  }

  async function record(vote: ReportVote, now = clock()): ReturnType<ReportStore['record']> {
    const value = encodeVote(vote);
    const reply = await run('written', (redis) =>
      redis.phonerepReportsRecord(
        numberKey(vote.e164),
        EXPIRY,
        capKey(utcDayOf(now), vote.tokenId),
        VERSION,
        CHANGES,
        vote.tokenId,
        value,
        vote.at,
        `${vote.e164} ${vote.tokenId}`,
        settings.maxPerTokenDay,
        2 * DAY_MS,
        retentionMs,
        maxLength,
        vote.e164,
      ),
    );
    if (!Array.isArray(reply)) throw new ReportStoreUnavailable('unexpected reply of Redis to a report');
    if (Number(reply[0]) === 1) await copied();
    if (Number(reply[0]) !== 1)
      return { ok: false, reason: 'token_day_cap', retryAfterSeconds: secondsToUtcMidnight(now) };
    book.put(vote);
    changed();
    return { ok: true, replaced: Number(reply[2]) === 0 };
  }

  async function replaceAll(votes: readonly ReportVote[], now = clock()): ReturnType<ReportStore['replaceAll']> {
    const kept = votes.filter((vote) => voteInForce(vote, now, settings.retentionDays));
    const args = kept.flatMap((vote) => [vote.e164, vote.tokenId, encodeVote(vote), String(vote.at)]);
    const before = await run('written', (redis) =>
      redis.eval(
        REPORTS_REPLACE_LUA,
        3,
        EXPIRY,
        VERSION,
        CHANGES,
        `${client.keyPrefix}${NUMBER}`,
        maxLength,
        retentionMs,
        ...args,
      ),
    );
    await copied();
    await readAll();
    return { before: Number(before), dropped: votes.length - kept.length };
  }

  async function expire(now = clock()): Promise<number> {
    const cutoff = now - retentionMs;
    let deleted = 0;
    for (;;) {
      const reply = await run('written', (redis) =>
        redis.phonerepReportsExpire(
          EXPIRY,
          VERSION,
          CHANGES,
          cutoff,
          maxLength,
          EXPIRE_BATCH,
          `${client.keyPrefix}${NUMBER}`,
        ),
      );
      const count = Array.isArray(reply) ? Number(reply[0]) : 0;
      deleted += count;
      if (count < EXPIRE_BATCH) break;
    }
    const dropped = book.dropExpired(now);
    if (dropped > 0) changed();
    return deleted;
  }

  const expireLogged = (): Promise<void> =>
    expire()
      .then((dropped) => {
        if (dropped > 0) logger?.info({ reports: 'expired', votes: dropped }, 'reports: votes past retention deleted');
      })
      .catch((error: unknown) =>
        logger?.warn(
          { err: (error as Error).message.slice(0, 200) },
          'reports: votes past retention could not be deleted yet',
        ),
      );

  // Opening: as the lists, wait a little for Redis; down at start, no vote counts until it answers.
  let reachable = await redisReadyWithin(client.redis, options.connectWaitMs ?? 2000, stop.signal);
  if (reachable) {
    try {
      await readAll();
      await expireLogged();
    } catch (error) {
      if (!(error instanceof ReportStoreUnavailable)) throw error;
      reachable = false;
    }
  }
  if (!reachable) {
    if (!watching) throw new ReportStoreUnavailable('the reports could not be read: Redis is not reachable');
    logger?.error(
      { reports: 'unreadable' },
      'reports: Redis cannot be reached at start; no report counts until it answers',
    );
  }

  let follower: ChangeStreamFollower | undefined;
  let expiry: NodeJS.Timeout | undefined;
  if (watching) {
    follower = followChangeStream({
      redis: client.redis,
      connectionName: 'phonerep-reports-reader',
      stream: CHANGES,
      subject: 'reports',
      logger,
      readFirst: !reachable,
      lastId: () => lastId,
      readAll,
      apply(id, list) {
        const fields = fieldsOf(list);
        const version = Number(fields.get('v') ?? Number.NaN);
        if (version !== loadedVersion + 1) return false;
        const op = fields.get('op');
        if (op === 'put') {
          const vote = decodeVote(fields.get('n') ?? '', fields.get('t') ?? '', fields.get('value') ?? '');
          if (vote !== undefined) book.put(vote);
        } else if (op === 'expire') {
          book.dropExpired(Number(fields.get('before')) + retentionMs);
        } else if (op === 'reload') {
          // Everything replaced (a restore): read it all.
          return false;
        }
        loadedVersion = version;
        lastId = id;
        return true;
      },
      changed,
      closed: () => closed,
      signal: stop.signal,
    });
    expiry = setInterval(() => void expireLogged(), EXPIRE_INTERVAL_MS);
    expiry.unref();
  }

  return {
    kind: 'redis',
    location: `${client.keyPrefix}${NUMBER}*`,
    evidence: (e164, now) => book.evidence(e164, now),
    reportedSpam: (now) => book.reportedSpam(now),
    version: (now) => book.version(now),
    votes: (e164) => book.votes(e164),
    allVotes: () => [...book.all()],
    record,
    replaceAll,
    expire,
    refresh: () => readAll(),
    async close() {
      closed = true;
      stop.abort();
      if (expiry !== undefined) clearInterval(expiry);
      await follower?.stop();
      await reads;
      if (options.ownsClient === true) await client.quit();
    },
  };
}
