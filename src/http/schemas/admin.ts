// The admin API of the operator's lists (routes/admin-routes.ts).
import { Type } from '@sinclair/typebox';
import { RetryAfterHeader } from './headers.js';
import { problemExample, problemResponse, problemSchema } from './problems.js';

/** The problem answers of the admin routes, by status. */
export function adminProblemResponses(): Record<number, unknown> {
  return {
    400: problemResponse(
      'Bad input, refused with nothing changed: `field` names what is wrong (`rule`, `list`, `label`, `note`, `expiresAt`, `body`, or `header` of an import), `line` the import’s line.',
      problemSchema(['bad_request'], '', { field: Type.Optional(Type.String()), line: Type.Optional(Type.Integer({ minimum: 1 })) }),
      problemExample('bad_request', 'label: a label may not hold control characters', { field: 'label' }),
      {},
    ),
    401: problemResponse(
      'No `Authorization: Bearer <ADMIN_TOKEN>`, a wrong token, or a token sent in the URL. Counts against the client’s rate limit; a wrong token also against the limit on failed credentials (every client, RATE_LIMIT_EXEMPT included).',
      problemSchema(['unauthorized'], ''),
      problemExample('unauthorized', 'The admin token is not valid.'),
      { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer realm="phone-rep admin"', 'x-required': true } },
    ),
    404: problemResponse('No such rule (DELETE).', problemSchema(['rule_not_found'], '', { field: Type.Optional(Type.String()) }), problemExample('rule_not_found', 'There is no such rule.', { field: 'rule' }), {}),
    429: problemResponse(
      'Too many failed attempts from this client in the window: the rate limit, or 10 wrong tokens in 60 s (every client, RATE_LIMIT_EXEMPT included; then even the right token is refused until Retry-After).',
      problemSchema(['too_many_requests'], ''),
      problemExample('too_many_requests', 'At most 30 requests per 60 s; retry later.'),
      { 'Retry-After': { ...RetryAfterHeader, 'x-required': true } },
    ),
    413: problemResponse('The import would take the lists past what they may hold (200,000 rules) or past the heap left (import only).', problemSchema(['lists_too_large'], '', { field: Type.Optional(Type.String()) }), problemExample('lists_too_large', 'the import holds up to 1300000 rules; an import brings at most 200000 (split it, or use fewer, broader prefix rules)', { field: 'body' }), {}),
    503: problemResponse('The lists’ store cannot be written (Redis unreachable, the file locked or not writable).', problemSchema(['lists_unavailable'], ''), problemExample('lists_unavailable'), {}),
  };
}
