// Politeness for one upstream, in front of the shared HTTP client: answers at once during a
// pause after 403/429 (per upstream, never per number), keeps a per-minute request budget and
// a concurrency cap (a request waits for a slot within its own deadline), and turns
// transport-level results into its own failures so adapters only judge the pages themselves.
import { createMemoryPolitenessStore, type BudgetDecision, type PauseState, type PolitenessStore } from './politeness-store.js';
import type { FetchResult, HttpClient, HttpRequest, HttpResponse, UpstreamFetcher } from './types.js';
import { sleepUnlessAborted } from '../abortable-sleep.js';

/** First pause after a 403/429 without Retry-After (another scraper of these sites uses the same). */
export const INITIAL_PAUSE_MS = 5 * 60_000;
export const PAUSE_GROWTH_FACTOR = 1.5;
export const MAX_BACKOFF_PAUSE_MS = 60 * 60_000;
/** A Retry-After further away than this is taken as this: a day is already "come back tomorrow". */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60_000;
const MIN_PAUSE_MS = 1_000;
/** Longest single sleep while waiting for a budget slot: the wait re-checks the store often. */
const BUDGET_POLL_MS = 250;

export interface UpstreamFetcherOptions {
  upstream: string;
  client: HttpClient;
  requestsPerMinute: number;
  maxConcurrency: number;
  /** Epoch ms; injected in tests. */
  now?: () => number;
  /** Shared state for several instances; in-memory by default. */
  politeness?: PolitenessStore;
  /**
   * Longest a request may wait for a budget slot: the source deadline less the time a request
   * needs. A slot further away than this answers `blocked(budget)` at once instead of waiting
   * out the deadline. Default DEFAULT_MAX_BUDGET_WAIT_MS.
   */
  maxBudgetWaitMs?: number;
}

/** The default source deadline (3 s) less a second for the request itself. */
export const DEFAULT_MAX_BUDGET_WAIT_MS = 2_000;


