// Following a change stream in Redis (the lists' and the reports' stores do the same): a blocking
// XREAD on a connection of its own, duplicated from the shared client's options, as bullmq's
// QueueEvents does. A blocked read holds its connection until a change comes, so on the shared one
// it would stall every command queued behind it and outlast the shared command deadline.
//
// The changes are handed to the store one by one, in stream order; a change the store cannot take
// (a gap in the versions, a `reload`, a lineage replaced) makes it read everything again, and so
// does any failure of the read (a lost connection fails the blocked XREAD at once, no retry of the
// command). A failure is logged once, with a line when Redis answers again.
import type { Redis } from 'ioredis';
import { sleepUnlessAborted } from '../abortable-sleep.js';

/** How long one XREAD waits for a change before it is sent again. */
const BLOCK_MS = 5_000;
/** Pause before trying again after Redis failed a read. */
const RETRY_MS = 250;

export interface ChangeStreamLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

export interface ChangeStreamFollowerOptions {
  /** The shared client's connection: the reader is duplicated from it. */
  redis: Redis;
  /** The reader's CLIENT SETNAME, e.g. `phonerep-lists-reader`. */
  connectionName: string;
  /** The stream's key (the client's key prefix applies). */
  stream: string;
  /** What is followed, the word of the log lines: `lists`, `reports`. */
  subject: string;
  logger?: ChangeStreamLogger | undefined;
  /** Read everything before the first XREAD (Redis was not reachable at start). */
  readFirst: boolean;
  /** The id of the last change the store holds: the XREAD starts after it. */
  lastId(): string;
  /** Reads everything again (and sets what lastId() returns). */
  readAll(): Promise<void>;
  /** Applies one change (and advances lastId()); false: it cannot, everything is read again. */
  apply(id: string, fields: readonly string[]): boolean;
  /** Called once after a read that applied at least one change. */
  changed(): void;
  /** The store is closed: the loop ends. */
  closed(): boolean;
  /** Aborted on close: ends the pause between tries. */
  signal: AbortSignal;
}

export interface ChangeStreamFollower {
  /** Drops the reader's connection and waits for the loop to end (after the store marked itself closed). */
  stop(): Promise<void>;
}

/** Orders two stream ids (`<ms>-<seq>`). */
export function compareStreamIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number);
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number);
  return aMs === bMs ? aSeq - bSeq : aMs - bMs;
}

export function followChangeStream(options: ChangeStreamFollowerOptions): ChangeStreamFollower {
  const { subject, logger } = options;
  // No command timeout (a blocked XREAD is silent by design); ioredis' blockingTimeout bounds it
  // instead, at BLOCK_MS and a grace, so a half-dead socket is still found out.
  const reader = options.redis.duplicate({
    commandTimeout: undefined,
    blockingTimeout: BLOCK_MS,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    connectionName: options.connectionName,
    // Every RETRY_MS, not the shared client's backoff (up to 2 s): once the shared client reads
    // everything again, the changes that follow reach this instance only through this reader, so
    // a reader still waiting out its backoff would leave the other instances' changes unseen
    // that long (found by the failover test: a report acknowledged on one instance was not
    // yet counted on the other). One connection trying four times a second costs nothing.
    retryStrategy: () => RETRY_MS,
  });
  reader.on('error', () => undefined); // the shared client logs Redis' outages
  const following = (async () => {
    let needFull = options.readFirst;
    let failing = false;
    while (!options.closed()) {
      try {
        if (needFull) {
          await options.readAll();
          needFull = false;
          if (failing) logger?.info({ [subject]: 'read' }, `${subject}: Redis answers again; the ${subject} are read`);
          failing = false;
        }
        const reply = await reader.xread('BLOCK', BLOCK_MS, 'STREAMS', options.stream, options.lastId());
        let applied = false;
        for (const [, entries] of reply ?? []) {
          for (const [id, fields] of entries) {
            if (compareStreamIds(id, options.lastId()) <= 0) continue; // a full read meanwhile went past it
            if (!options.apply(id, fields)) {
              needFull = true;
              break;
            }
            applied = true;
          }
          if (needFull) break;
        }
        if (applied) options.changed();
      } catch (error) {
        if (options.closed()) return;
        if (!failing)
          logger?.warn(
            { err: (error instanceof Error ? error.message : String(error)).slice(0, 200) },
            `${subject}: following the changes in Redis failed; everything is read again once it answers`,
          );
        failing = true;
        needFull = true;
        await sleepUnlessAborted(RETRY_MS, options.signal);
      }
    }
  })();
  return {
    async stop() {
      reader.disconnect();
      await following;
    },
  };
}
