// Per-upstream resilience: at most one retry for transient failures (cockatiel 3), and a
// circuit breaker so a dead upstream costs callers nothing while it is down.
//
// Sources return outcomes instead of throwing, and cockatiel reasons in exceptions, so inside
// the retry a failure outcome travels as an `OutcomeFailure` and comes back out as the same
// outcome. What counts:
// - retried: `error` with a reason in RETRYABLE_REASONS (connection, http_5xx), once, after a
//   jittered backoff, and only when enough of the source deadline remains for a useful attempt;
// - breaker failures: `error` outcomes the upstream caused (timeout, connection, http_5xx,
//   too_large, parse…). `blocked` (budget, pause, 403/429, challenge – the fetcher's own budget
//   and pause already stop calls, and a spent budget says nothing of the site's health) and
//   `aborted` (we gave up) neither open nor reset it.
//
// The breaker judges the upstream, not one number: it opens when failed fetches were seen for
// `breakerThreshold` DISTINCT numbers (by their keyed hash) within `breakerWindowMs`, with no
// success since. A number whose fetch failed is remembered for `numberFailureMemoryMs` and
// answered with the same failure from that memory, without calling the upstream; so a number
// the upstream cannot answer (a "poisoned" number), however often asked, is one failure and
// never opens the breaker for every other number.
import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { RETRYABLE_REASONS, failed, type SourceOutcome } from '../ports/source.js';

export interface ResilienceOptions {
  /** Distinct numbers with a failed fetch (a fetch includes its retry), no success since, that open the breaker. Default 5. */
  breakerThreshold?: number;
  /** Failures older than this no longer count toward opening. Default 60 000 ms. */
  breakerWindowMs?: number;
  /** How long one number's failure is answered from memory instead of asking the upstream again. Default 10 000 ms. */
  numberFailureMemoryMs?: number;
  /** Numbers remembered at most (oldest forgotten first), so the memory stays bounded. Default 10 000. */
  numberFailureMemoryMax?: number;
  /** How long the breaker stays open before one half-open probe is let through. Default 30 000 ms. */
  breakerHalfOpenAfterMs?: number;
  /** First retry delay, decorrelated jitter around it. Default 50 ms. */
  retryInitialDelayMs?: number;
  /** Cap on the retry delay. Default 200 ms. */
  retryMaxDelayMs?: number;
  /** A retry is attempted only if at least this much of the source deadline remains after the longest backoff. Default 200 ms. */
  retryMinRemainingMs?: number;
  /** Clock of the breaker and the per-number memory (epoch ms). */
  now?: () => number;
}

export const RESILIENCE_DEFAULTS: Required<Omit<ResilienceOptions, 'now'>> = {
  breakerThreshold: 5,
  breakerWindowMs: 60_000,
  numberFailureMemoryMs: 10_000,
  numberFailureMemoryMax: 10_000,
  breakerHalfOpenAfterMs: 30_000,
  retryInitialDelayMs: 50,
  retryMaxDelayMs: 200,
  retryMinRemainingMs: 200,
};

/** Reasons that say nothing about the upstream's health: our own cancellation, and the breaker itself. */
const NEUTRAL_ERROR_REASONS: ReadonlySet<string> = new Set(['aborted', 'circuit_open']);

export const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

export interface UpstreamPolicy {
  /**
   * Runs `attempt` (one upstream request, never throwing) under retry and breaker. `deadlineAt`
   * is the epoch ms (Date.now clock) at which the source deadline passes; `signal` aborts then.
   * `numberKey` names the number (its keyed hash, never the number): failures count per
   * distinct number; without it every call counts as a number of its own. Never rejects.
   */
  execute<T>(
    attempt: (signal: AbortSignal) => Promise<SourceOutcome<T>>,
    context: { signal: AbortSignal; deadlineAt: number; numberKey?: string },
  ): Promise<SourceOutcome<T>>;
  breakerState(): BreakerState;
}

/** A failure outcome carried through cockatiel as an exception. */
class OutcomeFailure extends Error {
  constructor(
    readonly outcome: SourceOutcome<never>,
    readonly retryable: boolean,
    readonly countsForBreaker: boolean,
  ) {
    super(outcome.status === 'error' || outcome.status === 'blocked' ? outcome.reason : outcome.status);
    this.name = 'OutcomeFailure';
  }
}

function toFailure(outcome: SourceOutcome<unknown>, retryable: boolean): OutcomeFailure {
  const failure: SourceOutcome<never> =
    outcome.status === 'blocked' ? outcome : outcome.status === 'error' ? outcome : failed('parse'); // unreachable: only failure outcomes are converted
  const countsForBreaker = failure.status === 'error' && !NEUTRAL_ERROR_REASONS.has(failure.reason);
  return new OutcomeFailure(failure, retryable, countsForBreaker);
}