export function createUpstreamFetcher(options: UpstreamFetcherOptions): UpstreamFetcher {
  const { upstream, client } = options;
  const now = options.now ?? Date.now;
  const store = options.politeness ?? createMemoryPolitenessStore();
  const requestsPerMinute = Math.max(1, Math.floor(options.requestsPerMinute));
  const semaphore = createSemaphore(Math.max(1, Math.floor(options.maxConcurrency)));
  const maxBudgetWaitMs = Math.max(0, options.maxBudgetWaitMs ?? DEFAULT_MAX_BUDGET_WAIT_MS);
  // Last pause seen in the store, so that pausedUntil() can stay synchronous (readiness, metrics).
  let knownPauseUntilMs = 0;

  async function readPause(): Promise<PauseState> {
    try {
      const state = await store.readPause(upstream);
      knownPauseUntilMs = state.untilMs;
      return state;
    } catch {
      // A shared store that is down must not stop lookups: fall back to what this instance saw.
      return { untilMs: knownPauseUntilMs, consecutiveBlocks: 0 };
    }
  }

  async function writePause(state: PauseState): Promise<void> {
    knownPauseUntilMs = state.untilMs;
    try {
      await store.writePause(upstream, state);
    } catch {
      // Keep the local pause; the store catches up on the next block.
    }
  }

  function pausedOutcome(state: PauseState): FetchResult | undefined {
    const remainingMs = state.untilMs - now();
    return remainingMs > 0 ? { kind: 'failure', failure: { kind: 'blocked', reason: 'paused', retryAfterMs: remainingMs } } : undefined;
  }

  /**
   * `granted` (at the first try), `waited` (granted after waiting), or why not: `budget` when the next slot is further away than the wait allowed
   * (decided at once, so a spent budget never runs out the source deadline), `signal` when the
   * caller's signal ended the wait.
   */
  async function waitForBudgetSlot(signal: AbortSignal, first: Promise<BudgetDecision>): Promise<'granted' | 'waited' | 'budget' | 'signal'> {
    const waitStartedAt = now();
    let pending: Promise<BudgetDecision> | undefined = first;
    for (;;) {
      let decision;
      try {
        decision = await (pending ?? store.takeBudgetSlot(upstream, requestsPerMinute, now()));
      } catch {
        return pending === undefined ? 'waited' : 'granted';
      }
      if (decision.granted) return pending === undefined ? 'waited' : 'granted';
      pending = undefined;
      if (now() - waitStartedAt + decision.retryInMs > maxBudgetWaitMs) return 'budget';
      if (!(await sleepUnlessAborted(Math.min(decision.retryInMs, BUDGET_POLL_MS), signal))) return 'signal';
    }
  }

  async function pauseAfterBlock(response: HttpResponse): Promise<number> {
    const previous = await readPause();
    const consecutiveBlocks = previous.consecutiveBlocks + 1;
    const retryAfterMs = response.status === 429 ? parseRetryAfterMs(response.headers['retry-after'], now()) : undefined;
    const backoffMs = Math.round(Math.min(INITIAL_PAUSE_MS * PAUSE_GROWTH_FACTOR ** (consecutiveBlocks - 1), MAX_BACKOFF_PAUSE_MS));
    const pauseMs = Math.max(MIN_PAUSE_MS, retryAfterMs ?? backoffMs);
    // Never shorten a longer pause another request already set.
    const untilMs = Math.max(previous.untilMs, now() + pauseMs);
    await writePause({ untilMs, consecutiveBlocks });
    return untilMs - now();
  }

  /** `blocksBefore`: the 403/429 count read before the request; a success resets it (only then is the store asked again). */
  async function classify(response: HttpResponse, blocksBefore: number): Promise<FetchResult> {
    if (response.status === 403 || response.status === 429) {
      const pauseMs = await pauseAfterBlock(response);
      return { kind: 'failure', failure: { kind: 'blocked', reason: response.status === 403 ? 'http_403' : 'http_429', retryAfterMs: pauseMs } };
    }
    if (response.status >= 500) return { kind: 'failure', failure: { kind: 'error', reason: 'http_5xx' } };
    if (blocksBefore > 0) {
      const state = await readPause();
      if (state.consecutiveBlocks > 0) await writePause({ untilMs: state.untilMs, consecutiveBlocks: 0 });
    }
    return { kind: 'response', response };
  }

  async function fetch(request: HttpRequest): Promise<FetchResult> {
    // A pause is known locally as soon as this instance saw it: no need to ask the store first.
    const pausedLocally = pausedOutcome({ untilMs: knownPauseUntilMs, consecutiveBlocks: 0 });
    if (pausedLocally) return pausedLocally;
    if (!(await semaphore.acquire(request.signal))) return noSlot(request.signal);
    try {
      // The shared pause and the first budget try go to the store together (one round trip
      // instead of two on a remote store). During a pause the slot taken is not given back:
      // the budget only ever errs on the side of fewer requests.
      const firstTry = store.takeBudgetSlot(upstream, requestsPerMinute, now());
      firstTry.catch(() => undefined);
      const pause = await readPause();
      const paused = pausedOutcome(pause);
      if (paused) return paused;
      const budget = await waitForBudgetSlot(request.signal, firstTry);
      if (budget === 'budget') return { kind: 'failure', failure: { kind: 'blocked', reason: 'budget' } };
      if (budget === 'signal') return noSlot(request.signal);
      let blocksBefore = pause.consecutiveBlocks;
      if (budget === 'waited') {
        // A 403/429 may have arrived while this request waited.
        const pauseMeanwhile = await readPause();
        const pausedMeanwhile = pausedOutcome(pauseMeanwhile);
        if (pausedMeanwhile) return pausedMeanwhile;
        blocksBefore = pauseMeanwhile.consecutiveBlocks;
      }
      const result = await client.request(request);
      if (result.kind === 'failure') return { kind: 'failure', failure: { kind: 'error', reason: result.reason } };
      return await classify(result.response, blocksBefore);
    } finally {
      semaphore.release();
    }
  }

  return {
    upstream,
    fetch,
    pausedUntil: () => (knownPauseUntilMs > now() ? knownPauseUntilMs : 0),
  };
}

/** No budget or concurrency slot before the deadline; a caller's own abort stays `aborted`. */
function noSlot(signal: AbortSignal): FetchResult {
  const reason: unknown = signal.reason;
  const byDeadline = !(reason instanceof Error) || reason.name === 'TimeoutError';
  return { kind: 'failure', failure: byDeadline ? { kind: 'blocked', reason: 'budget' } : { kind: 'error', reason: 'aborted' } };
}

/** Retry-After as delay-seconds or an HTTP date, capped; undefined when absent or unreadable. */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let delayMs: number;
  if (/^\d+$/.test(text)) delayMs = Number(text) * 1000;
  else {
    const dateMs = Date.parse(text);
    if (!Number.isFinite(dateMs)) return undefined;
    delayMs = dateMs - nowMs;
  }
  return Math.min(Math.max(0, delayMs), MAX_RETRY_AFTER_MS);
}


interface Semaphore {
  acquire(signal: AbortSignal): Promise<boolean>;
  release(): void;
}

/** FIFO concurrency cap; a waiter whose signal aborts leaves the queue. */
function createSemaphore(capacity: number): Semaphore {
  let active = 0;
  const waiters: Array<(granted: boolean) => void> = [];
  return {
    acquire(signal) {
      if (signal.aborted) return Promise.resolve(false);
      if (active < capacity) {
        active += 1;
        return Promise.resolve(true);
      }
      return new Promise((resolve) => {
        const waiter = (granted: boolean) => {
          signal.removeEventListener('abort', onAbort);
          resolve(granted);
        };
        const onAbort = () => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) waiters.splice(index, 1);
          resolve(false);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.push(waiter);
      });
    },
    release() {
      const next = waiters.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next(true);
      else active -= 1;
    },
  };
}
