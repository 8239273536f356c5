// Politeness for one upstream, in front of the shared HTTP client: answers at once during a
// pause after 403/429 (per upstream, never per number), keeps a per-minute request budget with
// a per-client share of it, and a concurrency cap whose queue serves clients in turn; and turns
// transport-level results into its own failures so adapters only judge the pages themselves.
//
// A wait is never an upstream failure (docs/reliability.md): a request that gets no
// concurrency slot or no budget slot in time is sent nowhere and ends `blocked(queue)` or
// `blocked(budget)`, soon enough to leave its minimum time on the wire before the caller's
// deadline, so the deadline passing only ever means the upstream was slow. A request waiting
// for a budget slot holds no concurrency slot.
import {
  BUDGET_WINDOW_MS,
  costOf,
  createMemoryPolitenessStore,
  type BudgetCharge,
  type BudgetDecision,
  type PauseState,
  type PolitenessStore,
} from './politeness-store.js';
import type {
  FetchClient,
  FetchFailure,
  FetchResult,
  HttpClient,
  HttpRequest,
  HttpResponse,
  UpstreamFetcher,
} from './types.js';
import { sleepUnlessAborted } from '../abortable-sleep.js';

/** The budget's window in whole seconds (the console's budget used is counted to the second). */
const BUDGET_WINDOW_SECONDS = BUDGET_WINDOW_MS / 1000;

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
   * Longest a request may wait for its concurrency and budget slots: the source deadline less
   * the time a request needs. A slot further away than this answers `blocked(budget)` at once
   * instead of waiting out the deadline. Default DEFAULT_MAX_BUDGET_WAIT_MS.
   */
  maxBudgetWaitMs?: number;
  /**
   * With a request's `deadlineAt`: it is sent no later than this long before it, so it has
   * this long on the wire. Default DEFAULT_MIN_REQUEST_TIME_MS.
   */
  minRequestTimeMs?: number;
  /** Most of the budget one client may spend in a sliding minute, in percent. Default 100 (no share). */
  clientSharePct?: number;
  /** The same for a rate-limit exempt client. Default 100. */
  exemptSharePct?: number;
}

/** The default source deadline (3 s) less a second for the request itself. */
export const DEFAULT_MAX_BUDGET_WAIT_MS = 2_000;
export const DEFAULT_MIN_REQUEST_TIME_MS = 1_000;

/** A client's share of a budget: at least one request, so every client can be answered. */
export function shareOf(requestsPerMinute: number, pct: number): number {
  return Math.max(1, Math.floor((requestsPerMinute * Math.min(100, Math.max(0, pct))) / 100));
}

