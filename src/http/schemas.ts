// One schema per shape: Fastify serialises with it (fast-json-stringify, which also drops any
// member not listed) and @fastify/swagger publishes it as OpenAPI 3.1. The phone routes'
// parameter and query schemas are published but not run: the number parser alone decides what a
// number's spelling is and why it is refused, and the handler reads `wait` and `lang`
// (DOCUMENTED_ONLY in routes/phone-routes.ts); what they say of a request is what those accept.
// Each operation has one complete route schema here (operationId, texts, parameters, every
// status it can answer with its content type, headers and an example), so route files only
// point at it and the published document is the wire, status by status.
import { Type, type SchemaOptions, type TLiteral, type TProperties, type TSchema, type TUnion } from '@sinclair/typebox';
import { HINTS } from '../domain/hints.js';
import { BREAKER_STATES } from '../domain/lookup/resilience.js';
import { CACHE_STATES, SKIP_REASONS } from '../domain/lookup/types.js';
import { FAILURE_REASONS, SOURCE_STATUSES } from '../domain/ports/source.js';
import { mapSlots, SOURCE_SLOTS, type SourceSlot } from '../domain/report.js';
import { SLOT_DISPLAY } from '../domain/slot-display.js';
import { PHONE_NUMBER_REJECTIONS, MAX_INPUT_LENGTH, MAX_URI_LENGTH, WITHHELD_WORDS } from '../domain/numbering/parse-phone-number.js';
import { ERROR_CODES, INVALID_NUMBER_DETAILS, problemBody, type ErrorCode } from './errors.js';

const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

/** The schema of a closed vocabulary, from the `as const` array that defines it. */
function literalUnion<const T extends readonly [string, ...string[]]>(values: T, options: SchemaOptions = {}): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
}

/**
 * A failure reason on the hot path (every report's `meta`): the same closed set, published as
 * a string `enum` so that serialising it is a plain string write, where a union of 17 literals
 * would make fast-json-stringify validate each value against each branch.
 */
const FailureReasonString = (description?: string) =>
  Type.Unsafe<(typeof FAILURE_REASONS)[number]>({ type: 'string', enum: [...FAILURE_REASONS], ...(description === undefined ? {} : { description }) });
const DateDMY = Type.String({ description: 'DD/MM/YYYY, or "" when unknown', examples: ['12/03/2024'] });

export const PhoneInfoSchema = Type.Object(
  {
    national: Type.String({ description: 'National format, digits grouped by spaces', examples: ['06 12 34 56 78'] }),
    e164: Type.String({ description: 'E.164 with leading +', examples: ['+33612345678'] }),
    type: Type.String({ description: "libphonenumber's line type in lower case (mobile, fixed_line, voip, toll_free…)", examples: ['mobile'] }),
    rangeLabel: Type.String({ description: 'What the range is, in French (ARCEP wording)', examples: ['Mobile'] }),
    originalCarrier: Type.String({ description: 'Operator the block was allocated to; "" when unknown' }),
    region: Type.String({ description: 'Territory, mainland zone or country name' }),
    isNPV: Type.Boolean({ description: 'True in a range reserved by ARCEP for automated calls and messages (NPV)' }),
  },
  { additionalProperties: false, description: 'What the number itself says, without any upstream' },
);

