// The screening record shared by every instance (docs/console.md):
// - `{screening}:hour:<epoch ms of the hour>`, one hash per hour (fields `v:<verdict>`,
//   `d:<decided by>`, `reports`), incremented with HINCRBY so every instance's counts are
//   summed, expiring STATS_DAYS after the hour ends;
// - `{screening}:calls`, a sorted set (score the time of the call, member the entry as JSON) trimmed
//   to CALL_LOG_MAX_ENTRIES and to CALL_LOG_RETENTION_DAYS at each write, and expiring with
//   the retention;
// - `{screening}:feed-clients`, a hash of each feed client family's last fetch.
// Redis unusable: a batch goes to this process's memory record instead, and reads add that
// record in, so nothing this instance saw is lost from its own answers.
import { SCREENING_KEYS } from '../redis/keys.js';
import { DECIDED_BY, VERDICTS, type DecidedBy, type Verdict } from '../../domain/verdict.js';
import {
  addCounts,
  countsOfBatch,
  DAY_MS,
  emptyCounts,
  FEED_CLIENTS,
  HOUR_MS,
  matchesFilter,
  type FeedClient,
  type FeedFetch,
  type HourlyCounts,
  type ScreenedCall,
  type ScreeningRecord,
} from '../../domain/ports/screening-record.js';
import type { RedisClient } from '../redis/redis-client.js';
import { createMemoryScreeningRecord, type ScreeningRecordOptions } from './memory-screening-record.js';

const hourKey = (hourMs: number): string => SCREENING_KEYS.hour(String(hourMs));
const LOG_KEY = SCREENING_KEYS.calls;
const FEED_KEY = SCREENING_KEYS.feedClients;
/** Log entries read per round trip while filtering. */
const PAGE = 500;

interface StoredCall {
  /** Unique per entry, so two equal calls in the same millisecond are two members. */
  i: string;
  a: number;
  n: string;
  v: Verdict;
  d: DecidedBy;
  c: string;
}

function parseCall(text: string): ScreenedCall | undefined {
  try {
    const value = JSON.parse(text) as Partial<StoredCall>;
    if (
      typeof value.a !== 'number' ||
      typeof value.n !== 'string' ||
      typeof value.c !== 'string' ||
      !(VERDICTS as readonly unknown[]).includes(value.v) ||
      !(DECIDED_BY as readonly unknown[]).includes(value.d)
    )
      return undefined;
    return {
      atMs: value.a,
      number: value.n,
      verdict: value.v as Verdict,
      decidedBy: value.d as DecidedBy,
      cid: value.c,
    };
  } catch {
    return undefined;
  }
}

function countsOfHash(hourMs: number, fields: Record<string, string>): HourlyCounts {
  const counts = emptyCounts(hourMs);
  for (const verdict of VERDICTS) counts.verdicts[verdict] = Number(fields[`v:${verdict}`] ?? 0) || 0;
  for (const cause of DECIDED_BY) counts.decidedBy[cause] = Number(fields[`d:${cause}`] ?? 0) || 0;
  counts.reports = Number(fields.reports ?? 0) || 0;
  return counts;
}