export function createUpstreamFetcher(options: UpstreamFetcherOptions): UpstreamFetcher {
  const { upstream, client } = options;
  const now = options.now ?? Date.now;
  const store = options.politeness ?? createMemoryPolitenessStore();
  const requestsPerMinute = Math.max(1, Math.floor(options.requestsPerMinute));
  const queue = createFairQueue(Math.max(1, Math.floor(options.maxConcurrency)));
  const maxBudgetWaitMs = Math.max(0, options.maxBudgetWaitMs ?? DEFAULT_MAX_BUDGET_WAIT_MS);
  const minRequestTimeMs = Math.max(0, options.minRequestTimeMs ?? DEFAULT_MIN_REQUEST_TIME_MS);
  const clientShare = shareOf(requestsPerMinute, options.clientSharePct ?? 100);
  const exemptShare = shareOf(requestsPerMinute, options.exemptSharePct ?? 100);
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
    return remainingMs > 0
      ? { kind: 'failure', failure: { kind: 'blocked', reason: 'paused', retryAfterMs: remainingMs }, notSent: true }
      : undefined;
  }

  /** The charge of one try: the client's share applies only to a client's request (not to the service's own). */
  function chargeOf(fetchClient: FetchClient | undefined, cost: number): BudgetCharge {
    if (fetchClient === undefined) return { cost };
    const share = fetchClient.exempt ? exemptShare : clientShare;
    return share >= requestsPerMinute ? { cost } : { cost, client: fetchClient.key, clientLimit: share };
  }

  // What this instance was granted in the last minute (the console's "budget used"), counted to
  // the second: one count per second of the minute, in a ring. A grant costs O(1) and the
  // memory is fixed: a log of every grant held tens of thousands of entries a minute at a few
  // hundred lookups a second (about 5 MiB of RSS at CACHE_MAX_MB=32, and summing it on every
  // grant took a millisecond of CPU per lookup).
  const grantedSeconds = new Array<number>(BUDGET_WINDOW_SECONDS).fill(-1);
  const grantedCounts = new Array<number>(BUDGET_WINDOW_SECONDS).fill(0);
  function noteGrant(cost: number): void {
    const second = Math.floor(now() / 1000);
    const slot = second % BUDGET_WINDOW_SECONDS;
    if (grantedSeconds[slot] !== second) {
      grantedSeconds[slot] = second;
      grantedCounts[slot] = 0;
    }
    grantedCounts[slot] = (grantedCounts[slot] ?? 0) + cost;
  }
  /** The grants of this second and of the 59 before it. */
  function grantedInMinute(): number {
    const oldest = Math.floor(now() / 1000) - BUDGET_WINDOW_SECONDS;
    let total = 0;
    for (let slot = 0; slot < BUDGET_WINDOW_SECONDS; slot += 1)
      if ((grantedSeconds[slot] ?? -1) > oldest) total += grantedCounts[slot] ?? 0;
    return total;
  }

  async function takeBudget(charge: BudgetCharge): Promise<BudgetDecision> {
    try {
      const decision = await store.takeBudgetSlot(upstream, requestsPerMinute, now(), charge);
      if (decision.granted) noteGrant(costOf(requestsPerMinute, charge));
      return decision;
    } catch {
      // A store that fails to answer must not stop lookups (the Redis store falls back itself).
      return { granted: true };
    }
  }

  async function pauseAfterBlock(response: HttpResponse): Promise<number> {
    const previous = await readPause();
    const consecutiveBlocks = previous.consecutiveBlocks + 1;
    const retryAfterMs =
      response.status === 429 ? parseRetryAfterMs(response.headers['retry-after'], now()) : undefined;
    const backoffMs = Math.round(
      Math.min(INITIAL_PAUSE_MS * PAUSE_GROWTH_FACTOR ** (consecutiveBlocks - 1), MAX_BACKOFF_PAUSE_MS),
    );
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
      return {
        kind: 'failure',
        failure: { kind: 'blocked', reason: response.status === 403 ? 'http_403' : 'http_429', retryAfterMs: pauseMs },
      };
    }
    if (response.status >= 500) {
      return { kind: 'failure', failure: { kind: 'error', reason: 'http_5xx', cause: `http_${response.status}` } };
    }
    if (blocksBefore > 0) {
      const state = await readPause();
      if (state.consecutiveBlocks > 0) await writePause({ untilMs: state.untilMs, consecutiveBlocks: 0 });
    }
    return { kind: 'response', response };
  }

  /** Sends the request, charging each redirect followed beyond the requests already charged. */
  async function send(
    request: HttpRequest,
    charge: BudgetCharge,
    prepaid: number,
    blocksBefore: number,
  ): Promise<FetchResult> {
    let unusedPrepaid = prepaid - 1;
    let refusedRedirect = false;
    const beforeRedirect = async (): Promise<boolean> => {
      if (unusedPrepaid > 0) {
        unusedPrepaid -= 1;
        return true;
      }
      // One try, no wait: the first request is already answered and waits on the wire.
      const decision = await takeBudget({ ...charge, cost: 1 });
      refusedRedirect = !decision.granted;
      return decision.granted;
    };
    const result = await client.request({ ...request, beforeRedirect });
    if (result.kind === 'failure') {
      if (refusedRedirect) return { kind: 'failure', failure: { kind: 'blocked', reason: 'budget' } };
      const { reason, cause } = result;
      const failure: FetchFailure = cause === undefined ? { kind: 'error', reason } : { kind: 'error', reason, cause };
      return { kind: 'failure', failure };
    }
    return await classify(result.response, blocksBefore);
  }

  async function fetch(request: HttpRequest): Promise<FetchResult> {
    // A pause is known locally as soon as this instance saw it: no need to ask the store first.
    const pausedLocally = pausedOutcome({ untilMs: knownPauseUntilMs, consecutiveBlocks: 0 });
    if (pausedLocally) return pausedLocally;
    const { signal } = request;
    // The last moment the request may be sent: within the wait allowed, and leaving each
    // request it will send its minimum time on the wire before the caller's deadline.
    const expected = Math.max(1, Math.floor(request.expectedRequests ?? 1));
    const sendBy = Math.min(
      now() + maxBudgetWaitMs - (expected - 1) * minRequestTimeMs,
      request.deadlineAt === undefined ? Number.POSITIVE_INFINITY : request.deadlineAt - expected * minRequestTimeMs,
    );
    const clientKey = request.client?.key ?? '';
    const charge = chargeOf(request.client, expected);
    const prepaid = costOf(requestsPerMinute, charge);
    for (;;) {
      const slot = await queue.acquire(clientKey, signal, Math.max(0, sendBy - now()));
      if (slot !== 'granted') return notSent(slot === 'late' ? 'queue' : signal);
      let holding = true;
      try {
        // The shared pause and the budget try go to the store together (one round trip
        // instead of two on a remote store). During a pause the slot taken is not given back:
        // the budget only ever errs on the side of fewer requests.
        const budget = takeBudget(charge);
        const pause = await readPause();
        const paused = pausedOutcome(pause);
        if (paused) return paused;
        const decision = await budget;
        if (decision.granted) return await send(request, charge, prepaid, pause.consecutiveBlocks);
        // No budget slot: decided at once when the next one frees too late (a spent budget
        // never runs out the source deadline), else waited for without holding the concurrency slot.
        if (now() + decision.retryInMs > sendBy) return notSent('budget');
        queue.release();
        holding = false;
        if (!(await sleepUnlessAborted(Math.min(decision.retryInMs, BUDGET_POLL_MS), signal))) return notSent(signal);
      } finally {
        if (holding) queue.release();
      }
    }
  }

  return {
    upstream,
    fetch,
    pausedUntil: () => (knownPauseUntilMs > now() ? knownPauseUntilMs : 0),
    budget: () => ({ used: grantedInMinute(), perMinute: requestsPerMinute }),
  };
}