export const PrimarySchema = Type.Object(
  {
    score: Nullable(Type.Integer({ minimum: 1, maximum: 9 })),
    searches: Type.Integer({ minimum: 0 }),
    commentsCount: Type.Integer({ minimum: 0 }),
    commentList: Type.Array(
      Type.Object({ author: Type.String(), text: Type.String(), date: DateDMY, callerType: Type.String() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export const CommunitySchema = Type.Object(
  {
    dangerPercent: Nullable(Type.Number({ minimum: 0, maximum: 100 })),
    visits: Nullable(Type.Integer({ minimum: 0 })),
    commentsCount: Type.Integer({ minimum: 0 }),
    topCategory: Type.String(),
    lastCommentDate: DateDMY,
    commentList: Type.Array(Type.Object({ text: Type.String(), date: DateDMY, category: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const SignalsSchema = Type.Object(
  {
    spamScore: Nullable(Type.Number({ minimum: 0, maximum: 100 })),
    reportsCount: Nullable(Type.Integer({ minimum: 0 })),
    callerType: Type.String(),
    commentList: Type.Array(Type.Object({ text: Type.String(), date: DateDMY, callerType: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const NumberSchema = Type.String({
  description: 'Normalised number: national digits for the French plan, E.164 otherwise',
  examples: ['0612345678'],
});

/**
 * Each slot's data schema. A mapped type over the slots, so a fourth slot does not compile until
 * it has its schema; each slot's description is its entry in the slot display table.
 */
const SOURCE_DATA_SCHEMAS: { readonly [S in SourceSlot]: TSchema } = { primary: PrimarySchema, community: CommunitySchema, signals: SignalsSchema };

const SourcesSchema = Type.Object(
  mapSlots<Record<SourceSlot, TSchema>>((slot) => Type.Unsafe({ ...SOURCE_DATA_SCHEMAS[slot], description: SLOT_DISPLAY[slot].summary })),
  { additionalProperties: false },
);

export const ReportSchema = Type.Object({ number: NumberSchema, phoneInfo: PhoneInfoSchema, sources: SourcesSchema }, { additionalProperties: false });

const ScoreValueSchema = Nullable(Type.Integer({ minimum: 1, maximum: 9, description: 'The 1–9 score: the primary source’s own, else derived from the others (docs/engine.md#the-score-rule-apiphonenumberscore); null when no source has one' }));
const RiskSchema = Type.Union([Type.Literal('trustworthy'), Type.Literal('neutral'), Type.Literal('suspicious'), Type.Literal('unknown')], {
  description: '1–4 trustworthy, 5 neutral, 6–9 suspicious, no score unknown',
});
const ScoreSourceSchema = Nullable(Type.Union([Type.Literal('primary'), Type.Literal('derived')], { description: 'Where the score came from; null exactly when the score is null' }));

export const ScoreSchema = Type.Object({ number: NumberSchema, score: ScoreValueSchema, risk: RiskSchema }, { additionalProperties: false });

export const NumberFactsSchema = Type.Object({ number: NumberSchema, phoneInfo: PhoneInfoSchema }, { additionalProperties: false });

const AnsweredSourceMetaSchema = Type.Object(
  {
    status: literalUnion(SOURCE_STATUSES, {
      description: '`ok` (data, possibly stale), `not_found` (the site has no record of the number), `blocked` (the site refused us, or we held back), `error` (no data; `reason` says why)',
    }),
    reason: Type.Optional(FailureReasonString('Why the slot is not ok, or why stale data was served')),
    fetchedAt: Type.String({ description: 'ISO 8601 time the upstream answered' }),
    cache: literalUnion(CACHE_STATES),
  },
  { additionalProperties: false, description: 'The source was asked (or its cached answer served).' },
);

const SkippedSourceMetaSchema = Type.Object(
  {
    status: Type.Literal('skipped'),
    reason: literalUnion(SKIP_REASONS, { description: '`not_covered`: the source does not cover this number (outside its country, or its path needs a key that is not set)' }),
  },
  {
    additionalProperties: false,
    description:
      'The source was not asked: it does not cover the number. Nothing was cached for it; it is neither a failure nor a record, so it counts neither for the 502 nor for the score. Its data fields are empty.',
  },
);

const PendingSourceMetaSchema = Type.Object(
  { status: Type.Literal('pending') },
  {
    additionalProperties: false,
    description:
      'Still being fetched when the caller’s wait (`?wait`, `Prefer: wait`) ended. The fetch goes on and fills the cache, so the next lookup has it. Neither a failure nor a record: its data fields are empty and it counts neither for the 502 nor for the score.',
  },
);

const SourceMetaSchema = Type.Union([AnsweredSourceMetaSchema, SkippedSourceMetaSchema, PendingSourceMetaSchema], {
  description: 'What became of one source for this answer: answered (`ok`, `not_found`, `blocked`, `error`), `skipped` or `pending`.',
});

const HintsSchema = Type.Array(Type.Union(HINTS.map((hint) => Type.Literal(hint))), {
  description:
    'Facts from the number alone that bear on the verdict without being a score: `npv` (a range reserved for automated calls and messages), `technical_platform` (0937, 0938, 09390–09394: operator equipment). Empty when none; more may be added.',
});

/** One member per slot, from the one slot list: a fourth source is a change to SOURCE_SLOTS, not to each schema. */
const perSlotObject = <T extends TSchema>(member: T, options: SchemaOptions = {}) =>
  Type.Object(mapSlots<Record<SourceSlot, T>>(() => member), { additionalProperties: false, ...options });

const SourcesMetaSchema = perSlotObject(SourceMetaSchema);

const ListMatchSchema = Nullable(
  Type.Object(
    {
      list: Type.Union([Type.Literal('allow'), Type.Literal('block')], { description: 'The list whose rule applies.' }),
      rule: Type.String({ description: 'The rule: an E.164 number (`+33612345678`) or a prefix ending in `*` (`+33162*`).', examples: ['+33162*'] }),
      label: Nullable(Type.String({ description: 'The rule’s label when the operator made it public (`labelPublic`), else null: labels are often people’s names.', maxLength: 60 })),
    },
    { additionalProperties: false },
  ),
  {
    description:
      'The operator’s allow or block rule that applies to this number (the longest matching rule; `allow` wins at equal length), or null when none does. It decides `/verdict` and `/cid`; the report and the score still say what the sources say. See docs/lists.md.',
  },
);

/** The full report's meta: the score and risk are the server's, so no client computes them. */
export const ReportMetaSchema = Type.Object(
  { sources: SourcesMetaSchema, hints: HintsSchema, score: ScoreValueSchema, risk: RiskSchema, scoreSource: ScoreSourceSchema, list: ListMatchSchema },
  { additionalProperties: false },
);

/** The score's meta: the score and risk are its data. */
export const ScoreMetaSchema = Type.Object({ sources: SourcesMetaSchema, hints: HintsSchema, scoreSource: ScoreSourceSchema, list: ListMatchSchema }, { additionalProperties: false });

export const envelope = <T extends TSchema, M extends TSchema>(data: T, meta: M) =>
  Type.Object({ success: Type.Literal(true), data, meta }, { additionalProperties: false });

export const HealthSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    uptime: Type.Number({ description: 'Seconds since the process started' }),
    timestamp: Type.String({ description: 'ISO 8601 UTC with milliseconds', examples: ['2026-11-22T03:00:00.000Z'] }),
  },
  { additionalProperties: false },
);

const ReadinessStatus = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]);

const UpstreamReadinessSchema = Type.Object(
  {
    status: ReadinessStatus,
    slot: literalUnion(SOURCE_SLOTS),
    circuit: Type.Union([...BREAKER_STATES.map((state) => Type.Literal(state)), Type.Null()], {
      description: 'The breaker of this source; open means calls are refused at once until a probe succeeds',
    }),
    pausedUntil: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 end of the pause after a 403/429, or null' }),
    lastOutcome: Type.Union([
      Type.Object(
        {
          status: literalUnion(SOURCE_STATUSES),
          reason: Type.Optional(FailureReasonString()),
          at: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    reason: Type.Optional(Type.String({ description: 'Why the upstream is not ok when a probe says so: `layout changed` (the scheduled canary found a required marker missing)' })),
  },
  { additionalProperties: false },
);

export const ReadinessSchema = Type.Object(
  {
    status: ReadinessStatus,
    timestamp: Type.String({ description: 'ISO 8601 UTC time of the evaluation' }),
    reason: Type.Optional(Type.String({ description: 'Why the service cannot answer, when status is down' })),
    dependencies: Type.Object(
      {
        upstreams: Type.Record(Type.String(), UpstreamReadinessSchema, { description: 'One member per upstream source, by name' }),
        numberingData: Type.Optional(
          Type.Object(
            {
              status: ReadinessStatus,
              dataDate: Type.Union([Type.String({ description: 'YYYY-MM-DD' }), Type.Null()]),
              ageDays: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
            },
            { additionalProperties: false, description: 'The ARCEP numbering data in use; older than 365 days is degraded' },
          ),
        ),
        redis: Type.Optional(Type.Object({ status: ReadinessStatus }, { additionalProperties: false, description: 'Present when REDIS_URL is set' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'Readiness of the service and of each dependency' },
);

// The parser alone decides which spellings are numbers (docs/numbering.md): the schema states
// the type and the outer length bound and lists the spellings in words, so there is no second
// copy of the rules to drift from it. A refusal comes from the parser with its reason.
export const NumberParamsSchema = Type.Object({
  number: Type.String({
    description: [
      'A phone number as a person writes it or a phone system sends it (every spelling: docs/numbering.md):',
      'national digits (0612345678), optionally grouped by one space, dot or dash between digits or by parentheses;',
      'international with a leading + (sent as %2B or as it is) or 00, with or without a trunk 0 after the calling code (+33 (0)6…, +33 06…);',
      'E.164 digits without + when they cannot be a national number (33612345678: 10 to 15 digits);',
      'an RFC 3966 tel: URI (tel:+33-6-12-34-56-78;npdi), its visual separators and parameters ignored;',
      'the user part of a sip: or sips: URI (sip:+33612345678@host;user=phone), with the URI percent-encoded or as it is.',
      `The number itself has at most ${MAX_INPUT_LENGTH} characters, the whole value at most ${MAX_URI_LENGTH}.`,
      `A withheld caller (${[...WITHHELD_WORDS].join(', ')}, any case, also as a tel: number or sip: user part) is refused with code \`withheld\`.`,
    ].join(' '),
    minLength: 1,
    maxLength: MAX_URI_LENGTH,
    examples: [
      '0612345678',
      '06 12 34 56 78',
      '06.12.34.56.78',
      '(06) 12 34 56 78',
      '+33612345678',
      '+33 (0)6 12 34 56 78',
      '0033612345678',
      '33612345678',
      'tel:+33-6-12-34-56-78;npdi',
      'sip:+33612345678@pbx.example;user=phone',
      '+32470123456',
    ],
  }),
});

// `wait` is checked by the routes, not by the schema: a text route answers 200 whatever it is
// given, so the schema only publishes it.
const WaitParam = Type.String({
  description:
    'Longest the answer may take, in milliseconds (a whole number, 0 or more), clamped to LOOKUP_TIMEOUT_MS (4000 by default). Sources still being fetched at that moment are reported as `pending` in `meta.sources` and go on in the background, filling the cache for the next request. `Prefer: wait=<seconds>` (RFC 7240) does the same; with both, the smaller bound applies. On JSON routes any other value is a 400 with `code: "invalid_wait"`; the text routes ignore it (they always answer 200).',
  examples: ['800'],
});

export const WaitQuerySchema = Type.Object({ wait: Type.Optional(WaitParam) });

export const VerdictQuerySchema = Type.Object({
  wait: Type.Optional(WaitParam),
  cid: Type.Optional(
    Type.String({
      description: 'Adds the `/cid` line in this language (`fr` or `en`; any other value gives French) as a second line, for clients that read a category from the body (SpamBlocker: docs/integrations/spamblocker.md).',
      examples: ['fr'],
    }),
  ),
});

export const CidQuerySchema = Type.Object({
  wait: Type.Optional(WaitParam),
  lang: Type.Optional(Type.String({ description: 'Language of the line: `fr` (the default) or `en`; any other value gives French.', examples: ['en'] })),
});

// ---- Headers, as carried by the answers (see app.ts, plugins/rate-limit.ts, plugins/overload.ts)

// `x-required` becomes the header's `required` in the published document (plugins/openapi.ts).
const RequestIdHeader = {
  type: 'string',
  pattern: '^[A-Za-z0-9._:-]{1,64}$',
  description: "Id of this request, also in error bodies as `requestId`: the caller's own X-Request-Id when it is 1–64 characters of A–Z a–z 0–9 . _ : -, else a fresh UUID.",
  'x-required': true,
};
const RateLimitHeader = {
  type: 'string',
  pattern: '^"default";r=[0-9]+;t=[0-9]+$',
  description: 'Requests left (r) in the current window and seconds until it resets (t), as in draft-ietf-httpapi-ratelimit-headers. Absent when rate limiting is off (RATE_LIMIT_MAX=0).',
};
const RateLimitPolicyHeader = {
  type: 'string',
  pattern: '^"default";q=[0-9]+;w=[0-9]+$',
  description: 'The quota (q requests) per window of w seconds. Absent when rate limiting is off.',
};
const RetryAfterHeader = { type: 'string', pattern: '^[1-9][0-9]*$', description: 'Seconds to wait before trying again.' };
const AllowHeader = { type: 'string', const: 'GET, HEAD, OPTIONS', description: 'The methods this path answers.', 'x-required': true };

const ContentEncodingHeader = {
  type: 'string',
  enum: ['br', 'gzip'],
  description: 'The coding of the body, chosen from Accept-Encoding (brotli preferred at equal q): bodies of 1024 bytes or more. Absent when the body is sent as it is.',
};
const VaryAcceptEncodingHeader = {
  type: 'string',
  pattern: '(?:^|,\\s*)Accept-Encoding(?:\\s*,|$)',
  description: 'Names Accept-Encoding: caches must keep one answer per coding.',
  'x-required': true,
};

const rateLimited = { RateLimit: RateLimitHeader, 'RateLimit-Policy': RateLimitPolicyHeader };

const PreferenceAppliedHeader = {
  type: 'string',
  pattern: '^wait=[0-9]+$',
  description: 'Sent when the request carried `Prefer: wait=<seconds>`: the wait applied, in seconds (clamped to LOOKUP_TIMEOUT_MS).',
};
const waited = { 'Preference-Applied': PreferenceAppliedHeader };
const ReputationScoreHeader = {
  type: 'string',
  pattern: '^(?:[1-9]|none)$',
  description: 'The 1–9 score of `/score`, or `none` when there is none (nothing known, a withheld caller, an invalid number).',
  'x-required': true,
};
const ReputationRiskHeader = {
  type: 'string',
  enum: ['trustworthy', 'neutral', 'suspicious', 'unknown'],
  description: 'The risk level of `/score` (`unknown` for a withheld caller or an invalid number).',
  'x-required': true,
};
const reputation = { 'X-Reputation-Score': ReputationScoreHeader, 'X-Reputation-Risk': ReputationRiskHeader };

// HTTP caching and compression of API answers (docs/hot-path.md).
const NoStoreHeader = { type: 'string', const: 'no-store', description: 'Problems are never cached.', 'x-required': true };
const LiveNoStoreHeader = { type: 'string', const: 'no-store', description: 'A liveness answer is about this moment: never cached.', 'x-required': true };
const ApiCacheControlHeader = {
  type: 'string',
  pattern: '^(?:no-store|public, max-age=[0-9]+)$',
  description:
    '`public, max-age=N` when all three sources are fresh answers, N being the seconds until the first of them stops being fresh; `no-store` when any source is stale, failed, skipped or pending.',
  'x-required': true,
};
const InfoCacheControlHeader = {
  type: 'string',
  const: 'public, max-age=86400',
  description: 'The facts depend on the numbering data only, which changes with a data update.',
  'x-required': true,
};
const EtagHeader = {
  type: 'string',
  pattern: '^W/"[A-Za-z0-9_-]+"$',
  description: 'Weak validator of the answer (the same for every content coding); send it back in If-None-Match to get 304 while it holds. Sent on answers held by the front cache and on `/info`.',
};
const VaryHeader = {
  type: 'string',
  const: 'Accept-Encoding, Origin',
  description: 'The body depends on the request’s Accept-Encoding, and the CORS headers on whether it carried Origin (they are sent only then).',
  'x-required': true,
};
const cachedApi = (cacheControl: object) => ({ 'Cache-Control': cacheControl, ETag: EtagHeader, Vary: VaryHeader, 'Content-Encoding': ContentEncodingHeader });
const notModified = (cacheControl: object, extra: Record<string, object> = {}) => ({
  description: 'The client’s copy (If-None-Match) is still the answer: no body.',
  headers: { 'X-Request-Id': RequestIdHeader, ...rateLimited, 'Preference-Applied': PreferenceAppliedHeader, 'Cache-Control': cacheControl, ETag: { ...EtagHeader, 'x-required': true }, Vary: VaryHeader, ...extra },
});

// ---- Problem documents (RFC 9457), one schema per status with its exact titles

const EXAMPLE_REQUEST_ID = '4f1c2b8e-9a43-4c3e-8d55-2f0e6b7a1c90';

function literals(values: readonly string[]): TSchema {
  return values.length === 1 ? Type.Literal(values[0] ?? '') : Type.Union(values.map((value) => Type.Literal(value)));
}

function problemSchema(codes: readonly [ErrorCode, ...ErrorCode[]], description: string, extra: TProperties = {}): TSchema {
  const titles = [...new Set(codes.map((code) => ERROR_CODES[code].title))];
  return Type.Object(
    {
      type: literals(codes.map((code) => `/problems/${code.replaceAll('_', '-')}`)),
      title: literals(titles),
      status: Type.Literal(ERROR_CODES[codes[0]].status),
      detail: Type.Optional(Type.String({ description: 'What went wrong, in a sentence for a person' })),
      requestId: Type.String({ description: 'The X-Request-Id of this answer' }),
      success: Type.Literal(false),
      error: literals(titles),
      ...extra,
    },
    { additionalProperties: false, description: ['RFC 9457 problem details, also in envelope style (success, error).', description].filter((text) => text !== '').join(' ') },
  );
}

/** An example problem answer: exactly what the error handler sends for this code. */
function problemExample(code: ErrorCode, detail?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return problemBody(code, EXAMPLE_REQUEST_ID, detail, extra);
}

function problemResponse(description: string, schema: TSchema, example: Record<string, unknown>, headers: Record<string, object>) {
  return {
    description,
    headers: { 'X-Request-Id': RequestIdHeader, 'Cache-Control': NoStoreHeader, ...headers },
    content: { 'application/problem+json': { schema, example } },
  };
}

const EXAMPLE_PHONE_INFO = {
  national: '06 12 34 56 78',
  e164: '+33612345678',
  type: 'mobile',
  rangeLabel: 'Mobile',
  originalCarrier: 'Orange',
  region: 'France',
  isNPV: false,
};

const badRequest = problemResponse(
  'The number is not one (`code` says why, `detail` says it in a sentence), or the request is malformed.',
  problemSchema(['invalid_number', 'bad_request'], 'With an invalid number, `code` is the machine-readable reason.', {
    code: Type.Optional(
      Type.Union(
        [...PHONE_NUMBER_REJECTIONS, 'invalid_wait'].map((reason) => Type.Literal(reason)),
        {
          description: `Why the number was refused: ${PHONE_NUMBER_REJECTIONS.map((reason) => `\`${reason}\` (${INVALID_NUMBER_DETAILS[reason]})`).join('; ')}. Or, with bad_request, \`invalid_wait\`: \`?wait\` is not a whole number of milliseconds.`,
        },
      ),
    ),
    meta: Type.Optional(
      Type.Object(
        { list: ListMatchSchema },
        {
          additionalProperties: false,
          description:
            'Only when the operator’s block rule covers the refused number’s digits, read as dialled in international form (`+225 01 02` under a blocked `+225*`): the rule, as a 200’s `meta.list`. `/verdict` and `/cid` then answer `block`. See docs/lists.md.',
        },
      ),
    ),
  }),
  problemExample('invalid_number', INVALID_NUMBER_DETAILS.invalid_character, { code: 'invalid_character' }),
  rateLimited,
);
// The text routes answer 200 for any number the router hands them (an over-long segment too);
// only a request refused before routing is a 400.
const undecodableUrl = problemResponse(
  'The request is refused before the route runs: malformed percent-encoding such as `%ZZ` (`invalid_number`, no `code`), a URL over 2048 characters, more than 100 header fields, a missing or repeated Host, or a body on GET (`bad_request`). Never for a number the parser or the router refuses (any spelling, any length), which is a 200.',
  problemSchema(['invalid_number', 'bad_request'], ''),
  problemExample('invalid_number', 'Malformed URL encoding.'),
  rateLimited,
);
const badRequestOutsidePhoneRoutes = problemResponse(
  'The request is malformed (an over-long URL, broken encoding).',
  problemSchema(['bad_request'], ''),
  problemExample('bad_request', 'The request URL is too long.'),
  {},
);
const notFound = problemResponse(
  'No such route: an empty number, or an unknown path below it.',
  problemSchema(['route_not_found'], ''),
  problemExample('route_not_found'),
  rateLimited,
);
const methodNotAllowed = (headers: Record<string, object>) =>
  problemResponse(
    'Another method than GET or HEAD was used on this path (OPTIONS answers a CORS preflight with 204).',
    problemSchema(['method_not_allowed'], ''),
    problemExample('method_not_allowed', 'POST is not allowed here; use GET or HEAD.'),
    { Allow: AllowHeader, ...headers },
  );
const tooManyRequests = problemResponse(
  'The client used up its quota for the window (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_S).',
  problemSchema(['too_many_requests'], ''),
  problemExample('too_many_requests', 'At most 30 requests per 60 s; retry later.'),
  { ...rateLimited, 'Retry-After': { ...RetryAfterHeader, 'x-required': true } },
);
const unavailable = problemResponse(
  'The service sheds load (too many requests in progress or a saturated event loop; with Retry-After) or is shutting down.',
  problemSchema(['overloaded', 'shutting_down'], ''),
  problemExample('overloaded', 'Too many requests in progress; retry shortly.'),
  { 'Retry-After': RetryAfterHeader },
);
const unavailableWhileClosing = problemResponse(
  'The service is shutting down.',
  problemSchema(['shutting_down'], ''),
  problemExample('shutting_down'),
  {},
);
const allSourcesFailed = problemResponse(
  'No upstream source could be read: every source that was asked failed (a source `skipped` because it does not cover the number is not asked). The number’s own facts (`number`, `phoneInfo`, as in a full report) are still given, `sources` says what became of each source, and `meta.list` the operator’s rule that applies, as on a 200.',
  problemSchema(['all_sources_failed'], 'Carries the number’s facts as extension members.', {
    number: NumberSchema,
    phoneInfo: PhoneInfoSchema,
    sources: perSlotObject(Type.String(), {
      description: 'Each source’s outcome: a failure reason (timeout, connection, http_429, parse…), `not_covered` for a source that was not asked, or its status',
    }),
    meta: Type.Object({ list: ListMatchSchema }, { additionalProperties: false, description: 'The operator’s rule that applies (as in a 200’s `meta.list`), or null: it decides whatever the sources say.' }),
  }),
  problemExample('all_sources_failed', 'No upstream data source could be read; see `sources` for each outcome.', {
    number: '0612345678',
    phoneInfo: EXAMPLE_PHONE_INFO,
    sources: { primary: 'timeout', community: 'http_429', signals: 'connection' },
    meta: { list: null },
  }),
  rateLimited,
);

// ---- Success examples

const EXAMPLE_META_SOURCES = {
  primary: { status: 'ok', fetchedAt: '2026-11-22T03:00:00.000Z', cache: 'miss' },
  community: { status: 'ok', fetchedAt: '2026-11-22T03:00:00.000Z', cache: 'hit' },
  signals: { status: 'error', reason: 'timeout', fetchedAt: '2026-11-22T03:00:01.000Z', cache: 'miss' },
};

const FULL_REPORT_EXAMPLE = {
  success: true,
  data: {
    number: '0612345678',
    phoneInfo: EXAMPLE_PHONE_INFO,
    sources: {
      primary: {
        score: 8,
        searches: 1234,
        commentsCount: 1,
        commentList: [{ author: 'Camille', text: 'Appel insistant pour une isolation à 1 euro.', date: '12/03/2024', callerType: 'Démarchage' }],
      },
      community: {
        dangerPercent: 84,
        visits: 2535,
        commentsCount: 1,
        topCategory: 'Gênant',
        lastCommentDate: '11/03/2024',
        commentList: [{ text: 'Toujours le même message enregistré.', date: '11/03/2024', category: 'Gênant' }],
      },
      signals: { spamScore: null, reportsCount: null, callerType: '', commentList: [] },
    },
  },
  meta: { sources: EXAMPLE_META_SOURCES, hints: [], score: 8, risk: 'suspicious', scoreSource: 'primary', list: null },
};

const SCORE_EXAMPLE = {
  success: true,
  data: { number: '0162123456', score: 8, risk: 'suspicious' },
  meta: { sources: EXAMPLE_META_SOURCES, hints: ['npv'], list: { list: 'block', rule: '+33162*', label: 'NPV' }, scoreSource: 'primary' },
};

const INFO_EXAMPLE = { success: true, data: { number: '0612345678', phoneInfo: EXAMPLE_PHONE_INFO } };

function jsonResponse(description: string, schema: TSchema, example: unknown, headers: Record<string, object>) {
  return {
    description,
    headers: { 'X-Request-Id': RequestIdHeader, ...headers },
    content: { 'application/json': { schema, example } },
  };
}

// The two text routes (`/verdict`, `/cid`) answer with the same headers: the reputation headers
// beside the one-line body (a client that reads no JSON gets the score there), and the API's
// caching headers.
function textResponse(description: string, schema: TSchema, example: string) {
  return {
    description,
    headers: { 'X-Request-Id': RequestIdHeader, ...rateLimited, ...waited, ...reputation, ...cachedApi(ApiCacheControlHeader) },
    content: { 'text/plain': { schema, example } },
  };
}

// ---- One complete route schema per operation

export const routeSchemas = {
  fullReport: {
    operationId: 'getFullReport',
    summary: 'Full report for a number',
    description:
      'What the number is (formats, line type, original carrier, region, NPV) and what each of the three reputation sources says. A source that failed, was skipped (it does not cover the number) or is still pending has empty fields and is explained in `meta.sources`; only when every source that was asked failed is the answer 502, which still carries the number’s facts. When no source covers the number, the answer is a 200 whose sources are all `skipped`.',
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: WaitQuerySchema,
    response: {
      200: jsonResponse('The report, in the success envelope.', envelope(ReportSchema, ReportMetaSchema), FULL_REPORT_EXAMPLE, { ...rateLimited, ...waited, ...cachedApi(ApiCacheControlHeader) }),
      304: notModified(ApiCacheControlHeader),
      400: badRequest,
      404: notFound,
      405: methodNotAllowed(rateLimited),
      429: tooManyRequests,
      502: allSourcesFailed,
      503: unavailable,
    },
  },
  score: {
    operationId: 'getScore',
    summary: 'Score and risk level for a number',
    description:
      'The 1–9 score (primary source, else derived from the others) and its risk level, with the same `meta` as the full report. `meta.hints` carries facts such as `npv` that the score rule does not count.',
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: WaitQuerySchema,
    response: {
      200: jsonResponse('The score, in the success envelope.', envelope(ScoreSchema, ScoreMetaSchema), SCORE_EXAMPLE, { ...rateLimited, ...waited, ...cachedApi(ApiCacheControlHeader) }),
      304: notModified(ApiCacheControlHeader),
      400: badRequest,
      404: notFound,
      405: methodNotAllowed(rateLimited),
      429: tooManyRequests,
      502: allSourcesFailed,
      503: unavailable,
    },
  },
  verdict: {
    operationId: 'getVerdict',
    summary: 'One word for a phone system: block, warn, allow or unknown',
    description:
      'The verdict on a caller as one word and a newline, `text/plain`, for PBXs and call blockers that cannot read JSON (docs/integrations). Always 200, also for a withheld caller (`anonymous`, `restricted`, `unknown`…: VERDICT_WITHHELD, default `allow`), an invalid number (`unknown`) and when every source failed (`unknown`, or VERDICT_NPV for an NPV number); only the rate limit (429), load shedding (503), a wrong path or method, and a request refused before routing (400: see below) keep their problem answers; a number segment of any length is a 200. Rule: score ≥ VERDICT_BLOCK_SCORE (7) → `block`; score ≥ VERDICT_WARN_SCORE (5) → `warn`; a lower score → `allow`; no score → `unknown`; for an NPV number, the stronger of that and VERDICT_NPV (default `warn`). With `?wait`, sources still fetching count as nothing known yet.',
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: VerdictQuerySchema,
    response: {
      200: textResponse(
        'The verdict: one of block, warn, allow, unknown, then a newline; with `?cid=`, the `/cid` line and a newline after it.',
        Type.String({ pattern: '^(block|warn|allow|unknown)\n([^\n]*\n)?$' }),
        'block\n',
      ),
      304: notModified(ApiCacheControlHeader, reputation),
      400: undecodableUrl,
      404: notFound,
      405: methodNotAllowed(rateLimited),
      429: tooManyRequests,
      503: unavailable,
    },
  },
  cid: {
    operationId: 'getCallerIdLine',
    summary: 'One line for a phone’s display (caller ID name)',
    description:
      'What to show as the caller’s name: one line of at most CID_MAX_LENGTH (30) grapheme clusters and max(75, CID_MAX_LENGTH) bytes, starting with a letter, no line ending, `text/plain`, French unless `?lang=en`. For example `SPAM? 8/9 Démarchage`, `Appel automatisé (NPV)`, `Neutre 5/9`, `Fiable 2/9`, `Pas de note`, `Non vérifié`, `Non vérifié (étranger)`, `Bloqué par l’administrateur`, `Masqué`, `Numéro invalide` (English: `SPAM? 8/9 Démarchage`, `Automated call (NPV)`, `Neutral 5/9`, `Trusted 2/9`, `No score`, `Not checked`, `Not checked (foreign)`, `Blocked by the administrator`, `Withheld`, `Invalid number`). Control, format and invisible characters, noncharacters and `" \' ` ; | , \\ $ { } [ ] < > %` are removed. Always 200 like `/verdict`.',
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: CidQuerySchema,
    response: {
      200: textResponse('The caller-ID line.', Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f";|,]*$' }), 'SPAM? 8/9 Démarchage'),
      304: notModified(ApiCacheControlHeader, reputation),
      400: undecodableUrl,
      404: notFound,
      405: methodNotAllowed(rateLimited),
      429: tooManyRequests,
      503: unavailable,
    },
  },
  numberInfo: {
    operationId: 'getNumberInfo',
    summary: 'What the number itself says, without any source',
    description:
      'The number’s facts alone (formats, line type, original carrier, region, NPV), from the numbering data the service ships. Never calls an upstream, so it answers even when every source is unreachable. Rate limited like the other phone routes.',
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: WaitQuerySchema,
    response: {
      200: jsonResponse(
        'The number’s facts.',
        Type.Object({ success: Type.Literal(true), data: NumberFactsSchema }, { additionalProperties: false }),
        INFO_EXAMPLE,
        { ...rateLimited, ...cachedApi(InfoCacheControlHeader) },
      ),
      304: notModified(InfoCacheControlHeader),
      400: badRequest,
      404: notFound,
      405: methodNotAllowed(rateLimited),
      429: tooManyRequests,
      503: unavailable,
    },
  },
  health: {
    operationId: 'getHealth',
    summary: 'Liveness: the service is up',
    description: 'Always 200 while the process serves; never rate limited and never calls an upstream.',
    tags: ['service'],
    response: {
      200: jsonResponse('The service is up.', HealthSchema, { status: 'ok', uptime: 3600.5, timestamp: '2026-11-22T03:00:00.000Z' }, { 'Cache-Control': LiveNoStoreHeader }),
      400: badRequestOutsidePhoneRoutes,
      405: methodNotAllowed({}),
      503: unavailableWhileClosing,
    },
  },
  readiness: {
    operationId: 'getReadiness',
    summary: 'Readiness: each dependency ok, degraded or down',
    description:
      'Reads the state the service keeps (last upstream outcomes, pauses, circuit breakers, Redis, ARCEP data date); never calls an upstream. 200 while the service can answer, even degraded; 503 only when it cannot (shutting down, numbering data missing).',
    tags: ['service'],
    response: {
      200: jsonResponse(
        'The service can answer (status ok or degraded).',
        ReadinessSchema,
        { status: 'ok', timestamp: '2026-11-22T03:00:00.000Z', dependencies: { upstreams: {} } },
        {},
      ),
      400: badRequestOutsidePhoneRoutes,
      405: methodNotAllowed({}),
      503: {
        description: 'The service cannot answer: the readiness report says why; while the process closes, a problem document.',
        headers: { 'X-Request-Id': RequestIdHeader },
        content: {
          'application/json': {
            schema: ReadinessSchema,
            example: { status: 'down', timestamp: '2026-11-22T03:00:00.000Z', reason: 'shutting down', dependencies: { upstreams: {} } },
          },
          'application/problem+json': { schema: problemSchema(['shutting_down'], ''), example: problemExample('shutting_down') },
        },
      },
    },
  },
  openApi: {
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    description: 'Served with `Access-Control-Allow-Origin: *` so tools on any origin can read it; never rate limited.',
    tags: ['service'],
    response: {
      200: {
        description: 'The OpenAPI document, in brotli or gzip when Accept-Encoding asks for one.',
        headers: { 'X-Request-Id': RequestIdHeader, 'Content-Encoding': ContentEncodingHeader, Vary: VaryAcceptEncodingHeader },
        content: { 'application/json': { schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) } },
      },
      400: badRequestOutsidePhoneRoutes,
      405: methodNotAllowed({}),
      503: unavailableWhileClosing,
    },
  },
} as const;

// ---- The admin API of the operator's lists (src/http/routes/admin-routes.ts)

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
