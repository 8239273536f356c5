// Single-flight across instances: concurrent cold lookups of one number on several instances
// still cost each upstream one request. Within an instance callers share one flight (the
// in-process coalescer); that flight then takes a short Redis lock for its key
// (`SET lock:<key> <token> NX PX`, the key named in redis/keys.ts), a short lease
// (DEFAULT_LOCK_LEASE_MS) that the holder renews every third of a lease while it fetches. A
// holder that dies stops renewing, so the others are stalled for at most one lease before one of
// them takes the lock. The holder fetches (and the
// engine writes the shared cache); the others poll the shared cache through `readSettled` until the result appears, the lock
// frees (the holder failed: then one of them takes the lock and fetches), or their callers give
// up. Without Redis (down, slow, degraded) a flight simply fetches: in-process coalescing only.
//
// Callers that stop waiting only detach (coalescer.ts): a flight runs on whoever waits, so its
// wait for another instance is bounded here (`maxWaitMs`), not by its callers' patience.
import { randomBytes } from 'node:crypto';
import { createInProcessCoalescer, type InProcessCoalescer } from '../../domain/lookup/coalescer.js';
import type { CoalesceOptions } from '../../domain/ports/coalescer.js';
import type { RedisClient } from './redis-client.js';
import { LOCK_KEYS } from './keys.js';
import { anySignal } from '../../domain/abort-signals.js';
import { sleepUnlessAborted } from '../abortable-sleep.js';

export interface RedisFetchCoalescerOptions {
  client: RedisClient;
  /**
   * Lease of the lock: the holder renews it every third of a lease while it works, so it only
   * expires when its holder died (or lost Redis) mid-fetch. Default DEFAULT_LOCK_LEASE_MS.
   */
  lockTtlMs?: number;
  /** Pause between two looks at the shared cache while another instance fetches (default 25 ms). */
  pollIntervalMs?: number;
  /**
   * How long a flight waits for other instances' fetches of its key before it gives up (the
   * run rejects with a TimeoutError). Pass more than one fetch and one lease
   * (SOURCE_TIMEOUT_MS + 2 leases). Default DEFAULT_MAX_WAIT_MS.
   */
  maxWaitMs?: number;
}

/** Longer than a fetch at the largest usual source deadline plus a lease or two. */
export const DEFAULT_MAX_WAIT_MS = 10_000;

/** How long a dead holder can stall the others: about a second. */
export const DEFAULT_LOCK_LEASE_MS = 1000;

type LockAttempt = 'acquired' | 'held' | 'unavailable';

export function createRedisFetchCoalescer(options: RedisFetchCoalescerOptions): InProcessCoalescer {
  const { client } = options;
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_LEASE_MS;
  const pollIntervalMs = options.pollIntervalMs ?? 25;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const local = createInProcessCoalescer();
  const instanceId = randomBytes(6).toString('base64url');
  let sequence = 0;

  function tryLock(lockKey: string, token: string): Promise<LockAttempt> {
    return client.attempt<LockAttempt>(
      async (redis) => ((await redis.set(lockKey, token, 'PX', lockTtlMs, 'NX')) === 'OK' ? 'acquired' : 'held'),
      () => 'unavailable',
    );
  }

  function release(lockKey: string, token: string): void {
    // Not awaited: the answer does not wait; a lost release only makes others wait for the TTL.
    void client.attempt(
      async (redis) => void (await redis.phonerepReleaseLock(lockKey, token)),
      () => undefined,
    );
  }

  /** Renews the lease every third of it until stopped; a failed renewal only risks a second fetch elsewhere. */
  function keepRenewing(lockKey: string, token: string): () => void {
    const timer = setInterval(
      () => {
        void client.attempt(
          async (redis) => void (await redis.phonerepRenewLock(lockKey, token, lockTtlMs)),
          () => undefined,
        );
      },
      Math.max(1, Math.floor(lockTtlMs / 3)),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  async function readSettledSafely<T>(readSettled: (() => Promise<T | undefined>) | undefined): Promise<T | undefined> {
    if (readSettled === undefined) return undefined;
    try {
      return await readSettled();
    } catch {
      return undefined;
    }
  }

  async function runShared<T>(
    key: string,
    work: (signal: AbortSignal) => Promise<T>,
    runSignal: AbortSignal,
    readSettled: CoalesceOptions<T>['readSettled'],
  ): Promise<T> {
    const lockKey = LOCK_KEYS.fetch(key);
    sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
    const token = `${instanceId}:${sequence}`;
    // The work gets the run's signal alone; the waiting for others is also cut by its bound.
    // Released when this run is over: the run's signal lives as long as the engine (abort-signals.ts).
    const { signal, release: releaseSignal } = anySignal([runSignal, AbortSignal.timeout(maxWaitMs)]);
    try {
      for (;;) {
        if (signal.aborted) throw signal.reason;
        // The lock and the look at the shared cache go out together, the lock first on the same
        // connection: when the lock is ours, the previous holder's cache write (made before its
        // release) is already visible to the read that follows.
        const [attempt, settled] = await Promise.all([tryLock(lockKey, token), readSettledSafely(readSettled)]);
        if (settled !== undefined) {
          if (attempt === 'acquired') release(lockKey, token);
          return settled;
        }
        if (attempt === 'unavailable') return work(runSignal);
        if (attempt === 'acquired') {
          const stopRenewing = keepRenewing(lockKey, token);
          try {
            return await work(runSignal);
          } finally {
            stopRenewing();
            release(lockKey, token);
          }
        }
        if (!(await sleepUnlessAborted(pollIntervalMs / 2 + Math.random() * pollIntervalMs, signal)))
          throw signal.reason;
      }
    } finally {
      releaseSignal();
    }
  }

  return {
    run<T>(key: string, work: (signal: AbortSignal) => Promise<T>, runOptions: CoalesceOptions<T> = {}): Promise<T> {
      const localOptions: CoalesceOptions<T> = {
        ...(runOptions.signal === undefined ? {} : { signal: runOptions.signal }),
        ...(runOptions.runSignal === undefined ? {} : { runSignal: runOptions.runSignal }),
      };
      return local.run(key, (runSignal) => runShared(key, work, runSignal, runOptions.readSettled), localOptions);
    },
    inFlightCount: () => local.inFlightCount(),
  };
}
