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

/** One process's state: a sliding-window log of request times and the pause per upstream. */
export function createMemoryPolitenessStore(): MemoryPolitenessStore {
  const pauses = new Map<string, PauseState>();
  const requestTimes = new Map<string, number[]>();
  return {
    seedBudget(upstream, count, atMs, nowMs) {
      if (atMs <= nowMs - BUDGET_WINDOW_MS) return;
      const times = (requestTimes.get(upstream) ?? []).filter((time) => time > nowMs - BUDGET_WINDOW_MS);
      const missing = Math.max(0, Math.floor(count) - times.length);
      requestTimes.set(upstream, [...times, ...Array.from({ length: missing }, () => atMs)].sort((a, b) => a - b));
    },
    hasLiveBudget: (upstream, nowMs) => (requestTimes.get(upstream) ?? []).some((time) => time > nowMs - BUDGET_WINDOW_MS),
    readPause: async (upstream) => pauses.get(upstream) ?? { untilMs: 0, consecutiveBlocks: 0 },
    writePause: async (upstream, state) => {
      pauses.set(upstream, { ...state });
    },
    takeBudgetSlot: async (upstream, requestsPerMinute, nowMs) => {
      const times = (requestTimes.get(upstream) ?? []).filter((time) => time > nowMs - BUDGET_WINDOW_MS);
      requestTimes.set(upstream, times);
      if (times.length < requestsPerMinute) {
        times.push(nowMs);
        return { granted: true };
      }
      const oldest = times[times.length - requestsPerMinute] ?? nowMs;
      return { granted: false, retryInMs: Math.max(1, oldest + BUDGET_WINDOW_MS - nowMs) };
    },
  };
}
