// Where an upstream's politeness state lives: the pause after a 403/429 and the per-minute
// request budget. The in-memory store serves one instance; a shared store (Redis) behind the
// same interface makes the pause and the budget hold for a whole deployment.

export interface PauseState {
  /** Epoch ms until which the upstream must not be called; 0 when not paused. */
  untilMs: number;
  /** 403/429 answers in a row since the last success: drives the exponential backoff. */
  consecutiveBlocks: number;
}

export type BudgetDecision = { granted: true } | { granted: false; retryInMs: number };

export interface PolitenessStore {
  readPause(upstream: string): Promise<PauseState>;
  writePause(upstream: string, state: PauseState): Promise<void>;
  /**
   * Takes one request slot from the upstream's budget of `requestsPerMinute` over a sliding
   * minute ending at `nowMs`, or says how long until a slot frees up.
   */
  takeBudgetSlot(upstream: string, requestsPerMinute: number, nowMs: number): Promise<BudgetDecision>;
}

export const BUDGET_WINDOW_MS = 60_000;

export interface MemoryPolitenessStore extends PolitenessStore {
  /**
   * Makes the upstream's budget log hold at least `count` requests in the window ending at
   * `nowMs`, adding the missing ones at `atMs`: what a shared store last reported, carried into
   * this instance while it is away (placed at `atMs`, they leave no sooner than the real ones).
   */
  seedBudget(upstream: string, count: number, atMs: number, nowMs: number): void;
  /** True while this instance has requests of its own (or seeded ones) in the upstream's window. */
  hasLiveBudget(upstream: string, nowMs: number): boolean;
}

/**
 * A sliding-window log of request times, oldest first. Expired times are skipped by moving
 * `head` and compacted in bulk, so taking a slot costs O(1) amortised: copying the whole log
 * on each request made a budget of tens of thousands a minute allocate a large array per
 * request, and those arrays drove the heap's growth (docs/cache.md).
 */
interface BudgetLog {
  times: number[];
  head: number;
}

function liveCount(log: BudgetLog, nowMs: number): number {
  const cutoff = nowMs - BUDGET_WINDOW_MS;
  while (log.head < log.times.length && (log.times[log.head] ?? Infinity) <= cutoff) log.head += 1;
  if (log.head > 64 && log.head * 2 > log.times.length) {
    log.times = log.times.slice(log.head);
    log.head = 0;
  }
  return log.times.length - log.head;
}

/** Inserts keeping the log sorted: at the end unless a clock went backwards. */
function record(log: BudgetLog, timeMs: number): void {
  let at = log.times.length;
  while (at > log.head && (log.times[at - 1] ?? -Infinity) > timeMs) at -= 1;
  if (at === log.times.length) log.times.push(timeMs);
  else log.times.splice(at, 0, timeMs);
}

/** One process's state: a sliding-window log of request times and the pause per upstream. */
export function createMemoryPolitenessStore(): MemoryPolitenessStore {
  const pauses = new Map<string, PauseState>();
  const logs = new Map<string, BudgetLog>();
  const logOf = (upstream: string): BudgetLog => {
    let log = logs.get(upstream);
    if (log === undefined) {
      log = { times: [], head: 0 };
      logs.set(upstream, log);
    }
    return log;
  };
  return {
    seedBudget(upstream, count, atMs, nowMs) {
      if (atMs <= nowMs - BUDGET_WINDOW_MS) return;
      const log = logOf(upstream);
      const missing = Math.max(0, Math.floor(count) - liveCount(log, nowMs));
      for (let added = 0; added < missing; added += 1) record(log, atMs);
    },
    hasLiveBudget: (upstream, nowMs) => liveCount(logOf(upstream), nowMs) > 0,
    readPause: async (upstream) => pauses.get(upstream) ?? { untilMs: 0, consecutiveBlocks: 0 },
    writePause: async (upstream, state) => {
      pauses.set(upstream, { ...state });
    },
    takeBudgetSlot: async (upstream, requestsPerMinute, nowMs) => {
      const log = logOf(upstream);
      const count = liveCount(log, nowMs);
      if (count < requestsPerMinute) {
        record(log, nowMs);
        return { granted: true };
      }
      const oldest = log.times[log.times.length - requestsPerMinute] ?? nowMs;
      return { granted: false, retryInMs: Math.max(1, oldest + BUDGET_WINDOW_MS - nowMs) };
    },
  };
}
