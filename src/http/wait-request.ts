// What a request asks of its lookup's deadline: `?wait=<ms>` and `Prefer: wait=<s>` (RFC 7240).
// The engine bounds the wait by LOOKUP_TIMEOUT_MS (callerDeadlineMs, the one place that rule
// lives); this reads the request and says what `Preference-Applied` reports.
import { callerDeadlineMs } from '../domain/lookup/types.js';

/** What a request asked of the lookup's deadline. */
export interface WaitRequest {
  /** The bound in ms as asked (the engine bounds it by LOOKUP_TIMEOUT_MS); undefined when none was asked. */
  waitMs: number | undefined;
  /** `Preference-Applied` value when a `Prefer: wait` was honoured. */
  preferenceApplied: string | undefined;
  /** `?wait` was given but is not a whole number of milliseconds. */
  invalid: boolean;
}

/** The `wait` preference of a Prefer header (RFC 7240 §4.3, delta-seconds); a malformed one is ignored, as §2 says. */
export function preferredWaitSeconds(prefer: string | string[] | undefined): number | undefined {
  if (prefer === undefined) return undefined;
  for (const item of (Array.isArray(prefer) ? prefer.join(',') : prefer).split(',')) {
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*(?:;.*)?$/i.exec(item);
    if (match?.[1] !== undefined) return Number(match[1]);
  }
  return undefined;
}

/**
 * `?wait=<ms>` and `Prefer: wait=<s>` together: the smaller bound wins (each is a bound on the
 * answer's time). The engine bounds it by LOOKUP_TIMEOUT_MS (callerDeadlineMs, the one place
 * that rule lives); `Preference-Applied` says what that leaves of the preference.
 */
export function waitRequestOf(
  query: { wait?: unknown },
  prefer: string | string[] | undefined,
  lookupTimeoutMs: number,
): WaitRequest {
  // Unknown, whatever the route schema publishes: it is not run, and a repeated `wait` is an array.
  const raw = query.wait;
  let queryMs: number | undefined;
  let invalid = false;
  if (raw !== undefined) {
    if (typeof raw === 'string' && /^\d{1,12}$/.test(raw)) queryMs = Number(raw);
    else invalid = true;
  }
  const preferSeconds = preferredWaitSeconds(prefer);
  const preferMs = preferSeconds === undefined ? undefined : preferSeconds * 1000;
  const bounds = [queryMs, preferMs].filter((bound): bound is number => bound !== undefined);
  if (bounds.length === 0) return { waitMs: undefined, preferenceApplied: undefined, invalid };
  const waitMs = Math.min(...bounds);
  const appliedMs = callerDeadlineMs(waitMs, lookupTimeoutMs);
  const preferenceApplied =
    preferSeconds === undefined ? undefined : `wait=${Math.min(preferSeconds, Math.ceil(appliedMs / 1000))}`;
  return { waitMs, preferenceApplied, invalid };
}