interface RememberedFailure {
  outcome: SourceOutcome<never>;
  untilMs: number;
}

export function createUpstreamPolicy(options: ResilienceOptions = {}): UpstreamPolicy {
  const settings = { ...RESILIENCE_DEFAULTS, ...definedOnly(options) };
  const now = options.now ?? Date.now;
  const retryOnce = retry(
    handleWhen((error) => error instanceof OutcomeFailure && error.retryable),
    {
      maxAttempts: 1,
      backoff: new ExponentialBackoff({
        initialDelay: settings.retryInitialDelayMs,
        maxDelay: settings.retryMaxDelayMs,
      }),
    },
  );
  let state: BreakerState = 'closed';
  let openedAtMs = 0;
  let probeInFlight = false;
  /** Numbers with a counted failure since the last success, with the time of their latest one. */
  const failingNumbers = new Map<string, number>();
  const rememberedFailures = new Map<string, RememberedFailure>();
  let anonymousCalls = 0;

  function currentState(): BreakerState {
    if (state === 'open' && now() - openedAtMs >= settings.breakerHalfOpenAfterMs) state = 'half_open';
    return state;
  }

  function open(): void {
    state = 'open';
    openedAtMs = now();
  }

  function recordSuccess(): void {
    failingNumbers.clear();
    state = 'closed';
  }

  function recordFailure(numberKey: string, outcome: SourceOutcome<never>): void {
    const nowMs = now();
    rememberedFailures.delete(numberKey);
    rememberedFailures.set(numberKey, { outcome, untilMs: nowMs + settings.numberFailureMemoryMs });
    // Map order is insertion order: the first entries are the oldest.
    for (const key of rememberedFailures.keys()) {
      if (rememberedFailures.size <= settings.numberFailureMemoryMax) break;
      rememberedFailures.delete(key);
    }
    if (state === 'half_open') {
      open();
      return;
    }
    failingNumbers.delete(numberKey);
    failingNumbers.set(numberKey, nowMs);
    for (const [key, atMs] of failingNumbers) {
      if (atMs > nowMs - settings.breakerWindowMs) break;
      failingNumbers.delete(key);
    }
    while (failingNumbers.size > settings.breakerThreshold) {
      const oldest = failingNumbers.keys().next();
      if (oldest.done === true) break;
      failingNumbers.delete(oldest.value);
    }
    if (failingNumbers.size >= settings.breakerThreshold) open();
  }

  function remembered(numberKey: string): SourceOutcome<never> | undefined {
    const entry = rememberedFailures.get(numberKey);
    if (entry === undefined) return undefined;
    if (entry.untilMs > now()) return entry.outcome;
    rememberedFailures.delete(numberKey);
    return undefined;
  }

  return {
    async execute<T>(
      attempt: (signal: AbortSignal) => Promise<SourceOutcome<T>>,
      { signal, deadlineAt, numberKey }: { signal: AbortSignal; deadlineAt: number; numberKey?: string },
    ): Promise<SourceOutcome<T>> {
      const key = numberKey ?? `anonymous:${(anonymousCalls = (anonymousCalls + 1) % Number.MAX_SAFE_INTEGER)}`;
      const known = remembered(key);
      if (known !== undefined) return known;
      const breaker = currentState();
      if (breaker === 'open') return failed('circuit_open');
      const isProbe = breaker === 'half_open';
      if (isProbe) {
        // One probe at a time while half-open; the others are answered as if still open.
        if (probeInFlight) return failed('circuit_open');
        probeInFlight = true;
      }
      let outcome: SourceOutcome<T>;
      try {
        outcome = await retryOnce.execute(async () => {
          if (signal.aborted) throw toFailure(failed(Date.now() >= deadlineAt ? 'timeout' : 'aborted'), false);
          const result = await attempt(signal);
          if (result.status === 'ok' || result.status === 'not_found') return result;
          const remainingMs = deadlineAt - Date.now();
          const retryable =
            result.status === 'error' &&
            RETRYABLE_REASONS.has(result.reason) &&
            remainingMs >= settings.retryMaxDelayMs + settings.retryMinRemainingMs;
          throw toFailure(result, retryable);
        }, signal);
      } catch (error) {
        if (error instanceof OutcomeFailure) {
          if (error.countsForBreaker) recordFailure(key, error.outcome);
          outcome = error.outcome;
        } else {
          // cockatiel's own cancellation (TaskCancelledError) when the caller gave up mid-wait.
          outcome = failed(signal.aborted ? 'aborted' : 'connection');
        }
      } finally {
        if (isProbe) probeInFlight = false;
      }
      if (outcome.status === 'ok' || outcome.status === 'not_found') recordSuccess();
      return outcome;
    },
    breakerState: currentState,
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
