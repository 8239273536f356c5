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

/** Per-process store: bounded by sweeping logs whose newest entry left the window. */
export function createMemoryRateLimitStore(options: { now?: () => number; maxClients?: number } = {}): RateLimitStore & {
  size(): number;
  hitSync(key: string, limit: number, windowMs: number): RateLimitDecision;
} {
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 500_000;
  const logs = new Map<string, ClientLog>();
  let lastSweep = now();

  function sweep(at: number): void {
    for (const [key, log] of logs) {
      const newest = log.times[log.times.length - 1];
      if (newest === undefined || newest <= at - log.lastWindowMs) logs.delete(key);
    }
    lastSweep = at;
  }

  function hitSync(key: string, limit: number, windowMs: number): RateLimitDecision {
    const at = now();
    if (at - lastSweep > windowMs || logs.size > maxClients) sweep(at);
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
  };
}