/**
 * Nothing sent: `queue` or `budget` when no slot came in time; when the caller's signal ended
 * the wait, `blocked(queue)` for a deadline and `aborted` for a caller that gave up.
 */
function notSent(why: 'queue' | 'budget' | AbortSignal): FetchResult {
  if (typeof why === 'string') return { kind: 'failure', failure: { kind: 'blocked', reason: why }, notSent: true };
  const reason: unknown = why.reason;
  const byDeadline = !(reason instanceof Error) || reason.name === 'TimeoutError';
  return {
    kind: 'failure',
    failure: byDeadline ? { kind: 'blocked', reason: 'queue' } : { kind: 'error', reason: 'aborted' },
    notSent: true,
  };
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

interface FairQueue {
  /** `granted`, `late` (no slot within `maxWaitMs`) or `aborted` (the signal ended the wait). */
  acquire(clientKey: string, signal: AbortSignal, maxWaitMs: number): Promise<'granted' | 'late' | 'aborted'>;
  release(): void;
}

interface Waiter {
  grant(): void;
}

/**
 * A concurrency cap whose waiters are served one client at a time, in turn (round robin): a
 * client with 30 requests queued delays another client's request by at most one slot's turn,
 * not by its 30; the client served last is not served again while another waits. Within one
 * client, first come first served. A waiter whose signal aborts or whose wait runs out leaves
 * the queue. The loop over waiting clients stops at the second one.
 */
function createFairQueue(capacity: number): FairQueue {
  let active = 0;
  // Clients with waiters, in turn order: the first key is served next, then moves to the back.
  const waiting = new Map<string, Waiter[]>();
  // The client served last, queued or not: it is not served again while another waits.
  let lastServed: string | undefined;

  function remove(clientKey: string, waiter: Waiter): void {
    const list = waiting.get(clientKey);
    if (list === undefined) return;
    const index = list.indexOf(waiter);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) waiting.delete(clientKey);
  }

  return {
    acquire(clientKey, signal, maxWaitMs) {
      if (signal.aborted) return Promise.resolve('aborted');
      if (active < capacity) {
        active += 1;
        lastServed = clientKey;
        return Promise.resolve('granted');
      }
      if (maxWaitMs <= 0) return Promise.resolve('late');
      return new Promise((resolve) => {
        const finish = (result: 'granted' | 'late' | 'aborted'): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        };
        const waiter: Waiter = { grant: () => finish('granted') };
        const onAbort = (): void => {
          remove(clientKey, waiter);
          finish('aborted');
        };
        const timer = setTimeout(() => {
          remove(clientKey, waiter);
          finish('late');
        }, maxWaitMs);
        signal.addEventListener('abort', onAbort, { once: true });
        const list = waiting.get(clientKey);
        if (list === undefined) waiting.set(clientKey, [waiter]);
        else list.push(waiter);
      });
    },
    release() {
      let next: [string, Waiter[]] | undefined;
      for (const entry of waiting) {
        next ??= entry;
        if (entry[0] !== lastServed) {
          next = entry;
          break;
        }
      }
      if (next === undefined) {
        active -= 1;
        return;
      }
      const [clientKey, list] = next;
      lastServed = clientKey;
      const waiter = list.shift();
      // This client has had its turn: to the back of the line, if it still waits.
      waiting.delete(clientKey);
      if (list.length > 0) waiting.set(clientKey, list);
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (waiter !== undefined) waiter.grant();
      else active -= 1;
    },
  };
}