export function createRedisScreeningRecord(options: ScreeningRecordOptions & { client: RedisClient }): ScreeningRecord {
  const { client } = options;
  const fallback = createMemoryScreeningRecord(options);
  const statsMs = options.statsDays * DAY_MS;
  const retentionMs = options.callLogRetentionDays * DAY_MS;
  const maxEntries = options.callLogMaxEntries;
  const logs = options.callLogRetentionDays > 0;
  const instanceId = Math.random().toString(36).slice(2, 10);
  let sequence = 0;

  return {
    async add(batch) {
      const hours = countsOfBatch(batch);
      if (hours.size === 0 && batch.calls.length === 0) return;
      await client.attempt(
        async (redis) => {
          const multi = redis.multi();
          for (const [hourMs, counts] of hours) {
            const key = hourKey(hourMs);
            for (const verdict of VERDICTS)
              if (counts.verdicts[verdict] > 0) multi.hincrby(key, `v:${verdict}`, counts.verdicts[verdict]);
            for (const cause of DECIDED_BY)
              if (counts.decidedBy[cause] > 0) multi.hincrby(key, `d:${cause}`, counts.decidedBy[cause]);
            if (counts.reports > 0) multi.hincrby(key, 'reports', counts.reports);
            multi.pexpireat(key, hourMs + HOUR_MS + statsMs);
          }
          if (logs && batch.calls.length > 0) {
            const members: Array<string | number> = [];
            let newest = 0;
            for (const call of batch.calls) {
              sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
              const stored: StoredCall = {
                i: `${instanceId}:${sequence}`,
                a: call.atMs,
                n: call.number,
                v: call.verdict,
                d: call.decidedBy,
                c: call.cid,
              };
              members.push(call.atMs, JSON.stringify(stored));
              newest = Math.max(newest, call.atMs);
            }
            multi
              .zadd(LOG_KEY, ...members)
              .zremrangebyscore(LOG_KEY, '-inf', newest - retentionMs)
              .zremrangebyrank(LOG_KEY, 0, -(maxEntries + 1))
              .pexpire(LOG_KEY, retentionMs);
          }
          await multi.exec();
        },
        () => fallback.add(batch),
      );
    },

    async hourly(fromHourMs, toHourMs) {
      const local = await fallback.hourly(fromHourMs, toHourMs);
      const shared = await client.attempt(
        async (redis) => {
          const pipeline = redis.pipeline();
          for (const counts of local) pipeline.hgetall(hourKey(counts.hourMs));
          const replies = (await pipeline.exec()) ?? [];
          return local.map((counts, index) => {
            const [error, fields] = replies[index] ?? [null, {}];
            if (error !== null) throw error;
            return countsOfHash(counts.hourMs, (fields ?? {}) as Record<string, string>);
          });
        },
        () => undefined,
      );
      if (shared !== undefined) shared.forEach((counts, index) => addCounts(local[index] ?? counts, counts));
      return local;
    },

    async calls(filter, nowMs) {
      if (!logs) return [];
      const local = await fallback.calls(filter, nowMs);
      const shared = await client.attempt(
        async (redis) => {
          const found: ScreenedCall[] = [];
          for (let offset = 0; offset < maxEntries && found.length < filter.limit; offset += PAGE) {
            const members = await redis.zrevrangebyscore(
              LOG_KEY,
              '+inf',
              `(${nowMs - retentionMs}`,
              'LIMIT',
              offset,
              PAGE,
            );
            for (const member of members) {
              const call = parseCall(member);
              if (call !== undefined && matchesFilter(call, filter)) found.push(call);
              if (found.length >= filter.limit) break;
            }
            if (members.length < PAGE) break;
          }
          return found;
        },
        () => [] as ScreenedCall[],
      );
      if (local.length === 0) return shared;
      return [...shared, ...local].sort((a, b) => b.atMs - a.atMs).slice(0, filter.limit);
    },

    async recordFeedFetch(fetch) {
      await client.attempt(
        async (redis) => {
          await redis
            .multi()
            .hset(FEED_KEY, fetch.client, JSON.stringify({ atMs: fetch.atMs, entries: fetch.entries }))
            .pexpire(FEED_KEY, statsMs)
            .exec();
        },
        () => fallback.recordFeedFetch(fetch),
      );
    },

    async feedFetches() {
      const local = await fallback.feedFetches();
      const shared = await client.attempt(
        async (redis) => {
          const fields = await redis.hgetall(FEED_KEY);
          return FEED_CLIENTS.flatMap((client): FeedFetch[] => {
            const text = fields[client];
            if (text === undefined) return [];
            try {
              const value = JSON.parse(text) as { atMs?: unknown; entries?: unknown };
              if (typeof value.atMs !== 'number' || typeof value.entries !== 'number') return [];
              return [{ client, atMs: value.atMs, entries: value.entries }];
            } catch {
              return [];
            }
          });
        },
        () => [] as FeedFetch[],
      );
      const newest = new Map<FeedClient, FeedFetch>();
      for (const fetch of [...shared, ...local]) {
        const known = newest.get(fetch.client);
        if (known === undefined || known.atMs < fetch.atMs) newest.set(fetch.client, fetch);
      }
      return FEED_CLIENTS.flatMap((name) => newest.get(name) ?? []);
    },
  };
}
