// The reports without Redis: `reports.jsonl` beside the lists file (docs/reports.md, "Keeping
// and expiry"). One JSON object a line, appended:
//   {"n":"+33612345678","t":"tok_0123456789","r":"fraud","at":1764331200000,"c":"…","rec":1764331200000}
//       a vote (`c` the comment when there is one; `rec` when it was recorded, for the daily cap);
//       a later line of the same number and token replaces the earlier one;
//   {"cap":"tok_0123456789","day":"2026-11-28","count":7}
//       a token's count of recorded votes that day, as compaction leaves it (votes after it add to it).
//
// - Writers (every instance, the CLI) append under the lists' lock discipline (`takeLock` on
//   `reports.jsonl.lock`): under the lock a writer first reads what others appended, so its
//   check of the per-token daily cap counts every vote recorded that day, then appends one line
//   and fsyncs. A line torn by a crash is left out on reading (the next append starts a new line).
// - The file is compacted (written anew with `writeFileAtomically`, one line per vote in force
//   and one per token's count of the day) once it holds twice as many lines as votes, and when
//   votes pass REPORT_RETENTION_DAYS: at start, every EXPIRE_INTERVAL_MS, and on `expire()`.
//   An expired vote is then gone from the file, not only from the count.
// - Others' changes are seen as the lists file's are: fs.watch on the directory and a stat poll
//   every POLL_MS. Appended lines are read from where the last read stopped; a file replaced
//   (compaction, a restore) is read whole.
import { oneAtATime } from '../one-at-a-time.js';
import { open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { REPORT_RATINGS, ReportStoreUnavailable, type ReportVote } from '../../domain/ports/caller-reports.js';
import { voteInForce } from '../../domain/reports/evidence.js';
import { POLL_MS, takeLock, writeFileAtomically, type HeldLock } from '../lists/file-list-store.js';
import { createSerialReloader } from '../lists/list-store.js';
import { watchFileWithPoll, type FileWatch } from '../watch-file.js';
import { EXPIRE_INTERVAL_MS, type ReportSettings, type ReportStore, type ReportStoreLogger } from './report-store.js';
import { createVoteBook, secondsToUtcMidnight, utcDayOf } from './vote-book.js';

/** Lines beyond twice the votes held before the file is compacted (a small file is left alone). */
const COMPACT_SLACK_LINES = 1000;
const LINES_PER_CHUNK = 1000;

export interface FileReportStoreOptions {
  path: string;
  settings: ReportSettings;
  logger?: ReportStoreLogger;
  /** Follow the file as others write it (the service); the CLI reads it once. Default true. */
  watch?: boolean;
  onChange?: () => void;
  clock?: () => number;
  /** The lock's lease and wait, in ms (tests). */
  lockLeaseMs?: number;
  lockWaitMs?: number;
}

type Line =
  | { kind: 'vote'; vote: ReportVote; recordedAt: number | undefined }
  | { kind: 'cap'; tokenId: string; day: string; count: number };

const RATINGS: ReadonlySet<string> = new Set(REPORT_RATINGS);

/** One line of the file, or undefined when it is none of the two kinds (torn, edited by hand). */
function parseLine(text: string): Line | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const line = value as Record<string, unknown>;
  if (typeof line.cap === 'string' && typeof line.day === 'string' && typeof line.count === 'number')
    return { kind: 'cap', tokenId: line.cap, day: line.day, count: line.count };
  if (
    typeof line.n !== 'string' ||
    typeof line.t !== 'string' ||
    typeof line.r !== 'string' ||
    !RATINGS.has(line.r) ||
    typeof line.at !== 'number' ||
    !Number.isFinite(line.at)
  )
    return undefined;
  const vote: ReportVote = {
    e164: line.n,
    tokenId: line.t,
    rating: line.r as ReportVote['rating'],
    at: line.at,
    ...(typeof line.c === 'string' ? { comment: line.c } : {}),
  };
  return { kind: 'vote', vote, recordedAt: typeof line.rec === 'number' ? line.rec : undefined };
}

