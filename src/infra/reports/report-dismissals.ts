// The operator's dismissals of reported numbers (docs/reports.md, "Review"): a number dismissed
// at T leaves the review queue while no vote newer than T is held on it. The votes themselves
// are kept and keep deciding verdicts; a new vote (or a reporter's changed one) puts the number
// back in review without anything being written here.
//
// Kept with the store of record, as the votes are, and read from it on every request (a review
// is an operator's click, rare): every instance sees every dismissal at once.
// - Redis: the sorted set `{reports}:dismissed` under the key prefix, member the E.164, score the
//   dismissal's time (ms).
// - File: `reports-dismissed.json` beside the lists file, `{"dismissed": {"+336…": "ISO 8601"}}`,
//   written whole and atomically under its lock (the lists' lock discipline).
// A dismissal older than REPORT_RETENTION_DAYS covers only votes past retention, so it is
// dropped (Redis: on every write; file: on every write, and left out on reading).
// A restore (`phone-rep restore`) replaces them all in one change: Redis, one MULTI (DEL, ZADD);
// file, one atomic write under its lock.
import { REPORTS_KEYS } from '../redis/keys.js';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ReportStoreUnavailable } from '../../domain/ports/caller-reports.js';
import { takeLock, writeFileAtomically } from '../lists/file-list-store.js';
import type { ListsLocation } from '../lists/open-list-store.js';
import type { RedisClient } from '../redis/redis-client.js';
import { DAY_MS } from './vote-book.js';

const DISMISSED = REPORTS_KEYS.dismissed;

export interface ReportDismissals {
  readonly kind: 'file' | 'redis';
  /** The sorted set's key (prefix included) or the file's path, for the CLI's output. */
  readonly location: string;
  /** Every dismissal in force at `now`: E.164 → when it was dismissed (ms). Throws ReportStoreUnavailable. */
  read(now: number): Promise<Map<string, number>>;
  /** Dismisses `e164` at `at` (replacing an earlier dismissal). Throws ReportStoreUnavailable. */
  dismiss(e164: string, at: number): Promise<void>;
  /** Takes the dismissal back; false when there was none. Throws ReportStoreUnavailable. */
  undismiss(e164: string, now: number): Promise<boolean>;
  /**
   * Makes the dismissals exactly these, less those past retention at `now` (a restore), in one
   * change; resolves with how many were in force before and how many given were dropped as past
   * retention. Throws ReportStoreUnavailable.
   */
  replaceAll(dismissals: ReadonlyMap<string, number>, now: number): Promise<{ before: number; dropped: number }>;
}

/** The dismissals file: `reports-dismissed.json` in the lists file's directory. */
export function dismissalsFileOf(listsFile: string): string {
  return join(dirname(listsFile), 'reports-dismissed.json');
}

/** The dismissals in the lists' store: Redis (the service's client) when REDIS_URL is set, else the file. */
export function openReportDismissals(
  location: ListsLocation,
  options: { retentionDays: number; redisClient?: RedisClient },
): ReportDismissals {
  const retentionMs = options.retentionDays * DAY_MS;
  if (location.redis !== undefined && options.redisClient !== undefined)
    return redisDismissals(options.redisClient, retentionMs);
  return fileDismissals(dismissalsFileOf(location.listsFile), retentionMs);
}

