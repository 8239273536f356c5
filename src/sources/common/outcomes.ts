// Small pieces every HTML adapter shares: the base-URL join and the last-resort classification
// of an unexpected exception, so that a source never throws to its caller.
import { blocked, failed, notFound, ok } from '../../domain/ports/source.js';
import type { SourceCall, SourceOutcome } from '../../domain/ports/source.js';
import type { FetchFailure, HttpRequest, HttpResponse, UpstreamFetcher } from '../../infra/http/types.js';

/** The parts of the engine's call a fetcher uses: the client and the deadline. */
export function fetchCallOf(call: SourceCall | undefined): Pick<HttpRequest, 'client' | 'deadlineAt'> {
  if (call === undefined) return {};
  return {
    ...(call.client === undefined ? {} : { client: call.client }),
    ...(call.deadlineAt === undefined ? {} : { deadlineAt: call.deadlineAt }),
  };
}

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

/** What every page parser answers: the page read, the upstream's "unknown", a challenge, or a page it cannot read. */
export type PageParseResult<T> =
  { kind: 'ok'; data: T } | { kind: 'not_found' } | { kind: 'challenge' } | { kind: 'invalid'; reason?: string };

/** The marker a parser reports, not found, when a page passed the parse-work bound (html.ts, parsePage). */
export const WITHIN_PARSE_BOUND_MARKER = 'page within the parse-work bound (MAX_PAGE_NODES)';

/** The one mapping from a parsed page to an outcome: a challenge is `blocked`, an unreadable page `error(parse)`. */
export function outcomeOfPage<T>(parsed: PageParseResult<T>): SourceOutcome<T> {
  switch (parsed.kind) {
    case 'ok':
      return ok(parsed.data);
    case 'not_found':
      return notFound();
    case 'challenge':
      return blocked('challenge');
    case 'invalid':
      return failed('parse');
  }
}

/** The fetcher's failure as the source's outcome: same status and reason, the pause carried along. */
export function outcomeOfFetchFailure<T>(failure: FetchFailure): SourceOutcome<T> {
  if (failure.kind === 'blocked') return blocked(failure.reason, failure.retryAfterMs);
  return failure.cause === undefined ? failed(failure.reason) : failed(failure.reason, { cause: failure.cause });
}

export type FetchedPage =
  { kind: 'response'; response: HttpResponse } | { kind: 'outcome'; outcome: SourceOutcome<never> };

/**
 * Fetches through the upstream's fetcher and judges the status every adapter judges alike:
 * 404/410 say the site does not know the number; any other non-2xx is unexpected.
 */
export async function fetchUpstreamPage(fetcher: UpstreamFetcher, request: HttpRequest): Promise<FetchedPage> {
  const result = await fetcher.fetch(request);
  if (result.kind === 'failure') return { kind: 'outcome', outcome: outcomeOfFetchFailure(result.failure) };
  const { status } = result.response;
  if (status === 404 || status === 410) return { kind: 'outcome', outcome: notFound() };
  if (status < 200 || status > 299) {
    return { kind: 'outcome', outcome: failed('http_status', { cause: `http_${status}` }) };
  }
  return result;
}