/** One vote as a line of the file (without its newline): what `record()` appends and compaction writes; exported for the bench that seeds a file of 100,000 numbers. */
export function voteLine(vote: ReportVote, recordedAt?: number): string {
  return JSON.stringify({
    n: vote.e164,
    t: vote.tokenId,
    r: vote.rating,
    at: vote.at,
    ...(vote.comment === undefined ? {} : { c: vote.comment }),
    ...(recordedAt === undefined ? {} : { rec: recordedAt }),
  });
}

export async function openFileReportStore(options: FileReportStoreOptions): Promise<ReportStore> {
  const { path, settings, logger } = options;
  const clock = options.clock ?? Date.now;
  const lockPath = `${path}.lock`;
  const book = createVoteBook(settings, clock);
  /** Each token's count of recorded votes on its latest day. */
  const caps = new Map<string, { day: string; count: number }>();
  // Where the last read stopped: the file (inode), the bytes read (whole lines), the file's size then.
  let inode: bigint | undefined;
  let offset = 0;
  let size = 0;
  let lines = 0;
  let closed = false;

  /** In this process, one read or write at a time, in the order asked. */
  const exclusive = oneAtATime();

  function countVote(tokenId: string, day: string, absolute?: number): void {
    const held = caps.get(tokenId);
    if (absolute !== undefined) {
      if (held === undefined || held.day <= day) caps.set(tokenId, { day, count: absolute });
    } else if (held === undefined || held.day < day) caps.set(tokenId, { day, count: 1 });
    else if (held.day === day) held.count += 1;
  }

  /**
   * Reads what was appended since the last read, or the whole file when it was replaced or
   * shortened; true when the votes held changed. Throws when the file cannot be read.
   */
  async function catchUp(): Promise<boolean> {
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (inode === undefined) return false;
      inode = undefined;
      offset = size = lines = 0;
      caps.clear();
      book.replaceAll([]);
      return true;
    }
    try {
      const info = await handle.stat({ bigint: true });
      const whole = info.ino !== inode || Number(info.size) < offset;
      const start = whole ? 0 : offset;
      const end = Number(info.size);
      if (!whole && end === size) return false;
      const buffer = Buffer.alloc(end - start);
      const { bytesRead } = end > start ? await handle.read(buffer, 0, end - start, start) : { bytesRead: 0 };
      const read = buffer.subarray(0, bytesRead);
      const last = read.lastIndexOf(0x0a);
      const parsed: Line[] = [];
      let refused = 0;
      let count = 0;
      if (last >= 0) {
        for (const text of read.subarray(0, last).toString('utf8').split('\n')) {
          if (text.trim() === '') continue;
          count += 1;
          const line = parseLine(text);
          if (line === undefined) refused += 1;
          else parsed.push(line);
        }
      }
      if (refused > 0)
        logger?.warn(
          { file: path, lines: refused },
          `reports file: ${refused} line(s) could not be read and are left out (torn by a crash, or edited by hand)`,
        );
      if (whole) {
        caps.clear();
        lines = 0;
      }
      const votes: ReportVote[] = [];
      for (const line of parsed) {
        if (line.kind === 'cap') countVote(line.tokenId, line.day, line.count);
        else {
          votes.push(line.vote);
          if (line.recordedAt !== undefined) countVote(line.vote.tokenId, utcDayOf(line.recordedAt));
        }
      }
      if (whole) book.replaceAll(votes);
      else for (const vote of votes) book.put(vote);
      inode = info.ino;
      offset = start + last + 1;
      size = start + bytesRead;
      lines += count;
      return whole || votes.length > 0;
    } finally {
      await handle.close();
    }
  }

  const changed = (): void => options.onChange?.();

  async function locked<T>(run: (lock: HeldLock) => Promise<T>): Promise<T> {
    let lock: HeldLock;
    try {
      lock = await takeLock(lockPath, options.lockLeaseMs, options.lockWaitMs);
    } catch (error) {
      throw new ReportStoreUnavailable(`the reports file cannot be locked: ${(error as Error).message}`);
    }
    try {
      try {
        if (await catchUp()) changed();
      } catch (error) {
        throw new ReportStoreUnavailable(`the reports file cannot be read (${path}): ${(error as Error).message}`);
      }
      return await run(lock);
    } finally {
      await lock.release();
    }
  }

  /** Writes the file anew (under the lock, caught up): the votes in force at `now` and today's counts. */
  async function compact(now: number): Promise<number> {
    const dropped = book.dropExpired(now);
    const today = utcDayOf(now);
    const chunks: string[] = [];
    let chunk: string[] = [];
    let count = 0;
    const add = (line: string): void => {
      chunk.push(line);
      count += 1;
      if (chunk.length === LINES_PER_CHUNK) {
        chunks.push(`${chunk.join('\n')}\n`);
        chunk = [];
      }
    };
    for (const vote of book.all()) add(voteLine(vote));
    for (const [tokenId, held] of caps)
      if (held.day === today) add(JSON.stringify({ cap: tokenId, day: held.day, count: held.count }));
    if (chunk.length > 0) chunks.push(`${chunk.join('\n')}\n`);
    await writeFileAtomically(path, chunks);
    const info = await stat(path, { bigint: true });
    inode = info.ino;
    offset = size = Number(info.size);
    lines = count;
    if (dropped > 0) changed();
    return dropped;
  }

  const hasExpired = (now: number): boolean => {
    for (const vote of book.all()) if (!voteInForce(vote, now, settings.retentionDays)) return true;
    return false;
  };

  function expire(now = clock()): Promise<number> {
    return exclusive(async () => {
      if (!hasExpired(now)) return 0;
      return locked(async () => {
        try {
          return await compact(now);
        } catch (error) {
          throw new ReportStoreUnavailable(`the reports file cannot be written (${path}): ${(error as Error).message}`);
        }
      });
    });
  }

  type Outcome = Awaited<ReturnType<ReportStore['record']>>;
  interface Pending {
    vote: ReportVote;
    now: number;
    resolve: (outcome: Outcome) => void;
    reject: (error: unknown) => void;
  }
  /** Votes waiting for the next write: every vote asked while a write runs goes in the one after it. */
  let pending: Pending[] = [];

  /**
   * Writes the votes waiting, all at once (group commit): one lock, one append and one fsync for
   * the batch, each vote checked against its token's cap in the order asked. A vote refused by
   * the cap changes nothing; when the append fails, every vote of the batch fails unrecorded.
   */
  async function flush(): Promise<void> {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    try {
      await locked(async () => {
        const outcomes: Outcome[] = [];
        const accepted: Array<{ vote: ReportVote; day: string; text: string }> = [];
        const counts = new Map<string, { day: string; count: number }>();
        for (const { vote, now } of batch) {
          const day = utcDayOf(now);
          const held = counts.get(vote.tokenId) ?? caps.get(vote.tokenId);
          const used = held?.day === day ? held.count : 0;
          if (used >= settings.maxPerTokenDay) {
            outcomes.push({ ok: false, reason: 'token_day_cap', retryAfterSeconds: secondsToUtcMidnight(now) });
            continue;
          }
          counts.set(vote.tokenId, { day, count: used + 1 });
          accepted.push({ vote, day, text: voteLine(vote, now) });
          outcomes.push({ ok: true, replaced: false });
        }
        if (accepted.length > 0) {
          // A torn last line (a crash mid-append) is ended first, so these votes start lines of their own.
          const text = `${size > offset ? '\n' : ''}${accepted.map((each) => each.text).join('\n')}\n`;
          try {
            const handle = await open(path, 'a', 0o644);
            try {
              await handle.writeFile(text, 'utf8');
              await handle.sync();
            } finally {
              await handle.close();
            }
            const info = await stat(path, { bigint: true });
            if (info.ino !== inode) {
              // The file was created by this append: its directory entry is made durable too.
              const directory = await open(dirname(path), 'r');
              await directory.sync().finally(() => directory.close());
            }
            inode = info.ino;
            offset = size = Number(info.size);
          } catch (error) {
            throw new ReportStoreUnavailable(
              `the reports file cannot be written (${path}): ${(error as Error).message}`,
            );
          }
          lines += accepted.length;
          let next = 0;
          for (const [at, outcome] of outcomes.entries()) {
            if (!outcome.ok) continue;
            const { vote, day } = accepted[next] as (typeof accepted)[number];
            next += 1;
            outcomes[at] = { ok: true, replaced: book.put(vote) };
            const held = caps.get(vote.tokenId);
            caps.set(vote.tokenId, { day, count: held?.day === day ? held.count + 1 : 1 });
          }
          changed();
          if (lines > 2 * book.size() + COMPACT_SLACK_LINES) {
            // The votes are kept already: a compaction that fails is tried again by the next write.
            await compact(batch[batch.length - 1]?.now ?? clock()).catch((error: unknown) =>
              logger?.warn({ err: (error as Error).message.slice(0, 200) }, 'reports file: compaction failed'),
            );
          }
        }
        for (const [at, item] of batch.entries()) item.resolve(outcomes[at] as Outcome);
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  function record(vote: ReportVote, now = clock()): ReturnType<ReportStore['record']> {
    return new Promise<Outcome>((resolve, reject) => {
      pending.push({ vote, now, resolve, reject });
      // The first vote of a batch asks for its write; the others ride along with it.
      if (pending.length === 1) void exclusive(flush);
    });
  }

  function replaceAll(votes: readonly ReportVote[], now = clock()): ReturnType<ReportStore['replaceAll']> {
    const kept = votes.filter((vote) => voteInForce(vote, now, settings.retentionDays));
    return exclusive(() =>
      locked(async () => {
        const before = book.size();
        book.replaceAll(kept);
        try {
          // One atomic write of the whole file: others read it whole (a new inode).
          await compact(now);
        } catch (error) {
          // The file is as it was: read it whole again, so memory holds what it holds.
          inode = undefined;
          await catchUp().catch(() => undefined);
          throw new ReportStoreUnavailable(`the reports file cannot be written (${path}): ${(error as Error).message}`);
        }
        changed();
        return { before, dropped: votes.length - kept.length };
      }),
    );
  }

  async function reloadIfChanged(): Promise<void> {
    const info = await stat(path, { bigint: true }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    });
    if (info?.ino === inode && Number(info?.size ?? 0) === size) return;
    if (await catchUp()) changed();
  }

  const reloader = createSerialReloader(
    () =>
      exclusive(reloadIfChanged).catch((error: unknown) =>
        logger?.error({ err: (error as Error).message.slice(0, 200) }, 'reports file: reading it again failed'),
      ),
    () => closed,
  );

  try {
    await catchUp();
  } catch (error) {
    throw new Error(`the reports file ${path} cannot be read: ${(error as Error).message}`, { cause: error });
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
  await expireLogged();

  let watching: FileWatch | undefined;
  let expiry: NodeJS.Timeout | undefined;
  if (options.watch !== false) {
    watching = watchFileWithPoll(path, () => reloader.reload(), POLL_MS);
    expiry = setInterval(() => void expireLogged(), EXPIRE_INTERVAL_MS);
    expiry.unref();
  }

  return {
    kind: 'file',
    location: path,
    evidence: (e164, now) => book.evidence(e164, now),
    reportedSpam: (now) => book.reportedSpam(now),
    version: (now) => book.version(now),
    votes: (e164) => book.votes(e164),
    allVotes: () => [...book.all()],
    record,
    replaceAll,
    expire,
    refresh: () => reloader.reload(),
    async close() {
      closed = true;
      watching?.close();
      if (expiry !== undefined) clearInterval(expiry);
      await reloader.running();
      // Every read or write asked before the close has settled.
      await exclusive(async () => undefined);
    },
  };
}
