// The operator console's record of what the deployment screened (docs/console.md): hourly
// counters of the `/verdict` and `/cid` answers by verdict and by what decided them, reports
// received, the call log (time, number, verdict, cause, caller-ID line), and the blocklist feed's
// clients' last fetches. The counters hold no number; the call log does (personal data, kept
// CALL_LOG_RETENTION_DAYS). Memory per process, or Redis shared by every instance
// (src/infra/screening/). The rules (hours, filters, user-agent families) are here, pure.
import { DECIDED_BY, VERDICTS, type DecidedBy, type Decision, type Verdict } from '../verdict.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** One screened call as the phone routes give it: what decided and the line are worked out later, off the request's path. */
export interface PendingCall {
  /** When it was answered (epoch ms). */
  atMs: number;
  /** The caller in E.164; for a refused number its digits read in international form when there is one reading, else "". */
  number: string;
  decision(): Decision;
  /** The `/cid` line in the instance's default language. */
  cidLine(): string;
}

/** One entry of the call log. */
export interface ScreenedCall {
  atMs: number;
  number: string;
  verdict: Verdict;
  decidedBy: DecidedBy;
  cid: string;
}

/** One hour's counts (every key always present). */
export interface HourlyCounts {
  /** The hour's start (epoch ms, a whole UTC hour). */
  hourMs: number;
  verdicts: Record<Verdict, number>;
  decidedBy: Record<DecidedBy, number>;
  /** Reports received (POST /api/report accepted). */
  reports: number;
}

export const FEED_CLIENTS = ['fritzbox', 'davx5', 'spamblocker', 'other'] as const;
export type FeedClient = (typeof FEED_CLIENTS)[number];

/** A feed client's last fetch. */
export interface FeedFetch {
  client: FeedClient;
  atMs: number;
  /** Entries of the feed it got. */
  entries: number;
}

export interface CallFilter {
  verdict?: Verdict;
  decidedBy?: DecidedBy;
  /** The number starts with this (`+33` and digits). */
  prefix?: string;
  limit: number;
}

/** What one flush adds: calls answered and reports received since the last. */
export interface ScreeningBatch {
  calls: readonly ScreenedCall[];
  /** Times (epoch ms) of the reports received. */
  reports: readonly number[];
}

export interface ScreeningRecord {
  /** Adds a batch to the counters, and its calls to the log when the log is on; never rejects. */
  add(batch: ScreeningBatch): Promise<void>;
  /** The hours from `fromHourMs` to `toHourMs` (both whole hours, inclusive), oldest first, an empty count for an hour with none. */
  hourly(fromHourMs: number, toHourMs: number): Promise<HourlyCounts[]>;
  /** The calls logged within the retention at `nowMs` that pass the filter, newest first; [] when the log is off. */
  calls(filter: CallFilter, nowMs: number): Promise<ScreenedCall[]>;
  /** Notes a feed client's fetch; never rejects. */
  recordFeedFetch(fetch: FeedFetch): Promise<void>;
  /** Each client's last fetch (clients never seen are left out). */
  feedFetches(): Promise<FeedFetch[]>;
}

export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

export function emptyCounts(hourMs: number): HourlyCounts {
  return {
    hourMs,
    verdicts: Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0])) as Record<Verdict, number>,
    decidedBy: Object.fromEntries(DECIDED_BY.map((cause) => [cause, 0])) as Record<DecidedBy, number>,
    reports: 0,
  };
}

/** Adds `from` into `into`. */
export function addCounts(into: HourlyCounts, from: HourlyCounts): void {
  for (const verdict of VERDICTS) into.verdicts[verdict] += from.verdicts[verdict];
  for (const cause of DECIDED_BY) into.decidedBy[cause] += from.decidedBy[cause];
  into.reports += from.reports;
}

/** A batch's counts per hour. */
export function countsOfBatch(batch: ScreeningBatch): Map<number, HourlyCounts> {
  const hours = new Map<number, HourlyCounts>();
  const countsOf = (ms: number): HourlyCounts => {
    const hourMs = hourOf(ms);
    let counts = hours.get(hourMs);
    if (counts === undefined) hours.set(hourMs, (counts = emptyCounts(hourMs)));
    return counts;
  };
  for (const call of batch.calls) {
    const counts = countsOf(call.atMs);
    counts.verdicts[call.verdict] += 1;
    counts.decidedBy[call.decidedBy] += 1;
  }
  for (const atMs of batch.reports) countsOf(atMs).reports += 1;
  return hours;
}

export function matchesFilter(call: ScreenedCall, filter: CallFilter): boolean {
  return (
    (filter.verdict === undefined || call.verdict === filter.verdict) &&
    (filter.decidedBy === undefined || call.decidedBy === filter.decidedBy) &&
    (filter.prefix === undefined || call.number.startsWith(filter.prefix))
  );
}

/**
 * A feed client's family from its User-Agent: a Fritz!Box (`AVM`, `FRITZ!Box`), DAVx5 (once
 * DAVdroid), SpamBlocker; anything else is `other`.
 */
export function feedClientOf(userAgent: string | undefined): FeedClient {
  if (userAgent === undefined) return 'other';
  if (/fritz|\bavm\b/i.test(userAgent)) return 'fritzbox';
  if (/davx5|davdroid/i.test(userAgent)) return 'davx5';
  if (/spam[ _-]?blocker/i.test(userAgent)) return 'spamblocker';
  return 'other';
}
