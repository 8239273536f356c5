// Where the reporters' votes are kept: in the lists' store, shared by every instance
// (docs/reports.md, "Keeping and expiry"). With REDIS_URL, in Redis under the key prefix
// (redis-report-store.ts); else in `reports.jsonl` beside the lists file (file-report-store.ts).
// Either way every vote is held in memory too (vote-book.ts), so that the phone routes read the
// evidence without waiting on the store, and a vote made on another instance or by another
// process is in force here within a second.
import { dirname, join } from 'node:path';
import type { CallerReports, ReportRecorder, ReportVote } from '../../domain/ports/caller-reports.js';
import type { EvidenceRule } from '../../domain/reports/evidence.js';
import { openOnRedis, type ListsLocation } from '../lists/open-list-store.js';
import type { ListStoreLogger } from '../lists/list-store.js';
import type { RedisClient } from '../redis/redis-client.js';
import { openFileReportStore } from './file-report-store.js';
import { openRedisReportStore } from './redis-report-store.js';

/** The settings of the reports (REPORT_*). */
export interface ReportSettings extends EvidenceRule {
  /** REPORT_MAX_PER_TOKEN_DAY: votes one token may record per UTC day (a replaced vote counts too). */
  maxPerTokenDay: number;
}

export type ReportStoreLogger = ListStoreLogger;

/** How often the votes past retention are deleted from the store (besides at start). */
export const EXPIRE_INTERVAL_MS = 3_600_000;

export interface ReportStore extends CallerReports, ReportRecorder {
  readonly kind: 'file' | 'redis';
  /** The file, or the Redis key pattern (no vote in it). */
  readonly location: string;
  /** The votes held on `e164`, oldest first (for the operator's review). */
  votes(e164: string): ReportVote[];
  /** Every vote held (a backup; tests checking that nothing was recorded). */
  allVotes(): ReportVote[];
  /** Deletes the votes past REPORT_RETENTION_DAYS from the store and from memory; how many this call deleted from the store. */
  expire(now?: number): Promise<number>;
  /** Reads the store again (what others wrote). */
  refresh(): Promise<void>;
  /**
   * Makes the votes exactly these, less those past retention at `now` (a restore), in one change
   * every instance follows; resolves with how many were held before and how many given were
   * dropped as past retention. Throws ReportStoreUnavailable when the store cannot be written.
   */
  replaceAll(votes: readonly ReportVote[], now?: number): Promise<{ before: number; dropped: number }>;
  close(): Promise<void>;
}

export interface OpenReportStoreOptions {
  settings: ReportSettings;
  logger?: ReportStoreLogger;
  /** Follow what other processes and instances write (the service: true; a CLI command: false). */
  watch: boolean;
  /** Called after the votes held here changed (a vote here or elsewhere, an expiry, a reload). */
  onChange?: () => void;
  /** The service's shared Redis client; the CLI opens its own. */
  redisClient?: RedisClient;
  /** The clock used when a call gives no `now` (tests). */
  clock?: () => number;
}

/** The reports file: `reports.jsonl` in the lists file's directory. */
export function reportsFileOf(listsFile: string): string {
  return join(dirname(listsFile), 'reports.jsonl');
}

/** Opens the reports in the lists' store: Redis when REDIS_URL is set, else the file beside the lists. */
export async function openReportStore(location: ListsLocation, options: OpenReportStoreOptions): Promise<ReportStore> {
  const common = {
    settings: options.settings,
    watch: options.watch,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
  if (location.redis !== undefined) {
    return openOnRedis(location.redis, location, options.redisClient, (client, owned) =>
      openRedisReportStore({ client, ownsClient: owned, ...common }),
    );
  }
  return openFileReportStore({ path: reportsFileOf(location.listsFile), ...common });
}
