// The closed set of error answers. Every error leaves the service as
// application/problem+json (RFC 9457) that also carries the envelope style
// (`success: false`, `error`), with the spec's exact message texts.

export const ERROR_CODES = {
  invalid_number: { status: 400, title: 'Invalid phone number format' },
  bad_request: { status: 400, title: 'Bad request' },
  route_not_found: { status: 404, title: 'Route not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  too_many_requests: { status: 429, title: 'Too many requests' },
  all_sources_failed: { status: 502, title: 'All data sources failed' },
  overloaded: { status: 503, title: 'Service overloaded' },
  shutting_down: { status: 503, title: 'Service unavailable' },
  internal: { status: 500, title: 'Internal server error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

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

export function problemBody(code: ErrorCode, requestId: string, detail?: string, extra?: Record<string, unknown>): ProblemBody {
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
