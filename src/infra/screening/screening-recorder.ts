// Keeps the screening record off the phone routes' path (docs/console.md): a screened call is
// noted as it is answered (one object in an array, no I/O, nothing worked out), and once a
// second, or sooner when many are waiting, the noted calls are worked out (verdict, what
// decided, the caller-ID line) and added to the record in one batch (one Redis transaction).
// Reading the record first flushes this process's noted calls, so an instance's own answers
// are always counted when it is asked.
import type { FeedFetch, PendingCall, ScreenedCall, ScreeningRecord } from '../../domain/ports/screening-record.js';

/** Noted calls past which a flush is started at once instead of waiting for the timer. */
export const FLUSH_AT_PENDING = 2000;
export const DEFAULT_FLUSH_INTERVAL_MS = 1000;

export interface ScreeningRecorder {
  readonly record: ScreeningRecord;
  /** Whether calls are logged (CALL_LOG_RETENTION_DAYS > 0); counted either way. */
  readonly logsCalls: boolean;
  /** Notes a screened call; never throws, never waits. */
  noteCall(call: PendingCall): void;
  /** Notes a report received. */
  noteReport(atMs: number): void;
  /** Notes a feed client's fetch (written at once, off the request's path; a flush waits for it). */
  noteFeedFetch(fetch: FeedFetch): void;
  /** Adds what was noted to the record; resolves when it is there. Never rejects. */
  flush(): Promise<void>;
  start(): void;
  /** Stops the timer and flushes what is left. */
  stop(): Promise<void>;
}

export interface ScreeningRecorderOptions {
  record: ScreeningRecord;
  logsCalls: boolean;
  intervalMs?: number;
  /** Told of a call that could not be worked out (a bug): it is left out. Never given the number. */
  onError?: (error: unknown) => void;
}

export function createScreeningRecorder(options: ScreeningRecorderOptions): ScreeningRecorder {
  const { record, logsCalls } = options;
  let pendingCalls: PendingCall[] = [];
  let pendingReports: number[] = [];
  let chain: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let soon = false;

  function flush(): Promise<void> {
    chain = chain.then(async () => {
      if (pendingCalls.length === 0 && pendingReports.length === 0) return;
      const noted = pendingCalls;
      const reports = pendingReports;
      pendingCalls = [];
      pendingReports = [];
      const calls: ScreenedCall[] = [];
      for (const call of noted) {
        try {
          const { verdict, decidedBy } = call.decision();
          calls.push({
            atMs: call.atMs,
            number: call.number,
            verdict,
            decidedBy,
            cid: logsCalls ? call.cidLine() : '',
          });
        } catch (error) {
          options.onError?.(error);
        }
      }
      await record.add({ calls, reports });
    });
    chain = chain.catch((error: unknown) => options.onError?.(error));
    return chain;
  }

  return {
    record,
    logsCalls,
    noteCall(call) {
      pendingCalls.push(call);
      if (pendingCalls.length >= FLUSH_AT_PENDING && !soon) {
        soon = true;
        setImmediate(() => {
          soon = false;
          void flush();
        });
      }
    },
    noteReport(atMs) {
      pendingReports.push(atMs);
    },
    noteFeedFetch(fetch) {
      // In the flushes' chain: a flush (a read) waits for the fetches noted before it.
      chain = chain.then(() => record.recordFeedFetch(fetch)).catch((error: unknown) => options.onError?.(error));
    },
    flush,
    start() {
      if (timer !== undefined) return;
      timer = setInterval(() => void flush(), options.intervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}
