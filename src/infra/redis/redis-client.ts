// The one Redis connection an instance shares between its cache, rate limiter, coalescer,
// politeness store and operator's lists, and the rule they follow: for lookups Redis is an
// accelerator, never a dependency. Every use goes through `attempt(op, fallback)`, which answers
// from the fallback at once when Redis is not connected or was just seen failing, and after any
// error or timeout of `op`. The lists are Redis' data of record: their fallback is a refusal
// (redis-list-store.ts), never a change kept only in memory.
//
// Timeouts are short on purpose (connect 500 ms, command 250 ms) and the offline queue is off,
// so a dead Redis costs nothing (commands fail immediately while disconnected) and a slow one
// costs at most one command timeout per request. After a failure the client stays "degraded"
// and skips Redis until a background PING succeeds, so a stalled Redis is not paid for again by
// every following request. ioredis reconnects by itself, with backoff, forever.
//
// A Redis that answers, but slowly, is degraded too: SLOW_STRIKES replies in a row that waited
// on Redis longer than half the command timeout put the instance on its memory fallbacks for at
// least SLOW_DEGRADED_MS, and it returns only once a PING answers fast again. Otherwise a Redis
// at 200 ms per round trip (under the timeout, never an error) would add every round trip of a
// cold lookup to its time.
//
// What a reply waited on Redis is the time this process spent idle (its event loop waiting for
// I/O) while the command was out, not the reply's whole time: while the process is busy, a
// reply already in its socket waits for the loop to come round, and a burst of lookups keeps
// the loop busy for hundreds of ms in turns of a few tens each. The longest turn (the event-loop
// delay, which this once took off) misses a reply that waited through the end of one turn and
// most of the next; idle time counts none of it. A reply is used whatever its time, once it
// beats the command timeout.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Redis, type RedisOptions } from 'ioredis';
import { REDIS_SCRIPTS, type ScriptedRedis } from './scripts.js';
import { redisOptionsOf, refusalOf, type RedisConnectionLike } from './redis-connection.js';
import { sleepUnlessAborted } from '../abortable-sleep.js';

export type RedisHealth = 'ok' | 'degraded';

export interface RedisClientLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisClientOptions {
  /** Prepended to every key (REDIS_KEY_PREFIX), so several deployments can share one Redis. */
  keyPrefix: string;
  logger?: RedisClientLogger;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Interval of the background PING that ends a degraded period. */
  probeIntervalMs?: number;
}

export interface RedisClient {
  /** The ioredis connection (key prefix applied). Use it through `attempt`. */
  readonly redis: ScriptedRedis;
  readonly keyPrefix: string;
  /** Connected, and no failure seen since the last successful probe. */
  isReady(): boolean;
  /** For readiness: `degraded` while Redis is down, slow or reconnecting. */
  health(): RedisHealth;
  /**
   * Runs `op` against Redis, or `fallback` when Redis is not usable or `op` fails. Never
   * rejects because of Redis (only if `fallback` itself throws).
   */
  attempt<T>(op: (redis: ScriptedRedis) => Promise<T>, fallback: () => T | Promise<T>): Promise<T>;
  /** Times this client went over to its fallbacks because Redis was slow (not down). */
  slowFallbacks(): number;
  /** Reports a failure seen outside `attempt` (marks the client degraded). */
  reportFailure(error: unknown): void;
  /**
   * Waits up to `waitMs` for the first connection: `ready`, `refused` (Redis or a sentinel refused
   * the credentials: the error says how) or `unreachable` (not yet: the fallbacks apply meanwhile).
   */
  firstConnection(
    waitMs: number,
  ): Promise<
    { state: 'ready' | 'unreachable' } | { state: 'refused'; refused: 'credentials' | 'certificate'; error: Error }
  >;
  quit(): Promise<void>;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 500;
export const DEFAULT_COMMAND_TIMEOUT_MS = 250;
const DEFAULT_PROBE_INTERVAL_MS = 500;
/** A probe timing out this many times in a row means a half-dead socket: reconnect. */
const PROBE_FAILURES_BEFORE_RECONNECT = 3;
const MAX_RECONNECT_DELAY_MS = 2000;
/** Slow replies in a row (each waiting on Redis longer than half the command timeout) that make Redis count as degraded. */
export const SLOW_STRIKES = 3;
/** Least time on the fallbacks after Redis was found slow, so a slow Redis is not re-tried on every lookup. */
export const SLOW_DEGRADED_MS = 5_000;

/** Marks when a command went out, for `redisWaitMs`. */
function commandSent(): EventLoopUtilization {
  return performance.eventLoopUtilization();
}

/**
 * The most a reply can have waited on Redis since `sentAt`: the time the event loop spent idle
 * meanwhile. While the loop is busy it does not wait in its I/O poll, and a reply that arrived
 * meanwhile is read as soon as it polls again, so busy time is never Redis's.
 */
function redisWaitMs(sentAt: EventLoopUtilization): number {
  return performance.eventLoopUtilization(sentAt).idle;
}

/** Reconnect delay: exponential from 50 ms to 2 s, with jitter so instances do not reconnect in step. */
export function reconnectDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RECONNECT_DELAY_MS, 50 * 2 ** Math.min(attempt, 10));
  return Math.round(base / 2 + random() * (base / 2));
}

