// The closed set of error answers. Every error leaves the service as
// application/problem+json (RFC 9457) that also carries the envelope style
// (`success: false`, `error`), with the spec's exact message texts.
import type { PhoneNumberRejection } from '../domain/numbering/parse-phone-number.js';

export const ERROR_CODES = {
  invalid_number: { status: 400, title: 'Invalid phone number format' },
  bad_request: { status: 400, title: 'Bad request' },
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Forbidden' },
  route_not_found: { status: 404, title: 'Route not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  too_many_requests: { status: 429, title: 'Too many requests' },
  all_sources_failed: { status: 502, title: 'All data sources failed' },
  overloaded: { status: 503, title: 'Service overloaded' },
  shutting_down: { status: 503, title: 'Service unavailable' },
  internal: { status: 500, title: 'Internal server error' },
  // The admin API of the operator's lists (docs/lists.md).
  rule_not_found: { status: 404, title: 'Rule not found' },
  lists_unavailable: { status: 503, title: 'Lists unavailable' },
  // The blocklist feed while its rebuild fails (docs/integrations/blocklist-feed.md).
  feed_unavailable: { status: 503, title: 'Feed unavailable' },
  lists_too_large: { status: 413, title: 'Lists too large' },
  // The report routes (docs/reports.md, "Reporting"): a body over its cap, the reports' store down.
  content_too_large: { status: 413, title: 'Content too large' },
  reports_unavailable: { status: 503, title: 'Reports unavailable' },
  // The admin API of the reporters' tokens (docs/reports.md, "Tokens").
  token_not_found: { status: 404, title: 'Token not found' },
  tokens_unavailable: { status: 503, title: 'Tokens unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Retry-After of a 503 when a store of record cannot be written (Redis down or failing over): the
 * change was not made, and a Sentinel failover ends within seconds (docs/operations.md).
 */
export const STORE_RETRY_AFTER_S = 5;

/** The 503 of the lists', the reports' or the tokens' store: nothing was written; retry after STORE_RETRY_AFTER_S. */
export function storeUnavailable(
  code: 'lists_unavailable' | 'reports_unavailable' | 'tokens_unavailable',
  detail: string,
): ApiError {
  return new ApiError(code, detail, undefined, { 'Retry-After': String(STORE_RETRY_AFTER_S) });
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ErrorCode,
    /** Safe for clients: never holds a phone number, an upstream body or an internal message. */
    readonly detail?: string,
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(ERROR_CODES[code].title);
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  requestId: string;
  success: false;
  error: string;
  [extra: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function problemBody(
  code: ErrorCode,
  requestId: string,
  detail?: string,
  extra?: Record<string, unknown>,
): ProblemBody {
  const { status, title } = ERROR_CODES[code];
  return {
    type: `/problems/${code.replaceAll('_', '-')}`,
    title,
    status,
    ...(detail === undefined ? {} : { detail }),
    requestId,
    success: false,
    error: title,
    ...extra,
  };
}

/**
 * The `detail` of a 400 for each reason the parser gives: a sentence a person can act on. The
 * reason itself travels as the problem's `code` member, for programs.
 */
export const INVALID_NUMBER_DETAILS: Readonly<Record<PhoneNumberRejection, string>> = {
  empty: 'The number is empty.',
  too_long: 'The number is longer than 32 characters, or the tel: or sip: URI holding it longer than 256.',
  invalid_character:
    'The number contains a character other than digits, spaces, dots, dashes, parentheses and a leading +.',
  misplaced_separator: 'A space, dot, dash or parenthesis is out of place: put at most one between two digits.',
  no_digits: 'The number contains no digit.',
  invalid_uri:
    'The tel: or sip: URI is malformed: a sip: URI needs a user part and a host (sip:+33612345678@host), and a parameter is written ;name or ;name=value.',
  wrong_calling_code:
    'These digits are a French-plan number of another territory: use +33 for mainland France, +262 La Réunion and Mayotte, +590 Guadeloupe, +594 Guyane, +596 Martinique, +508 Saint-Pierre-et-Miquelon, or the national form 0XXXXXXXXX.',
  invalid_number: 'These digits are not a valid phone number: check that none is missing or extra.',
  withheld:
    'The caller withheld their number (anonymous, restricted, unknown, unavailable, private or withheld): there is no number to look up.',
};

function isPhoneNumberRejection(reason: string): reason is PhoneNumberRejection {
  return Object.hasOwn(INVALID_NUMBER_DETAILS, reason);
}

/** The 400 for a number the parser refused: a sentence in `detail`, the parser's code in `code`. */
export function invalidNumberError(reason: string, extra: Record<string, unknown> = {}): ApiError {
  const code: PhoneNumberRejection = isPhoneNumberRejection(reason) ? reason : 'invalid_number';
  return new ApiError('invalid_number', INVALID_NUMBER_DETAILS[code], { code, ...extra });
}

/** Whether a request announces a body (read or not, it is there on the connection). */
export function announcesBody(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A complete problem+json HTTP/1.1 answer for the places Fastify never sees (Node's parser
 * errors, unsupported expectations): the connection is closed after it.
 */
export function rawProblemResponse(
  code: ErrorCode,
  requestId: string,
  detail?: string,
  headers: Record<string, string> = {},
): string {
  const { status, title } = ERROR_CODES[code];
  const body = JSON.stringify(problemBody(code, requestId, detail));
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Request-Id: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`;
}
