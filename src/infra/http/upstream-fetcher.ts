// Politeness for one upstream, in front of the shared HTTP client: answers at once during a
// pause after 403/429 (per upstream, never per number), keeps a per-minute request budget and
// a concurrency cap (a request waits for a slot within its own deadline), and turns
// transport-level results into outcomes so adapters only judge the pages themselves.
import { blocked, failed, type SourceOutcome } from '../../sources/source.js';
import { createMemoryPolitenessStore, type PauseState, type PolitenessStore } from './politeness-store.js';
import type { HttpClient, HttpRequest, HttpResponse, UpstreamFetcher } from './types.js';
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
}

type FetchResult = Awaited<ReturnType<UpstreamFetcher['fetch']>>;

export function createUpstreamFetcher(options: UpstreamFetcherOptions): UpstreamFetcher {
  const { upstream, client } = options;
  const now = options.now ?? Date.now;
  const store = options.politeness ?? createMemoryPolitenessStore();
  const requestsPerMinute = Math.max(1, Math.floor(options.requestsPerMinute));
  const semaphore = createSemaphore(Math.max(1, Math.floor(options.maxConcurrency)));
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
    return remainingMs > 0 ? { kind: 'outcome', outcome: blocked('paused', remainingMs) } : undefined;
  }

  async function waitForBudgetSlot(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      let decision;
      try {
        decision = await store.takeBudgetSlot(upstream, requestsPerMinute, now());
      } catch {
        return true;
      }
      if (decision.granted) return true;
      if (!(await sleepUnlessAborted(Math.min(decision.retryInMs, BUDGET_POLL_MS), signal))) return false;
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

  async function classify(response: HttpResponse): Promise<FetchResult> {
    if (response.status === 403 || response.status === 429) {
      const pauseMs = await pauseAfterBlock(response);
      return { kind: 'outcome', outcome: blocked(response.status === 403 ? 'http_403' : 'http_429', pauseMs) };
    }
    if (response.status >= 500) return { kind: 'outcome', outcome: failed('http_5xx') };
    const state = await readPause();
    if (state.consecutiveBlocks > 0) await writePause({ untilMs: state.untilMs, consecutiveBlocks: 0 });
    return { kind: 'response', response };
  }

  async function fetch(request: HttpRequest): Promise<FetchResult> {
    const paused = pausedOutcome(await readPause());
    if (paused) return paused;
    if (!(await semaphore.acquire(request.signal))) return noSlot(request.signal);
    try {
      if (!(await waitForBudgetSlot(request.signal))) return noSlot(request.signal);
      // A 403/429 may have arrived while this request waited.
      const pausedMeanwhile = pausedOutcome(await readPause());
      if (pausedMeanwhile) return pausedMeanwhile;
      const result = await client.request(request);
      if (result.kind === 'failure') return { kind: 'outcome', outcome: failed(result.reason) };
      return await classify(result.response);
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
  const outcome: SourceOutcome<never> = byDeadline ? blocked('budget') : failed('aborted');
  return { kind: 'outcome', outcome };
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
