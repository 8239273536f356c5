// The admin API of the operator's lists (routes/admin-routes.ts, docs/lists.md): its rule, body
// and parameter schemas, its problem answers, and one complete route schema per operation. The
// limits are the ones the code applies, built from their constants: the domain's (rules.ts,
// which checkRule applies), the store's (MAX_RULES) and the route group's own body limits.
import { Type } from '@sinclair/typebox';
import { EXPORT_COLUMNS } from '../../domain/lists/list-csv.js';
import { LABEL_MAX_LENGTH, LIST_NAMES, NOTE_MAX_LENGTH } from '../../domain/lists/rules.js';
import { DISPLAY_UNSAFE_SYNTAX } from '../../domain/display-line.js';
import { MAX_RULES } from '../../infra/lists/list-store.js';
import { TOKEN_LABEL_MAX_LENGTH } from '../../domain/reports/tokens.js';
import { CREDENTIAL_FAILURES_MAX, CREDENTIAL_FAILURES_WINDOW_S } from '../plugins/credential-failures.js';
import { RetryAfterHeader } from './headers.js';
import { problemExample, problemResponse, problemSchema } from './problems.js';

/** Largest PUT body (one rule's fields). */
export const ADMIN_JSON_MAX_BYTES = 4096;
/** Largest import: about 300,000 lines of typical rules. */
export const ADMIN_IMPORT_MAX_BYTES = 32 * 1024 * 1024;

const ListNameSchema = Type.Union(LIST_NAMES.map((name) => Type.Literal(name)));

const RuleSchema = Type.Object(
  {
    rule: Type.String({ description: 'E.164 number (`+33612345678`) or prefix ending in `*` (`+33162*`).' }),
    list: ListNameSchema,
    label: Type.Optional(Type.String({ maxLength: LABEL_MAX_LENGTH })),
    labelPublic: Type.Optional(
      Type.Boolean({
        description:
          'Present (true) when the label may be shown to anyone; absent, only a RATE_LIMIT_EXEMPT address sees it on `/verdict?cid` and `/cid`.',
      }),
    ),
    note: Type.Optional(Type.String()),
    createdAt: Type.String({ description: 'ISO 8601' }),
    expiresAt: Type.Optional(Type.String({ description: 'ISO 8601; the rule no longer applies from then on.' })),
  },
  { additionalProperties: false },
);

const PutBodySchema = Type.Object(
  {
    list: ListNameSchema,
    label: Type.Optional(
      Type.String({
        maxLength: LABEL_MAX_LENGTH,
        description: `Shown on \`/cid\`; no control characters nor \`${DISPLAY_UNSAFE_SYNTAX}\`.`,
      }),
    ),
    labelPublic: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Show the label to anyone: `meta.list` of the JSON answers and `/cid`. False (the default): labels are often people’s names, so only `/verdict?cid` and `/cid` answered to a RATE_LIMIT_EXEMPT address (a PBX) show it.',
      }),
    ),
    note: Type.Optional(Type.String({ maxLength: NOTE_MAX_LENGTH })),
    expiresAt: Type.Optional(Type.String({ description: 'ISO 8601, in the future.' })),
    force: Type.Optional(Type.Boolean({ description: 'Accept a prefix shorter than a country calling code (`+3*`).' })),
  },
  { additionalProperties: false },
);

const RuleParamSchema = Type.Object({
  rule: Type.String({ description: 'The rule, percent-encoded: `%2B33162%2A` for `+33162*`.' }),
});

