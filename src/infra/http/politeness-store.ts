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

/** One process's state: a sliding-window log of request times and the pause per upstream. */
export function createMemoryPolitenessStore(): PolitenessStore {
  const pauses = new Map<string, PauseState>();
  const requestTimes = new Map<string, number[]>();
  return {
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
