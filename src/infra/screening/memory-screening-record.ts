// The screening record in this process (docs/console.md): hourly counts in a Map kept
// `statsDays`, the call log in a ring buffer of `maxEntries` whose entries older than the
// retention are left out, and the feed clients' last fetches. Also the Redis record's fallback.
import {
  addCounts,
  countsOfBatch,
  DAY_MS,
  emptyCounts,
  HOUR_MS,
  hourOf,
  matchesFilter,
  type FeedClient,
  type FeedFetch,
  type HourlyCounts,
  type ScreenedCall,
  type ScreeningRecord,
} from '../../domain/ports/screening-record.js';

export interface ScreeningRecordOptions {
  /** STATS_DAYS: how long hourly counts are kept. */
  statsDays: number;
  /** CALL_LOG_RETENTION_DAYS: how long a call stays in the log; 0 = the log is off. */
  callLogRetentionDays: number;
  /** CALL_LOG_MAX_ENTRIES. */
  callLogMaxEntries: number;
  now?: () => number;
}

export interface MemoryScreeningRecord extends ScreeningRecord {
  /** Calls held (expired ones included until overwritten). */
  logSize(): number;
}

export function createMemoryScreeningRecord(options: ScreeningRecordOptions): MemoryScreeningRecord {
  const now = options.now ?? Date.now;
  const statsMs = options.statsDays * DAY_MS;
  const retentionMs = options.callLogRetentionDays * DAY_MS;
  const capacity = options.callLogRetentionDays > 0 ? Math.max(1, options.callLogMaxEntries) : 0;
  const hours = new Map<number, HourlyCounts>();
  // The ring: `next` is where the next call goes; `size` how many are held.
  const ring: Array<ScreenedCall | undefined> = new Array<ScreenedCall | undefined>(capacity);
  let next = 0;
  let size = 0;
  const fetches = new Map<FeedClient, FeedFetch>();

  function prune(nowMs: number): void {
    const oldest = hourOf(nowMs - statsMs);
    for (const hourMs of hours.keys()) if (hourMs < oldest) hours.delete(hourMs);
  }

  return {
    async add(batch) {
      for (const [hourMs, counts] of countsOfBatch(batch)) {
        const held = hours.get(hourMs);
        if (held === undefined) hours.set(hourMs, counts);
        else addCounts(held, counts);
      }
      prune(now());
      if (capacity === 0) return;
      for (const call of batch.calls) {
        ring[next] = call;
        next = (next + 1) % capacity;
        size = Math.min(capacity, size + 1);
      }
    },
    async hourly(fromHourMs, toHourMs) {
      const listed: HourlyCounts[] = [];
      for (let hourMs = fromHourMs; hourMs <= toHourMs; hourMs += HOUR_MS) {
        const counts = emptyCounts(hourMs);
        const held = hours.get(hourMs);
        if (held !== undefined) addCounts(counts, held);
        listed.push(counts);
      }
      return listed;
    },
    async calls(filter, nowMs) {
      if (capacity === 0) return [];
      const since = nowMs - retentionMs;
      const listed: ScreenedCall[] = [];
      for (let index = 1; index <= size && listed.length < filter.limit; index += 1) {
        const call = ring[(next - index + capacity) % capacity];
        if (call === undefined || call.atMs <= since) break;
        if (matchesFilter(call, filter)) listed.push(call);
      }
      return listed;
    },
    async recordFeedFetch(fetch) {
      const known = fetches.get(fetch.client);
      if (known === undefined || known.atMs <= fetch.atMs) fetches.set(fetch.client, { ...fetch });
    },
    async feedFetches() {
      return [...fetches.values()];
    },
    logSize: () => size,
  };
}
