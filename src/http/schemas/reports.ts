// The report routes' schemas (routes/report-routes.ts, docs/reports.md "Reporting"): the body a
// reporter sends, the answer, and every problem answer, one complete route schema per operation.
// The body schema is published, not run: the body is read from its raw bytes by
// domain/reports/report-body.ts (SpamBlocker's JSON arrives labelled as a form, and sometimes
// broken by its comment), which names the wrong field itself.
import { Type } from '@sinclair/typebox';
import { REPORT_RATINGS } from '../../domain/ports/caller-reports.js';
import { PHONE_NUMBER_REJECTIONS } from '../../domain/numbering/parse-phone-number.js';
import { COMMENT_MAX_LENGTH } from '../../domain/reports/comment.js';
import { PHONEBLOCK_RATINGS, RATING_SPELLINGS, SPAMBLOCKER_RATINGS } from '../../domain/reports/ratings.js';
import { REPORT_BODY_MAX_BYTES } from '../../domain/reports/report-body.js';
import { CREDENTIAL_FAILURES_MAX, CREDENTIAL_FAILURES_WINDOW_S } from '../plugins/credential-failures.js';
import { jsonResponse } from './common.js';
import { NoStoreHeader, rateLimited, RequestIdHeader, RetryAfterHeader } from './headers.js';
import { problemExample, problemResponse, problemSchema } from './problems.js';

/** The security scheme of the report routes (plugins/openapi.ts declares it). */
export const REPORTER_TOKEN_SCHEME = 'reporterToken';

const tableOf = (table: Readonly<Record<string, string>>): string =>
  Object.entries(table)
    .map(([spelling, rating]) => `\`${spelling}\` → \`${rating}\``)
    .join(', ');

const RATING_DESCRIPTION = `What the caller was. Any of: this service's ratings (${REPORT_RATINGS.map((rating) => `\`${rating}\``).join(', ')}); SpamBlocker's tags (${tableOf(SPAMBLOCKER_RATINGS)}); PhoneBlock's codes (${tableOf(PHONEBLOCK_RATINGS)}). Case and surrounding spaces are ignored.`;

const ReportBodySchema = Type.Object(
  {
    phone: Type.String({
      description:
        'The number reported, in any spelling the phone routes accept: `+33612345678`, PhoneBlock’s `0033612345678`, `0612345678`…',
      examples: ['+33612345678'],
    }),
    rating: Type.String({ description: RATING_DESCRIPTION, examples: ['fraud'] }),
    comment: Type.Optional(
      Type.String({
        description: `Kept cleaned: white space folded, control characters and the characters refused on \`/cid\` removed, cut to ${COMMENT_MAX_LENGTH} characters. A comment that broke the JSON body (SpamBlocker puts it in unescaped) is dropped, and the report still recorded.`,
      }),
    ),
  },
  { additionalProperties: true },
);

const REPORT_BODY_EXAMPLE = { phone: '+33612345678', rating: 'fraud', comment: 'Faux conseiller bancaire' };

const requestBody = {
  description: `The report, at most ${REPORT_BODY_MAX_BYTES} bytes, read whatever the Content-Type says: JSON (also labelled \`application/x-www-form-urlencoded\`, as SpamBlocker sends it), or a form \`phone=…&rating=…&comment=…\`.`,
  content: {
    'application/json': { schema: ReportBodySchema, example: REPORT_BODY_EXAMPLE },
    'application/x-www-form-urlencoded': { schema: ReportBodySchema, example: REPORT_BODY_EXAMPLE },
  },
};

const RecordedSchema = Type.Object(
  {
    ok: Type.Literal(true),
    replaced: Type.Boolean({
      description: 'True when this token had a vote on the number already, which this one replaced.',
    }),
  },
  { additionalProperties: false },
);

const NoStore = { 'Cache-Control': { ...NoStoreHeader, 'x-required': true } };

const AllowPostHeader = {
  type: 'string',
  const: 'OPTIONS, POST',
  description: 'The methods this path answers.',
  'x-required': true,
};
const AllowGetHeader = {
  type: 'string',
  const: 'GET, HEAD, OPTIONS',
  description: 'The methods this path answers.',
  'x-required': true,
};

const WwwAuthenticateHeader = {
  'WWW-Authenticate': {
    type: 'string',
    description: 'Bearer realm="phone-rep reports"',
    'x-required': true,
  },
};

const unauthorized = problemResponse(
  'Refused, nothing changed. `code` says why: `reporting_off` while no token is in force (reporting is off until the operator creates one: `phone-rep token create`); `missing_token` without `Authorization: Bearer <token>`; `invalid_token` for a token that is unknown, expired or revoked (never told apart). A wrong token also counts against the limit on failed credentials.',
  problemSchema(['unauthorized'], '', {
    code: Type.Union([Type.Literal('reporting_off'), Type.Literal('missing_token'), Type.Literal('invalid_token')]),
  }),
  problemExample('unauthorized', 'This token is unknown, expired or revoked.', { code: 'invalid_token' }),
  { ...rateLimited, ...WwwAuthenticateHeader },
);

