// Single-flight across instances: concurrent cold lookups of one number on several instances
// still cost each upstream one request. Within an instance callers share one flight (the
// in-process coalescer); that flight then takes a short Redis lock for its key
// (`SET lock:<key> <token> NX PX`). The holder fetches (and the engine writes the shared cache);
// the others poll the shared cache through `readSettled` until the result appears, the lock
// frees (the holder failed: then one of them takes the lock and fetches), or their callers give
// up. Without Redis (down, slow, degraded) a flight simply fetches: in-process coalescing only.
import { randomBytes } from 'node:crypto';
import { createInProcessCoalescer, type CoalesceOptions, type InProcessCoalescer } from '../../domain/lookup/coalescer.js';
import type { RedisClient } from './redis-client.js';
import { sleepUnlessAborted } from '../abortable-sleep.js';

export interface RedisFetchCoalescerOptions {
  client: RedisClient;
  /**
   * Lock lifetime: longer than one fetch may take (SOURCE_TIMEOUT_MS plus a margin), so it only
   * expires by itself when its holder died mid-fetch.
   */
  lockTtlMs: number;
  /** Pause between two looks at the shared cache while another instance fetches (default 25 ms). */
  pollIntervalMs?: number;
}

/** Compare-and-delete: a holder whose lock expired never deletes the next holder's lock. */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
const RELEASE_COMMAND = 'phonerepReleaseLock';

type WithRelease = RedisClient['redis'] & { [RELEASE_COMMAND](key: string, token: string): Promise<unknown> };

type LockAttempt = 'acquired' | 'held' | 'unavailable';

export function createRedisFetchCoalescer(options: RedisFetchCoalescerOptions): InProcessCoalescer {
  const { client, lockTtlMs } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 25;
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
    const redis = client.redis;
    if (!(RELEASE_COMMAND in redis)) redis.defineCommand(RELEASE_COMMAND, { numberOfKeys: 1, lua: RELEASE_LUA });
    // Not awaited: the answer does not wait; a lost release only makes others wait for the TTL.
    void client.attempt(async () => void (await (redis as WithRelease)[RELEASE_COMMAND](lockKey, token)), () => undefined);
  }

  async function readSettledSafely<T>(readSettled: (() => Promise<T | undefined>) | undefined): Promise<T | undefined> {
    if (readSettled === undefined) return undefined;
    try {
      return await readSettled();
    } catch {
      return undefined;
    }
  }

  async function runShared<T>(key: string, work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal, readSettled: CoalesceOptions<T>['readSettled']): Promise<T> {
    const lockKey = `lock:${key}`;
    sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
    const token = `${instanceId}:${sequence}`;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const attempt = await tryLock(lockKey, token);
      if (attempt === 'unavailable') return work(signal);
      if (attempt === 'acquired') {
        try {
          // The previous holder may have finished between our cache miss and our lock.
          const settled = await readSettledSafely(readSettled);
          if (settled !== undefined) return settled;
          return await work(signal);
        } finally {
          release(lockKey, token);
        }
      }
      if (!(await sleepUnlessAborted(pollIntervalMs / 2 + Math.random() * pollIntervalMs, signal))) throw signal.reason;
      const settled = await readSettledSafely(readSettled);
      if (settled !== undefined) return settled;
    }
  }

  return {
    run<T>(key: string, work: (signal: AbortSignal) => Promise<T>, runOptions: CoalesceOptions<T> = {}): Promise<T> {
      const localOptions: CoalesceOptions<T> = runOptions.signal === undefined ? {} : { signal: runOptions.signal };
      return local.run(key, (shared) => runShared(key, work, shared, runOptions.readSettled), localOptions);
    },
    inFlightCount: () => local.inFlightCount(),
  };
}