/** The problem answers of the admin routes, by status. */
function adminProblemResponses(): Record<number, unknown> {
  return {
    400: problemResponse(
      'Bad input, refused with nothing changed: `field` names what is wrong (`rule`, `list`, `label`, `note`, `expiresAt`, `body`, or `header` of an import), `line` the import’s line.',
      problemSchema(['bad_request'], '', {
        field: Type.Optional(Type.String()),
        line: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
      problemExample('bad_request', 'label: a label may not hold control characters', { field: 'label' }),
      {},
    ),
    401: problemResponse(
      'No `Authorization: Bearer <ADMIN_TOKEN>`, a wrong token, or a token sent in the URL. Counts against the client’s rate limit; a wrong token also against the limit on failed credentials (every client, RATE_LIMIT_EXEMPT included).',
      problemSchema(['unauthorized'], ''),
      problemExample('unauthorized', 'The admin token is not valid.'),
      {
        'WWW-Authenticate': {
          schema: { type: 'string' },
          description: 'Bearer realm="phone-rep admin"',
          'x-required': true,
        },
      },
    ),
    404: problemResponse(
      'No such rule (DELETE).',
      problemSchema(['rule_not_found'], '', { field: Type.Optional(Type.String()) }),
      problemExample('rule_not_found', 'There is no such rule.', { field: 'rule' }),
      {},
    ),
    429: problemResponse(
      `Too many failed attempts from this client in the window: the rate limit, or ${CREDENTIAL_FAILURES_MAX} wrong tokens in ${CREDENTIAL_FAILURES_WINDOW_S} s (every client, RATE_LIMIT_EXEMPT included; then even the right token is refused until Retry-After).`,
      problemSchema(['too_many_requests'], ''),
      problemExample('too_many_requests', 'At most 30 requests per 60 s; retry later.'),
      { 'Retry-After': { ...RetryAfterHeader, 'x-required': true } },
    ),
    413: problemResponse(
      `The import would take the lists past what they may hold (${MAX_RULES.toLocaleString('en')} rules) or past the heap left (import only).`,
      problemSchema(['lists_too_large'], '', { field: Type.Optional(Type.String()) }),
      problemExample(
        'lists_too_large',
        `the import holds up to 1300000 rules; an import brings at most ${MAX_RULES} (split it, or use fewer, broader prefix rules)`,
        { field: 'body' },
      ),
      {},
    ),
    503: problemResponse(
      'The lists’ store cannot be written (Redis unreachable, the file locked or not writable, a Redis failover under way): nothing changed; retry after Retry-After.',
      problemSchema(['lists_unavailable'], ''),
      problemExample('lists_unavailable'),
      { 'Retry-After': { ...RetryAfterHeader, 'x-required': true } },
    ),
  };
}

const { 404: ruleNotFound, 413: listsTooLarge, ...problems } = adminProblemResponses();
const tags = ['admin'];
const security = [{ adminToken: [] }];
const PutAnswerSchema = () => Type.Object({ rule: RuleSchema, replaced: Type.Boolean() });

// ---- One complete route schema per operation

export const adminRouteSchemas = {
  rules: {
    tags,
    security,
    summary: 'Every rule of the operator’s lists (expired ones included)',
    response: { 200: Type.Array(RuleSchema), ...problems },
  },
  putRule: {
    tags,
    security,
    summary: 'Adds a rule, or replaces the one with the same spelling',
    description:
      'The rule is percent-encoded in the path (`%2B33162%2A` for `+33162*`). 201 when added, 200 when it replaced a rule (`replaced: true`).',
    params: RuleParamSchema,
    body: PutBodySchema,
    response: { 200: PutAnswerSchema(), 201: PutAnswerSchema(), ...problems },
  },
  removeRule: {
    tags,
    security,
    summary: 'Removes a rule',
    params: RuleParamSchema,
    response: { 204: Type.Null(), 404: ruleNotFound, ...problems },
  },
  importRules: {
    tags,
    security,
    summary: 'Imports rules from CSV, all or nothing',
    description: `\`text/csv\` with the header \`${EXPORT_COLUMNS.join(',')}\`, at most ${ADMIN_IMPORT_MAX_BYTES} bytes. One bad line refuses the whole file: the 400 names the line (\`line\`), the field and the reason. Rules with the spelling of an existing one replace it. An import that would take the lists past ${MAX_RULES} rules, or past the heap left, is a 413 before any line is read.`,
    response: {
      200: Type.Object({ added: Type.Integer(), replaced: Type.Integer() }),
      413: listsTooLarge,
      ...problems,
    },
  },
  exportRules: {
    tags,
    security,
    summary: 'The rules in force as CSV (the import’s format)',
    produces: ['text/csv'],
    response: { 200: Type.String(), ...problems },
  },
} as const;

// ---- The reporters' tokens (routes/admin-token-routes.ts, docs/reports.md "Tokens")

const TokenIdSchema = Type.String({ description: 'The token’s public id: `tok_` and 10 lowercase hex digits.' });

const TokenSchema = Type.Object(
  {
    id: TokenIdSchema,
    label: Type.String({ description: 'What the token is for (a phone, a PBX, a CRM).' }),
    createdAt: Type.String({ description: 'ISO 8601' }),
    expiresAt: Type.Optional(Type.String({ description: 'ISO 8601; refused from then on.' })),
    lastUsedAt: Type.Optional(Type.String({ description: 'ISO 8601, rounded down to the hour.' })),
    revokedAt: Type.Optional(Type.String({ description: 'ISO 8601; refused from then on.' })),
  },
  { additionalProperties: false, description: 'A reporter’s token as kept: never its secret nor its hash.' },
);

const CreatedTokenSchema = Type.Object(
  {
    ...TokenSchema.properties,
    token: Type.String({
      description:
        'The secret (`prt_` and 43 base64url characters), for `Authorization: Bearer`: answered this once, never again (only its hash is kept).',
    }),
  },
  { additionalProperties: false },
);

const CreateTokenBodySchema = Type.Object(
  {
    label: Type.String({
      minLength: 1,
      maxLength: TOKEN_LABEL_MAX_LENGTH,
      description: `1 to ${TOKEN_LABEL_MAX_LENGTH} characters (trimmed), no control characters.`,
    }),
    expiresAt: Type.Optional(Type.String({ description: 'ISO 8601 date or time, in the future.' })),
  },
  { additionalProperties: false },
);

function tokenProblemResponses(): Record<number, unknown> {
  return {
    400: problemResponse(
      'Bad input, refused with nothing changed: `field` names what is wrong (`label`, `expiresAt`, `id`, `body`).',
      problemSchema(['bad_request'], '', { field: Type.Optional(Type.String()) }),
      problemExample('bad_request', 'expiresAt: 2001-01-01 is in the past', { field: 'expiresAt' }),
      {},
    ),
    404: problemResponse(
      'No such token (DELETE).',
      problemSchema(['token_not_found'], '', { field: Type.Optional(Type.String()) }),
      problemExample('token_not_found', 'There is no such token.', { field: 'id' }),
      {},
    ),
    503: problemResponse(
      'The tokens’ store cannot be read or written (Redis unreachable, the file locked or not writable, a Redis failover under way): nothing changed; retry after Retry-After.',
      problemSchema(['tokens_unavailable'], ''),
      problemExample('tokens_unavailable'),
      { 'Retry-After': { ...RetryAfterHeader, 'x-required': true } },
    ),
  };
}

const { 400: tokenBadRequest, 404: tokenNotFound, 503: tokensUnavailable } = tokenProblemResponses();
const { 401: unauthorizedProblem, 429: tooManyProblem } = problems;
const tokenProblems = { 400: tokenBadRequest, 401: unauthorizedProblem, 429: tooManyProblem, 503: tokensUnavailable };

export const adminTokenRouteSchemas = {
  listTokens: {
    tags,
    security,
    summary: 'Every reporter’s token (revoked and expired ones included), never a secret',
    response: { 200: Type.Array(TokenSchema), ...tokenProblems },
  },
  createToken: {
    tags,
    security,
    summary: 'Creates a reporter’s token; its secret is answered this once',
    description:
      'One token per phone, PBX or CRM. The answer holds the record and `token`, the secret to put in `Authorization: Bearer`; only its SHA-256 is kept, so it cannot be shown again. Every instance accepts it within a second.',
    body: CreateTokenBodySchema,
    response: { 201: CreatedTokenSchema, ...tokenProblems },
  },
  revokeToken: {
    tags,
    security,
    summary: 'Revokes a reporter’s token: refused (401) from now on, on every instance within a second',
    description:
      'The record stays, with `revokedAt`, for the listing. Revoking a revoked token is a 204 and keeps the first `revokedAt`.',
    params: Type.Object({ id: TokenIdSchema }),
    response: { 204: Type.Null(), 404: tokenNotFound, ...tokenProblems },
  },
} as const;
