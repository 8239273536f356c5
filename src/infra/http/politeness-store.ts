// Where an upstream's politeness state lives: the pause after a 403/429 and the per-minute
// request budget. The in-memory store serves one instance; a shared store (Redis) behind the
// same interface makes the pause and the budget hold for a whole deployment.

export interface PauseState {
  /** Epoch ms until which the upstream must not be called; 0 when not paused. */
  untilMs: number;
  /** 403/429 answers in a row since the last success: drives the exponential backoff. */
  consecutiveBlocks: number;
}

/**
 * `by` says which log refused: the upstream's whole budget, or the client's share of it.
 * `retryInMs` is when enough of that log's requests leave the minute for this charge to fit.
 */
export type BudgetDecision = { granted: true } | { granted: false; retryInMs: number; by?: 'budget' | 'share' };

/** What one budget try charges, and to whom. */
export interface BudgetCharge {
  /** Requests charged at once (a telguarder search is a POST and its redirected GET: 2). Default 1; at most the limits. */
  cost?: number;
  /** The client's key (a keyed hash, never an address), whose own log counts its share. */
  client?: string;
  /** Most requests the client may have in the sliding minute (its share); needs `client`. */
  clientLimit?: number;
}

export interface PolitenessStore {
  readPause(upstream: string): Promise<PauseState>;
  writePause(upstream: string, state: PauseState): Promise<void>;
  /**
   * Takes one request slot from the upstream's budget of `requestsPerMinute` over a sliding
   * minute ending at `nowMs`, or says how long until a slot frees up.
   */
  takeBudgetSlot(
    upstream: string,
    requestsPerMinute: number,
    nowMs: number,
    charge?: BudgetCharge,
  ): Promise<BudgetDecision>;
  /**
   * A shared store's count of the upstream's budget spent in the sliding minute by every
   * instance, or undefined while it cannot be read (the console then shows this instance's).
   */
  sharedBudgetUsed?(upstream: string): Promise<number | undefined>;
}

/** The charge's cost, never more than a limit can ever grant (so a charge can always fit, in time). */
export function costOf(requestsPerMinute: number, charge: BudgetCharge | undefined): number {
  const cost = Math.max(1, Math.floor(charge?.cost ?? 1));
  return Math.min(cost, requestsPerMinute, charge?.clientLimit ?? Number.POSITIVE_INFINITY);
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

/** How long until `cost` more fit in a log of `count` live entries under `limit`. */
function retryInOf(log: BudgetLog, count: number, limit: number, cost: number, nowMs: number): number {
  // The entries that must leave first: the oldest `count - (limit - cost)` of them.
  const leaving = Math.max(1, count - (limit - cost));
  const time = log.times[log.head + leaving - 1] ?? nowMs;
  return Math.max(1, time + BUDGET_WINDOW_MS - nowMs);
}

/** Client logs examined for removal on each client charge: the sweep is O(1) per request. */
const CLIENT_SWEEP_STEP = 4;

/** One process's state: a sliding-window log of request times and the pause per upstream, and a log per client and upstream. */
export function createMemoryPolitenessStore(): MemoryPolitenessStore {
  const pauses = new Map<string, PauseState>();
  const logs = new Map<string, BudgetLog>();
  const clientLogs = new Map<string, BudgetLog>();
  let sweep = clientLogs.keys();
  /** Removes client logs with nothing left in the minute, a few per call. */
  function sweepClientLogs(nowMs: number): void {
    for (let step = 0; step < CLIENT_SWEEP_STEP; step += 1) {
      let next = sweep.next();
      if (next.done === true) {
        sweep = clientLogs.keys();
        next = sweep.next();
        if (next.done === true) return;
      }
      const log = clientLogs.get(next.value);
      if (log !== undefined && liveCount(log, nowMs) === 0) clientLogs.delete(next.value);
    }
  }
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
    takeBudgetSlot: async (upstream, requestsPerMinute, nowMs, charge) => {
      const cost = costOf(requestsPerMinute, charge);
      const log = logOf(upstream);
      const count = liveCount(log, nowMs);
      if (count + cost > requestsPerMinute)
        return { granted: false, retryInMs: retryInOf(log, count, requestsPerMinute, cost, nowMs), by: 'budget' };
      let clientLog: BudgetLog | undefined;
      if (charge?.client !== undefined && charge.clientLimit !== undefined) {
        sweepClientLogs(nowMs);
        const key = `${upstream}\u0000${charge.client}`;
        clientLog = clientLogs.get(key);
        if (clientLog === undefined) {
          clientLog = { times: [], head: 0 };
          clientLogs.set(key, clientLog);
        }
        const clientCount = liveCount(clientLog, nowMs);
        if (clientCount + cost > charge.clientLimit)
          return {
            granted: false,
            retryInMs: retryInOf(clientLog, clientCount, charge.clientLimit, cost, nowMs),
            by: 'share',
          };
      }
      for (let charged = 0; charged < cost; charged += 1) {
        record(log, nowMs);
        if (clientLog !== undefined) record(clientLog, nowMs);
      }
      return { granted: true };
    },
  };
}