export function redisDismissals(client: RedisClient, retentionMs: number): ReportDismissals {
  async function run<T>(what: string, op: () => Promise<T>): Promise<T> {
    if (client.redis.status !== 'ready')
      throw new ReportStoreUnavailable(`the dismissals could not be ${what} in Redis: Redis is not reachable`);
    try {
      return await op();
    } catch (error) {
      client.reportFailure(error);
      throw new ReportStoreUnavailable(`the dismissals could not be ${what} in Redis: ${(error as Error).message}`);
    }
  }
  return {
    kind: 'redis',
    location: `${client.keyPrefix}${DISMISSED}`,
    async read(now) {
      const flat = await run('read', () =>
        client.redis.zrangebyscore(DISMISSED, `(${now - retentionMs}`, '+inf', 'WITHSCORES'),
      );
      const marks = new Map<string, number>();
      for (let at = 0; at + 1 < flat.length; at += 2) marks.set(flat[at] as string, Number(flat[at + 1]));
      return marks;
    },
    async dismiss(e164, at) {
      await run('written', () =>
        client.redis
          .multi()
          .zadd(DISMISSED, at, e164)
          .zremrangebyscore(DISMISSED, '-inf', `(${at - retentionMs}`)
          .exec(),
      );
    },
    async undismiss(e164, now) {
      const reply = await run('written', () =>
        client.redis
          .multi()
          .zscore(DISMISSED, e164)
          .zrem(DISMISSED, e164)
          .zremrangebyscore(DISMISSED, '-inf', `(${now - retentionMs}`)
          .exec(),
      );
      const score = reply?.[0]?.[1];
      return typeof score === 'string' && Number(score) > now - retentionMs;
    },
    async replaceAll(dismissals, now) {
      const kept = [...dismissals].filter(([, at]) => at > now - retentionMs);
      const reply = await run('written', async () => {
        const transaction = client.redis
          .multi()
          .zcount(DISMISSED, `(${now - retentionMs}`, '+inf')
          .del(DISMISSED);
        // ZADD takes at least one member: an empty restore is the DEL alone.
        if (kept.length > 0) transaction.zadd(DISMISSED, ...kept.flatMap(([e164, at]) => [at, e164]));
        const replies = await transaction.exec();
        const failed = replies?.find(([error]) => error !== null)?.[0];
        if (failed) throw failed;
        return replies;
      });
      return { before: Number(reply?.[0]?.[1] ?? 0), dropped: dismissals.size - kept.length };
    },
  };
}

export function fileDismissals(path: string, retentionMs: number): ReportDismissals {
  async function readAll(): Promise<Map<string, number>> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw new ReportStoreUnavailable(`the dismissals file cannot be read (${path}): ${(error as Error).message}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ReportStoreUnavailable(`the dismissals file is not JSON (${path}): fix or delete it`);
    }
    const dismissed = (value as { dismissed?: unknown } | null)?.dismissed;
    const marks = new Map<string, number>();
    if (typeof dismissed !== 'object' || dismissed === null) return marks;
    for (const [e164, iso] of Object.entries(dismissed)) {
      const at = typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
      if (/^\+\d{1,15}$/.test(e164) && Number.isFinite(at)) marks.set(e164, at);
    }
    return marks;
  }

  const inForce = (marks: Map<string, number>, now: number): Map<string, number> =>
    new Map([...marks].filter(([, at]) => at > now - retentionMs));

  /** Reads, changes and writes the file back under its lock; what `change` answers. */
  async function update<T>(now: number, change: (marks: Map<string, number>) => T): Promise<T> {
    let lock;
    try {
      lock = await takeLock(`${path}.lock`);
    } catch (error) {
      throw new ReportStoreUnavailable(`the dismissals file cannot be locked: ${(error as Error).message}`);
    }
    try {
      const marks = inForce(await readAll(), now);
      const answer = change(marks);
      const sorted = [...marks].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const dismissed = Object.fromEntries(sorted.map(([e164, at]) => [e164, new Date(at).toISOString()]));
      try {
        await writeFileAtomically(path, `${JSON.stringify({ dismissed }, null, 2)}\n`, { mode: 0o600 });
      } catch (error) {
        throw new ReportStoreUnavailable(
          `the dismissals file cannot be written (${path}): ${(error as Error).message}`,
        );
      }
      return answer;
    } finally {
      await lock.release();
    }
  }

  return {
    kind: 'file',
    location: path,
    read: async (now) => inForce(await readAll(), now),
    dismiss: (e164, at) =>
      update(at, (marks) => {
        marks.set(e164, at);
      }),
    undismiss: (e164, now) => update(now, (marks) => marks.delete(e164)),
    // The file as it is then, under the lock: replaced whole by one atomic write.
    replaceAll: (dismissals, now) =>
      update(now, (marks) => {
        const before = marks.size;
        marks.clear();
        for (const [e164, at] of inForce(new Map(dismissals), now)) marks.set(e164, at);
        return { before, dropped: dismissals.size - marks.size };
      }),
  };
}
