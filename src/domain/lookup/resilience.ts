// Per-upstream resilience with cockatiel 3: at most one retry for transient failures, and a
// circuit breaker so a dead upstream costs callers nothing while it is down.
//
// Sources return outcomes instead of throwing, and cockatiel reasons in exceptions, so inside
// the policy a failure outcome travels as an `OutcomeFailure` and comes back out as the same
// outcome. What counts:
// - retried: `error` with a reason in RETRYABLE_REASONS (connection, http_5xx), once, after a
//   jittered backoff, and only when enough of the source deadline remains for a useful attempt;
// - breaker failures: `error` outcomes the upstream caused (timeout, connection, http_5xx,
//   too_large, parse…). `blocked` (budget, pause, 403/429, challenge – the adapter's own
//   politeness pause already stops calls) and `aborted` (we gave up) neither open nor reset it.
import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
} from 'cockatiel';
import { RETRYABLE_REASONS, failed, type SourceOutcome } from '../../sources/source.js';

export interface ResilienceOptions {
  /** Consecutive failed fetches (a fetch includes its retry) that open the breaker. Default 5. */
  breakerThreshold?: number;
  /** How long the breaker stays open before one half-open probe is let through. Default 30 000 ms. */
  breakerHalfOpenAfterMs?: number;
  /** First retry delay, decorrelated jitter around it. Default 50 ms. */
  retryInitialDelayMs?: number;
  /** Cap on the retry delay. Default 200 ms. */
  retryMaxDelayMs?: number;
  /** A retry is attempted only if at least this much of the source deadline remains after the longest backoff. Default 200 ms. */
  retryMinRemainingMs?: number;
}

export const RESILIENCE_DEFAULTS: Required<ResilienceOptions> = {
  breakerThreshold: 5,
  breakerHalfOpenAfterMs: 30_000,
  retryInitialDelayMs: 50,
  retryMaxDelayMs: 200,
  retryMinRemainingMs: 200,
};

/** Reasons that say nothing about the upstream's health: our own cancellation, and the breaker itself. */
const NEUTRAL_ERROR_REASONS: ReadonlySet<string> = new Set(['aborted', 'circuit_open']);

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface UpstreamPolicy {
  /**
   * Runs `attempt` (one upstream request, never throwing) under retry and breaker. `deadlineAt`
   * is the epoch ms (Date.now clock) at which the source deadline passes; `signal` aborts then.
   * Never rejects.
   */
  execute<T>(
    attempt: (signal: AbortSignal) => Promise<SourceOutcome<T>>,
    context: { signal: AbortSignal; deadlineAt: number },
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
    outcome.status === 'blocked'
      ? outcome
      : outcome.status === 'error'
        ? outcome
        : failed('parse'); // unreachable: only failure outcomes are converted
  const countsForBreaker = failure.status === 'error' && !NEUTRAL_ERROR_REASONS.has(failure.reason);
  return new OutcomeFailure(failure, retryable, countsForBreaker);
}

export function createUpstreamPolicy(options: ResilienceOptions = {}): UpstreamPolicy {
  const settings = { ...RESILIENCE_DEFAULTS, ...definedOnly(options) };
  const breaker = circuitBreaker(
    handleWhen((error) => error instanceof OutcomeFailure && error.countsForBreaker),
    {
      halfOpenAfter: settings.breakerHalfOpenAfterMs,
      breaker: new ConsecutiveBreaker(settings.breakerThreshold),
    },
  );
  const retryOnce = retry(
    handleWhen((error) => error instanceof OutcomeFailure && error.retryable),
    {
      maxAttempts: 1,
      backoff: new ExponentialBackoff({ initialDelay: settings.retryInitialDelayMs, maxDelay: settings.retryMaxDelayMs }),
    },
  );
  // Breaker outside retry: one logical fetch (with its retry) is one success or failure, and
  // an open breaker answers before any retry machinery runs.
  const policy = wrap(breaker, retryOnce);

  return {
    async execute<T>(
      attempt: (signal: AbortSignal) => Promise<SourceOutcome<T>>,
      { signal, deadlineAt }: { signal: AbortSignal; deadlineAt: number },
    ): Promise<SourceOutcome<T>> {
      try {
        return await policy.execute(async () => {
          if (signal.aborted) throw toFailure(failed(Date.now() >= deadlineAt ? 'timeout' : 'aborted'), false);
          const outcome = await attempt(signal);
          if (outcome.status === 'ok' || outcome.status === 'not_found') return outcome;
          const remainingMs = deadlineAt - Date.now();
          const retryable =
            outcome.status === 'error' &&
            RETRYABLE_REASONS.has(outcome.reason) &&
            remainingMs >= settings.retryMaxDelayMs + settings.retryMinRemainingMs;
          throw toFailure(outcome, retryable);
        }, signal);
      } catch (error) {
        if (error instanceof OutcomeFailure) return error.outcome;
        if (error instanceof BrokenCircuitError) return failed('circuit_open');
        // cockatiel's own cancellation (TaskCancelledError) when the caller gave up mid-probe.
        return failed(signal.aborted ? 'aborted' : 'connection');
      }
    },
    breakerState() {
      switch (breaker.state) {
        case CircuitState.Open:
        case CircuitState.Isolated:
          return 'open';
        case CircuitState.HalfOpen:
          return 'half_open';
        default:
          return 'closed';
      }
    },
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
