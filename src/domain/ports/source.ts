// The one interface every upstream adapter implements, and the four outcomes a fetch can end in.
// Failures are values: a source never throws to its caller and never returns zeros for a page
// it could not read.
import type { ParsedPhoneNumber } from '../phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../report.js';

export type SourceOutcome<T> =
  | { status: 'ok'; data: T }
  | { status: 'not_found' }
  | { status: 'blocked'; reason: BlockedReason; retryAfterMs?: number; cause?: FailureCause }
  | { status: 'error'; reason: ErrorReason; cause?: FailureCause; missing?: readonly string[] };

export type SourceStatus = (typeof SOURCE_STATUSES)[number];

export interface Source<S extends SourceSlot = SourceSlot> {
  readonly slot: S;
  /** Upstream name used in logs, metrics and readiness (`tellows`, `numeroinconnu`, `telguarder`). */
  readonly name: string;
  lookup(
    number: ParsedPhoneNumber,
    signal: AbortSignal,
    call?: SourceCall,
  ): Promise<SourceOutcome<SourceDataBySlot[S]>>;
  /**
   * Whether the upstream can be asked about this number under this configuration (its
   * country coverage, a key its path needs). The engine asks it before any cache or policy:
   * a number it does not cover is `skipped`, never looked up. Absent: covers every number.
   */
  covers?(number: ParsedPhoneNumber): boolean;
}

/** The API client a lookup is made for: a keyed hash of its address (never the address), and whether it is rate-limit exempt. */
export interface LookupClient {
  key: string;
  exempt: boolean;
}

/** What the engine tells a source about one call, for its fetchers: who it is for, and its deadline. */
export interface SourceCall {
  /** The client whose lookup started the fetch (fair queueing, its share of the budget); absent for the service's own. */
  client?: LookupClient;
  /** Epoch ms (Date.now clock) at which the source deadline passes. */
  deadlineAt?: number;
}

export type SourcesBySlot = { [S in SourceSlot]: Source<S> };

export const ok = <T>(data: T): SourceOutcome<T> => ({ status: 'ok', data });
export const notFound = <T>(): SourceOutcome<T> => ({ status: 'not_found' });
export const blocked = <T>(reason: BlockedReason, retryAfterMs?: number, cause?: FailureCause): SourceOutcome<T> => ({
  status: 'blocked',
  reason,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  ...(cause === undefined ? {} : { cause }),
});
/**
 * `detail`: the finer cause when the reason alone does not say it (a refused connection, a 503),
 * and the markers a page lacked.
 */
export const failed = <T>(
  reason: ErrorReason,
  detail: { cause?: FailureCause; missing?: readonly string[] } = {},
): SourceOutcome<T> => ({
  status: 'error',
  reason,
  ...(detail.cause === undefined ? {} : { cause: detail.cause }),
  ...(detail.missing === undefined ? {} : { missing: detail.missing }),
});

/** The four statuses a source's answer can have (a lookup's slot has two more: lookup/types.ts). */
export const SOURCE_STATUSES = ['ok', 'not_found', 'blocked', 'error'] as const;

/** Why a fetch ended `error(...)`. Retry policies key on it (only `connection` and `http_5xx` are retried). */
export const ERROR_REASONS = [
  'timeout', // deadline passed (per source or whole lookup)
  'connection', // refused, reset, DNS, socket closed mid-body
  'http_5xx', // upstream answered 5xx
  'http_status', // another unexpected status
  'too_large', // decoded body over the cap
  'redirect', // redirect to another host, or too many redirects
  'decoding', // bad content encoding or charset
  'invalid_json', // body is not the JSON expected
  'parse', // page recognised as the upstream's but a required marker is missing or malformed
  'auth', // the partner API refused our key
  'circuit_open', // breaker open after consecutive failures
  'aborted', // cancelled by the caller
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** Why a fetch ended `blocked(...)`: the upstream refused us, or we held back. */
export const BLOCKED_REASONS = [
  'http_403',
  'http_429',
  'challenge', // a 200 page without the markers: captcha or interstitial
  'paused', // we are pausing this upstream after a 403/429
  'budget', // the per-minute request budget (or this client's share of it) had no slot in time: nothing sent
  'queue', // no slot among the requests this service lets in flight to the upstream in time: nothing sent
] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

/**
 * The closed vocabulary of `reason` values: `meta` and the 502 body show it, metrics count it,
 * a stale cache entry remembers it.
 */
export const FAILURE_REASONS = [...ERROR_REASONS, ...BLOCKED_REASONS] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

const FAILURE_REASON_SET: ReadonlySet<string> = new Set(FAILURE_REASONS);
export const isFailureReason = (value: unknown): value is FailureReason =>
  typeof value === 'string' && FAILURE_REASON_SET.has(value);

export const RETRYABLE_REASONS: ReadonlySet<FailureReason> = new Set<FailureReason>(['connection', 'http_5xx']);

/**
 * Why a fetch failed, finer than its `reason`: what an operator reads in the log, in
 * `meta.sources.<slot>.cause` and in readiness (docs/reliability.md#why-a-source-fails).
 * The transport's own: `dns` (the name did not resolve), `refused`, `reset` (the connection
 * closed under us), `tls` (handshake or certificate), `timeout`; the site's answer: `http_<status>`,
 * `blocked` (a 403 or a challenge page), `layout` (a page without the markers the parser needs);
 * this service holding back: `budget`, `queue`, `paused`, `breaker`. The rest name themselves.
 * `http_5xx` and `http_status` stand for a status no longer known (a stale entry's last failure).
 */
export const FAILURE_CAUSES = [
  'dns',
  'refused',
  'reset',
  'tls',
  'timeout',
  'connection', // another transport failure (unreachable network, a URL that cannot be asked)
  'blocked',
  'layout',
  'budget',
  'queue',
  'paused',
  'breaker',
  'too_large',
  'redirect',
  'decoding',
  'invalid_json',
  'auth',
  'aborted',
  'http_5xx',
  'http_status',
] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number] | `http_${number}`;

/** A cause as the published schemas accept it: one of FAILURE_CAUSES, or `http_` and a status. */
export const FAILURE_CAUSE_PATTERN = `^(${FAILURE_CAUSES.join('|')}|http_[1-5][0-9][0-9])$`;

/** The cause a reason stands for when nothing finer was recorded. */
const CAUSE_OF_REASON: Record<FailureReason, FailureCause> = {
  timeout: 'timeout',
  connection: 'connection',
  http_5xx: 'http_5xx',
  http_status: 'http_status',
  too_large: 'too_large',
  redirect: 'redirect',
  decoding: 'decoding',
  invalid_json: 'invalid_json',
  parse: 'layout',
  auth: 'auth',
  circuit_open: 'breaker',
  aborted: 'aborted',
  http_403: 'blocked',
  http_429: 'http_429',
  challenge: 'blocked',
  paused: 'paused',
  budget: 'budget',
  queue: 'queue',
};

/** The cause of a failure: the one recorded with it, else the one its reason stands for. */
export function causeOf(failure: { reason: FailureReason; cause?: FailureCause }): FailureCause {
  return failure.cause ?? CAUSE_OF_REASON[failure.reason];
}
