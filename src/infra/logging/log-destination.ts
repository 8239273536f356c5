// Where the service's log lines go: stdout, written asynchronously by pino's destination
// (sonic-boom, https://github.com/pinojs/sonic-boom). Into a file or a pipe (production,
// containers) lines are batched: one write per LOG_BATCH_BYTES or per LOG_FLUSH_INTERVAL_MS,
// whichever comes first, instead of one per request (the write was a tenth of a cached answer's
// CPU). On a terminal every line goes out at once. pino flushes the destination synchronously
// at exit.
//
// The batch is held as bytes (sonic-boom's documented `contentMode: 'buffer'`): each line is
// encoded once as it comes. Held as text, sonic-boom appends each line to one string and
// measures that string's UTF-8 length again for every line, so a batch of 8 KiB cost about a
// twentieth of a cached answer's CPU in measuring and flattening it (perf profile of the built
// server under wrk, 2026-11-26: v8::String::Utf8Length called from sonic-boom's write).
// The cast below is past sonic-boom's types only (4.2.1 declares `write(string)`; its buffer mode
// documents bytes), not past any runtime internals: log-destination.test.ts, which writes
// through it to a real file, passes on Node 24.21 and 26.10.
import { destination as pinoDestination } from 'pino';

/** Log lines are written in batches of about this many bytes (when stdout is not a terminal). */
export const LOG_BATCH_BYTES = 8192;
/** A batch that has not filled is written after at most this long. */
export const LOG_FLUSH_INTERVAL_MS = 1000;

/** What pino writes its lines to, and what the server flushes once it listens. */
export interface LogDestination {
  write(line: string): void;
  /**
   * Writes what is batched now, without waiting for the batch to fill; `done` is called once
   * everything written so far has reached the file.
   */
  flush(done?: (error?: Error) => void): void;
}

export interface LogDestinationOptions {
  /** The file descriptor written to (default 1, stdout). */
  fd?: number;
  /** Whether it is a terminal: every line goes out at once (default: whether stdout is one). */
  isTerminal?: boolean;
  /** How long a batch that has not filled waits (default LOG_FLUSH_INTERVAL_MS). */
  flushIntervalMs?: number;
}

export function logDestination(options: LogDestinationOptions = {}): LogDestination {
  const fd = options.fd ?? 1;
  if (options.isTerminal ?? process.stdout.isTTY === true) return pinoDestination({ dest: fd, sync: false });
  const batched = pinoDestination({
    dest: fd,
    sync: false,
    minLength: LOG_BATCH_BYTES,
    periodicFlush: options.flushIntervalMs ?? LOG_FLUSH_INTERVAL_MS,
    contentMode: 'buffer',
  });
  // In buffer mode sonic-boom takes bytes; its type declaration only knows strings.
  const writeBytes = batched.write.bind(batched) as unknown as (bytes: Buffer) => boolean;
  return {
    write: (line) => {
      writeBytes(Buffer.from(line, 'utf8'));
    },
    flush: (done) => batched.flush(done),
  };
}
