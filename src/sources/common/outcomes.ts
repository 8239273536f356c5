// Small pieces every HTML adapter shares: the base-URL join and the last-resort classification
// of an unexpected exception, so that a source never throws to its caller.
import { failed } from '../source.js';
import type { SourceOutcome } from '../source.js';

/** `base` may end with a slash or carry a path prefix (a proxy, a mirror): the path is appended. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** The number goes into a URL only as the 10 national digits of the French plan, encoded. */
export function frenchDigitsForUrl(digits: string | null): string | null {
  return digits !== null && /^0\d{9}$/.test(digits) ? encodeURIComponent(digits) : null;
}

/** An exception escaped the fetcher or parser (a bug): keep it a value, classified by the signal. */
export function outcomeOfUnexpectedError<T>(signal: AbortSignal): SourceOutcome<T> {
  if (!signal.aborted) return failed('connection');
  const reason: unknown = signal.reason;
  return failed(reason instanceof Error && reason.name === 'TimeoutError' ? 'timeout' : 'aborted');
}