/**
 * Creates the client and starts connecting (in the background: the call itself never waits), to
 * the connection described (redis-connection.ts: a URL, or the sentinels, with credentials and TLS).
 */
export function createRedisClient(connection: RedisConnectionLike, options: RedisClientOptions): RedisClient {
  const { logger } = options;
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
  const base: RedisOptions = {
    keyPrefix: options.keyPrefix,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    // Our own deadline (in `attempt`) is the one that counts; this one only frees commands
    // stuck on a stalled socket.
    commandTimeout: commandTimeoutMs * 4,
    // Commands issued while disconnected fail at once instead of waiting in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => reconnectDelayMs(times),
    // Auto-pipelining breaks with commandTimeout in ioredis 5 (an uncaught TypeError when a
    // pipelined batch times out), so it stays off.
    enableAutoPipelining: false,
    lazyConnect: false,
    // Every Lua script, defined once here; callers use them as commands.
    scripts: REDIS_SCRIPTS,
  };
  const { url, options: redisOptions } = redisOptionsOf(connection, base);
  // ioredis adds the `scripts` as methods at construction but cannot type them.
  const redis = (url === undefined ? new Redis(redisOptions) : new Redis(url, redisOptions)) as ScriptedRedis;
  let degraded = false;
  let closed = false;
  let probeTimer: NodeJS.Timeout | undefined;
  let probeFailures = 0;
  let lastErrorLogMs = 0;
  const slowReplyMs = commandTimeoutMs / 2;
  let slowStrikes = 0;
  let slowFallbacks = 0;
  /** While Redis was found slow: no return to it before this time (epoch ms). */
  let degradedUntilMs = 0;
  /** The last refusal of the credentials or of the certificate (redis-connection.ts), since Redis was last ready. */
  let refusal: { refused: 'credentials' | 'certificate'; error: Error } | undefined;
  const connectionWaiters = new Set<() => void>();
  const wakeWaiters = (): void => {
    for (const wake of connectionWaiters) wake();
  };

  function logState(message: string, error?: unknown): void {
    if (!logger) return;
    // The error text of ioredis names host and port, never data; still keep it short.
    const detail = error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 200) : undefined;
    if (detail === undefined) logger.info({ redis: 'ok' }, message);
    else logger.warn({ redis: 'degraded', err: detail }, message);
  }

  redis.on('error', (error: unknown) => {
    const refused = refusalOf(error);
    if (refused !== undefined) {
      refusal = { refused, error: error instanceof Error ? error : new Error(String(error)) };
      wakeWaiters();
    }
    // ioredis emits an error per failed reconnect attempt; one line per 10 s is enough.
    const nowMs = Date.now();
    if (nowMs - lastErrorLogMs > 10_000) {
      lastErrorLogMs = nowMs;
      logState('redis connection error; using in-process fallbacks', error);
    }
  });
  redis.on('ready', () => {
    refusal = undefined;
    wakeWaiters();
    // A reconnection says nothing of speed: a Redis found slow keeps its minimum period.
    if (Date.now() < degradedUntilMs) return;
    if (degraded) logState('redis reachable again');
    degraded = false;
    probeFailures = 0;
  });
  redis.on('reconnecting', wakeWaiters);
  redis.on('end', () => {
    wakeWaiters();
    // ioredis ends a connection for good when its Sentinel failover detector disconnects it
    // during a reconnection (a +switch-master while an attempt is out): its own retries stop
    // there, so the instance would stay on its fallbacks, refusing every write, until restarted.
    // Connect again (the failover test, test/system/redis-failover.test.ts, meets this under load).
    // Only through Sentinel: elsewhere a connection ends only when it is told to.
    if (!closed && redisOptions.sentinels !== undefined)
      setTimeout(() => {
        if (!closed && redis.status === 'end') redis.connect().catch(() => undefined);
      }, 100).unref();
  });
  redis.on('close', () => {
    wakeWaiters();
    if (!closed) markDegraded();
  });

  function markDegraded(): void {
    degraded = true;
    if (probeTimer !== undefined || closed) return;
    probeTimer = setInterval(probe, probeIntervalMs);
    probeTimer.unref();
  }

  function probe(): void {
    if (closed) return stopProbe();
    if (redis.status !== 'ready') return; // reconnection is ioredis' job; 'ready' ends the degraded period
    const sentAt = commandSent();
    withDeadline(redis.ping(), commandTimeoutMs).then(
      () => {
        // A slow Redis stays degraded for its minimum period and until it answers fast again.
        if (Date.now() < degradedUntilMs || redisWaitMs(sentAt) > slowReplyMs) return;
        slowStrikes = 0;
        if (degraded) logState('redis answering again');
        degraded = false;
        probeFailures = 0;
        stopProbe();
      },
      () => {
        probeFailures += 1;
        if (probeFailures >= PROBE_FAILURES_BEFORE_RECONNECT) {
          probeFailures = 0;
          redis.disconnect(true);
        }
      },
    );
  }

  function stopProbe(): void {
    if (probeTimer !== undefined) clearInterval(probeTimer);
    probeTimer = undefined;
  }

  function noteReplyWait(waitedMs: number): void {
    if (waitedMs <= slowReplyMs) {
      slowStrikes = 0;
      return;
    }
    slowStrikes += 1;
    if (slowStrikes < SLOW_STRIKES || closed || degraded) return;
    slowFallbacks += 1;
    degradedUntilMs = Date.now() + SLOW_DEGRADED_MS;
    if (logger)
      logger.warn(
        { redis: 'degraded', waitedMs: Math.round(waitedMs) },
        'redis replies near its timeout; using in-process fallbacks for a while',
      );
    markDegraded();
  }

  const isReady = (): boolean => !closed && !degraded && redis.status === 'ready';

  return {
    redis,
    keyPrefix: options.keyPrefix,
    isReady,
    health: () => (isReady() ? 'ok' : 'degraded'),
    async attempt(op, fallback) {
      if (!isReady()) return fallback();
      const sentAt = commandSent();
      try {
        const result = await withDeadline(op(redis), commandTimeoutMs);
        noteReplyWait(redisWaitMs(sentAt));
        return result;
      } catch (error) {
        if (!closed && !degraded) {
          logState('redis command failed; using in-process fallbacks until it answers', error);
          markDegraded();
        }
        return fallback();
      }
    },
    slowFallbacks: () => slowFallbacks,
    async firstConnection(waitMs) {
      let timer: NodeJS.Timeout | undefined;
      let wake: (() => void) | undefined;
      try {
        const deadline = Date.now() + waitMs;
        // The first attempt is over once the connection leaves these (ready, or reconnecting).
        const attempting = (): boolean => ['wait', 'connecting', 'connect'].includes(redis.status);
        while (attempting() && refusal === undefined && !closed && Date.now() < deadline) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            connectionWaiters.add(resolve);
            timer = setTimeout(resolve, deadline - Date.now());
          });
          clearTimeout(timer);
          if (wake !== undefined) connectionWaiters.delete(wake);
        }
      } finally {
        clearTimeout(timer);
        if (wake !== undefined) connectionWaiters.delete(wake);
      }
      if (redis.status === 'ready') return { state: 'ready' };
      if (refusal !== undefined) return { state: 'refused', ...refusal };
      return { state: 'unreachable' };
    },
    reportFailure(error) {
      if (closed || degraded) return;
      logState('redis command failed; using in-process fallbacks until it answers', error);
      markDegraded();
    },
    async quit() {
      if (closed) return;
      closed = true;
      stopProbe();
      if (redis.status !== 'ready') {
        redis.disconnect();
        return;
      }
      // QUIT lets replies in flight arrive; a stalled Redis gets a hard disconnect instead.
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, commandTimeoutMs * 2);
      });
      await Promise.race([
        redis.quit().then(
          () => undefined,
          () => undefined,
        ),
        stalled,
      ]);
      clearTimeout(timer);
      redis.disconnect();
    },
  };
}

export class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}

/**
 * Rejects when `promise` has not settled `timeoutMs` after the call. The verdict waits one more
 * turn of the event loop (setImmediate runs after the I/O poll): when the process itself was
 * busy past the deadline, a reply already sitting in the socket is read first instead of being
 * counted as a Redis timeout. Only a reply still missing then is late.
 */
export function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new RedisTimeoutError(`no reply within ${timeoutMs} ms`));
      });
    }, timeoutMs);
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Waits up to `waitMs` while the connection's first attempt is being made (a store opening on
 * Redis); a refused connection does not wait the deadline out. Whether Redis is ready then.
 */
export async function redisReadyWithin(redis: Redis, waitMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (['wait', 'connecting', 'connect'].includes(redis.status) && Date.now() < deadline)
    await sleepUnlessAborted(20, signal);
  return redis.status === 'ready';
}
