// Rate limiting as an exact sliding log: a client gets at most `limit` requests through in
// ANY span of `windowMs` (a GCRA or a fixed window would let up to twice that through across
// a boundary). Only accepted requests are logged, so a client that keeps hammering while
// refused regains its quota as the window slides.

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current window after this one. */
  remaining: number;
  /** Milliseconds until the oldest counted request leaves the window (a slot frees). */
  resetMs: number;
}

export interface RateLimitStore {
  /** Records the request if allowed; `key` is already hashed. Never rejects. */
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitDecision>;
}

interface ClientLog {
  /** Accept times, oldest first; at most `limit` long. */
  times: number[];
  lastWindowMs: number;
}

/** Client logs examined for expiry per request: bounded work, whatever the number of clients. */
export const SWEEP_STEP = 4;

export interface MemoryRateLimitStore extends RateLimitStore {
  size(): number;
  hitSync(key: string, limit: number, windowMs: number): RateLimitDecision;
  /**
   * Makes the client's log hold at least `count` accepts in the window, adding the missing ones
   * at `atMs`: what a shared store last said of this client, carried into this instance while
   * the shared store is away. Placing them at `atMs` (not earlier) is the conservative choice:
   * they leave the window no sooner than the real ones did.
   */
  seed(key: string, count: number, atMs: number, windowMs: number): void;
  /** True while the client has accepts in its window here. */
  hasLiveLog(key: string): boolean;
  /** Client logs examined by the clean-up so far (tests count work with it). */
  sweepWork(): number;
}

/**
 * Per-process store. Idle logs are removed by an incremental sweep: each request examines the
 * next SWEEP_STEP logs in insertion order (a cursor that wraps around), so the clean-up costs
 * O(1) per request at any number of clients, and a log idle for a window is gone within one
 * pass of the cursor (size / SWEEP_STEP requests).
 */
export function createMemoryRateLimitStore(options: { now?: () => number } = {}): MemoryRateLimitStore {
  const now = options.now ?? Date.now;
  const logs = new Map<string, ClientLog>();
  // A Map iterator survives deletions and sees later insertions, so it can be kept between requests.
  let cursor = logs.entries();
  let examined = 0;

  function isIdle(log: ClientLog, at: number): boolean {
    const newest = log.times[log.times.length - 1];
    return newest === undefined || newest <= at - log.lastWindowMs;
  }

  function sweepStep(at: number): void {
    for (let step = 0; step < SWEEP_STEP && logs.size > 0; step += 1) {
      let next = cursor.next();
      if (next.done === true) {
        cursor = logs.entries();
        next = cursor.next();
        if (next.done === true) return;
      }
      examined += 1;
      const [key, log] = next.value;
      if (isIdle(log, at)) logs.delete(key);
    }
  }

  function liveLog(key: string, windowMs: number, at: number): ClientLog {
    let log = logs.get(key);
    if (!log) {
      log = { times: [], lastWindowMs: windowMs };
      logs.set(key, log);
    }
    log.lastWindowMs = windowMs;
    const horizon = at - windowMs;
    let drop = 0;
    while (drop < log.times.length && (log.times[drop] ?? Infinity) <= horizon) drop += 1;
    if (drop > 0) log.times.splice(0, drop);
    return log;
  }

  function hitSync(key: string, limit: number, windowMs: number): RateLimitDecision {
    const at = now();
    sweepStep(at);
    const log = liveLog(key, windowMs, at);
    const allowed = log.times.length < limit;
    if (allowed) log.times.push(at);
    const oldest = log.times[0];
    const resetMs = oldest === undefined ? 0 : Math.max(0, oldest + windowMs - at);
    return { allowed, limit, remaining: Math.max(0, limit - log.times.length), resetMs };
  }

  return {
    hitSync,
    hit: async (key, limit, windowMs) => hitSync(key, limit, windowMs),
    size: () => logs.size,
    seed(key, count, atMs, windowMs) {
      const at = now();
      if (atMs <= at - windowMs) return;
      const log = liveLog(key, windowMs, at);
      const missing = Math.max(0, Math.floor(count) - log.times.length);
      if (missing === 0) return;
      log.times = [...log.times, ...Array.from({ length: missing }, () => atMs)].sort((a, b) => a - b);
    },
    hasLiveLog(key) {
      const log = logs.get(key);
      return log !== undefined && !isIdle(log, now());
    },
    sweepWork: () => examined,
  };
}