const badReport = problemResponse(
  'The report is refused, nothing changed. An invalid or withheld number is `invalid_number` with the parser’s `code` (as on the phone routes); any other fault is `bad_request` with `field`: `body` (empty, unreadable, neither JSON nor a form), `phone` (missing), `rating` (missing or unknown: the detail lists every accepted value) or `comment` (not a string).',
  problemSchema(['invalid_number', 'bad_request'], '', {
    code: Type.Optional(
      Type.Union(
        PHONE_NUMBER_REJECTIONS.map((reason) => Type.Literal(reason)),
        { description: 'With invalid_number: why the parser refused `phone`.' },
      ),
    ),
    field: Type.Optional(
      Type.Union([Type.Literal('body'), Type.Literal('phone'), Type.Literal('rating'), Type.Literal('comment')]),
    ),
  }),
  problemExample('bad_request', `rating: rating is unknown: one of ${RATING_SPELLINGS.join(', ')}`, {
    field: 'rating',
  }),
  rateLimited,
);

const tooLarge = problemResponse(
  `The body is over ${REPORT_BODY_MAX_BYTES} bytes: refused before the rest is read, nothing changed.`,
  problemSchema(['content_too_large'], '', { field: Type.Literal('body') }),
  problemExample('content_too_large', `The body is over ${REPORT_BODY_MAX_BYTES} bytes.`, { field: 'body' }),
  rateLimited,
);

const tooMany = problemResponse(
  `Too many requests: the client’s rate limit; or ${CREDENTIAL_FAILURES_MAX} wrong tokens from this client in ${CREDENTIAL_FAILURES_WINDOW_S} s (then even a right one waits for Retry-After); or, with \`code: token_day_cap\`, this token used up REPORT_MAX_PER_TOKEN_DAY reports for the current UTC day (Retry-After: until midnight UTC). Nothing changed.`,
  problemSchema(['too_many_requests'], '', { code: Type.Optional(Type.Literal('token_day_cap')) }),
  problemExample('too_many_requests', 'This token sent its 100 reports for today; retry after midnight UTC.', {
    code: 'token_day_cap',
  }),
  { ...rateLimited, 'Retry-After': { ...RetryAfterHeader, 'x-required': true } },
);

const unavailable = problemResponse(
  'The reports’ store cannot be written or read (Redis unreachable, the file not writable): nothing changed, retry later. Also load shedding and shutdown.',
  problemSchema(['reports_unavailable', 'overloaded', 'shutting_down'], ''),
  problemExample('reports_unavailable', 'The reports cannot be written now; retry later.'),
  { 'Retry-After': RetryAfterHeader },
);

const methodNotAllowed = (allow: object) =>
  problemResponse(
    'Another method than the path answers.',
    problemSchema(['method_not_allowed'], ''),
    problemExample('method_not_allowed', 'GET is not allowed here; use POST.'),
    { Allow: allow },
  );

const security = [{ [REPORTER_TOKEN_SCHEME]: [] }];
const tags = ['reports'];

const postReportSchema = (operationId: string, summary: string, description: string) => ({
  operationId,
  summary,
  description,
  tags,
  security,
  body: requestBody,
  response: {
    200: jsonResponse(
      'Recorded: the token’s vote on the number, replacing its earlier one.',
      RecordedSchema,
      { ok: true, replaced: false },
      { ...rateLimited, ...NoStore },
    ),
    400: badReport,
    401: unauthorized,
    405: methodNotAllowed(AllowPostHeader),
    413: tooLarge,
    429: tooMany,
    503: unavailable,
  },
});

// ---- One complete route schema per operation

export const reportRouteSchemas = {
  report: postReportSchema(
    'postReport',
    'Report a caller (a phone, a PBX, a CRM)',
    `One vote of the token on the number: the latest replaces the earlier (one vote per token and number). The body is \`{"phone", "rating", "comment"?}\` (see the body’s schema for every accepted rating). Reports become evidence in every answer on the number (docs/reports.md). 200 \`{"ok": true, "replaced"}\`; clients such as PhoneBlock’s check only for a 2xx. A withheld or invalid number is a 400 \`invalid_number\` with the parser’s \`code\`, as on the phone routes.`,
  ),
  rate: postReportSchema(
    'postRate',
    'Report a caller, PhoneBlock’s way',
    'The same route as `POST /api/report`, at the path PhoneBlock’s clients post to (`/api/rate`): the same fields (`phone`, `rating`, `comment`), PhoneBlock’s codes (`A_LEGITIMATE` … `G_FRAUD`) among the accepted ratings, and `00{cc}{domestic}` among the accepted spellings. Answers as `POST /api/report`.',
  ),
  test: {
    operationId: 'getReportTest',
    summary: 'Check a reporter’s setup: answers `ok` to a token in force',
    description:
      'PhoneBlock’s “is my setup working” check: `ok` in `text/plain` for a token in force, the report routes’ 401 otherwise. Records nothing.',
    tags,
    security,
    response: {
      200: {
        description: 'The token is in force.',
        headers: { 'X-Request-Id': RequestIdHeader, ...rateLimited, ...NoStore },
        content: { 'text/plain': { schema: Type.Literal('ok'), example: 'ok' } },
      },
      400: problemResponse(
        'The request is malformed (a body on GET, an over-long URL).',
        problemSchema(['bad_request'], ''),
        problemExample('bad_request', 'A GET request takes no body.'),
        {},
      ),
      401: unauthorized,
      405: methodNotAllowed(AllowGetHeader),
      429: tooMany,
      503: unavailable,
    },
  },
} as const;
