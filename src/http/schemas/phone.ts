// The phone routes' schemas (routes/phone-routes.ts): the report, the score, the text answers
// and the number's facts. One schema per shape: Fastify serialises with it (fast-json-stringify,
// which also drops any member not listed) and @fastify/swagger publishes it as OpenAPI 3.1.
// The parameter and query schemas are published but not run: the number parser alone decides
// what a number's spelling is and why it is refused, and the handler reads `wait` and `lang`
// (DOCUMENTED_ONLY in routes/phone-routes.ts); what they say of a request is what those accept.
// Each operation has one complete route schema here (operationId, texts, parameters, every
// status it can answer with its content type, headers and an example), so the route file only
// points at it and the published document is the wire, status by status.
import { Type, type SchemaOptions, type TSchema } from '@sinclair/typebox';
import { HINTS } from '../../domain/hints.js';
import { CACHE_STATES, SKIP_REASONS } from '../../domain/lookup/types.js';
import { SOURCE_STATUSES } from '../../domain/ports/source.js';
import { mapSlots, type SourceSlot } from '../../domain/report.js';
import { SLOT_DISPLAY } from '../../domain/slot-display.js';
import {
  E164_WITHOUT_PLUS_LENGTHS,
  PHONE_NUMBER_REJECTIONS,
  MAX_INPUT_LENGTH,
  MAX_URI_LENGTH,
  WITHHELD_WORDS,
} from '../../domain/numbering/parse-phone-number.js';
import { DISPLAY_LINE_MIN_BYTE_BOUND, DISPLAY_UNSAFE_SYNTAX } from '../../domain/display-line.js';
import { LABEL_MAX_LENGTH, LIST_NAMES } from '../../domain/lists/rules.js';
import { REPORT_RATINGS } from '../../domain/ports/caller-reports.js';
import { INVALID_NUMBER_DETAILS } from '../errors.js';
import { FailureCauseString, FailureReasonString, jsonResponse, literalUnion, Nullable } from './common.js';
import {
  ApiCacheControlHeader,
  cachedApi,
  EtagHeader,
  InfoCacheControlHeader,
  PreferenceAppliedHeader,
  rateLimited,
  RequestIdHeader,
  RetryAfterHeader,
  reputation,
  AnswerAtHeader,
  CallerReportsHeader,
  OperatorListHeader,
  VaryHeader,
  waited,
} from './headers.js';
import { methodNotAllowed, problemExample, problemResponse, problemSchema } from './problems.js';

const DateDMY = Type.String({ description: 'DD/MM/YYYY, or "" when unknown', examples: ['12/03/2024'] });

export const PhoneInfoSchema = Type.Object(
  {
    national: Type.String({ description: 'National format, digits grouped by spaces', examples: ['06 12 34 56 78'] }),
    e164: Type.String({ description: 'E.164 with leading +', examples: ['+33612345678'] }),
    type: Type.String({
      description: "libphonenumber's line type in lower case (mobile, fixed_line, voip, toll_free…)",
      examples: ['mobile'],
    }),
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
      Type.Object(
        { author: Type.String(), text: Type.String(), date: DateDMY, callerType: Type.String() },
        { additionalProperties: false },
      ),
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
    commentList: Type.Array(
      Type.Object({ text: Type.String(), date: DateDMY, category: Type.String() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export const SignalsSchema = Type.Object(
  {
    spamScore: Nullable(Type.Number({ minimum: 0, maximum: 100 })),
    reportsCount: Nullable(Type.Integer({ minimum: 0 })),
    callerType: Type.String(),
    commentList: Type.Array(
      Type.Object({ text: Type.String(), date: DateDMY, callerType: Type.String() }, { additionalProperties: false }),
    ),
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
const SOURCE_DATA_SCHEMAS: { readonly [S in SourceSlot]: TSchema } = {
  primary: PrimarySchema,
  community: CommunitySchema,
  signals: SignalsSchema,
};

const SourcesSchema = Type.Object(
  mapSlots<Record<SourceSlot, TSchema>>((slot) =>
    Type.Unsafe({ ...SOURCE_DATA_SCHEMAS[slot], description: SLOT_DISPLAY[slot].summary }),
  ),
  { additionalProperties: false },
);

export const ReportSchema = Type.Object(
  { number: NumberSchema, phoneInfo: PhoneInfoSchema, sources: SourcesSchema },
  { additionalProperties: false },
);

const ScoreValueSchema = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: 9,
    description:
      'The 1–9 score: the primary source’s own, else derived from the others (docs/engine.md#the-score-rule-apiphonenumberscore); null when no source has one',
  }),
);
const RiskSchema = Type.Union(
  [Type.Literal('trustworthy'), Type.Literal('neutral'), Type.Literal('suspicious'), Type.Literal('unknown')],
  {
    description: '1–4 trustworthy, 5 neutral, 6–9 suspicious, no score unknown',
  },
);
const ScoreSourceSchema = Nullable(
  Type.Union([Type.Literal('primary'), Type.Literal('derived')], {
    description: 'Where the score came from; null exactly when the score is null',
  }),
);

export const ScoreSchema = Type.Object(
  { number: NumberSchema, score: ScoreValueSchema, risk: RiskSchema },
  { additionalProperties: false },
);

export const NumberFactsSchema = Type.Object(
  { number: NumberSchema, phoneInfo: PhoneInfoSchema },
  { additionalProperties: false },
);

const AnsweredSourceMetaSchema = Type.Object(
  {
    status: literalUnion(SOURCE_STATUSES, {
      description:
        '`ok` (data, possibly stale), `not_found` (the site has no record of the number), `blocked` (the site refused us, or we held back), `error` (no data; `reason` says why)',
    }),
    reason: Type.Optional(FailureReasonString('Why the slot is not ok, or why stale data was served')),
    cause: Type.Optional(FailureCauseString()),
    fetchedAt: Type.String({ description: 'ISO 8601 time the upstream answered' }),
    cache: literalUnion(CACHE_STATES),
  },
  { additionalProperties: false, description: 'The source was asked (or its cached answer served).' },
);

const SkippedSourceMetaSchema = Type.Object(
  {
    status: Type.Literal('skipped'),
    reason: literalUnion(SKIP_REASONS, {
      description:
        '`not_covered`: the source does not cover this number (outside its country, or its path needs a key that is not set)',
    }),
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
  description:
    'What became of one source for this answer: answered (`ok`, `not_found`, `blocked`, `error`), `skipped` or `pending`.',
});

const HintsSchema = Type.Array(Type.Union(HINTS.map((hint) => Type.Literal(hint))), {
  description:
    'Facts from the number alone that bear on the verdict without being a score: `npv` (a range reserved for automated calls and messages), `technical_platform` (0937, 0938, 09390–09394: operator equipment), `call_centre_operator` (a fixed or non-geographic block of an operator whose numbers serve call centres, docs/numbering.md). Empty when none; more may be added.',
});

/** One member per slot, from the one slot list: a fourth source is a change to SOURCE_SLOTS, not to each schema. */
const perSlotObject = <T extends TSchema>(member: T, options: SchemaOptions = {}) =>
  Type.Object(
    mapSlots<Record<SourceSlot, T>>(() => member),
    { additionalProperties: false, ...options },
  );

const SourcesMetaSchema = perSlotObject(SourceMetaSchema);

const ListMatchSchema = Nullable(
  Type.Object(
    {
      list: Type.Union(
        LIST_NAMES.map((name) => Type.Literal(name)),
        { description: 'The list whose rule applies.' },
      ),
      rule: Type.String({
        description: 'The rule: an E.164 number (`+33612345678`) or a prefix ending in `*` (`+33162*`).',
        examples: ['+33162*'],
      }),
      label: Nullable(
        Type.String({
          description:
            'The rule’s label when the operator made it public (`labelPublic`), else null: labels are often people’s names.',
          maxLength: LABEL_MAX_LENGTH,
        }),
      ),
    },
    { additionalProperties: false },
  ),
  {
    description:
      'The operator’s allow or block rule that applies to this number (the longest matching rule; `allow` wins at equal length), or null when none does. It decides `/verdict` and `/cid`; the report and the score still say what the sources say. See docs/lists.md.',
  },
);

const REPORT_VERDICTS = ['spam', 'suspect', 'legitimate', 'unclear'] as const;

const ReportsMetaSchema = Nullable(
  Type.Object(
    {
      spam: Type.Number({
        minimum: 0,
        description:
          'Decayed spam weight: each spam vote in force weighs 1 when cast, halved every REPORT_HALF_LIFE_DAYS (125), rounded to 2 decimals.',
      }),
      legitimate: Type.Number({ minimum: 0, description: 'Decayed legitimate weight, likewise.' }),
      reporters: Type.Integer({
        minimum: 1,
        description: 'Distinct reporters (tokens) with a vote in force on the number.',
      }),
      categories: Type.Object(
        Object.fromEntries(REPORT_RATINGS.map((rating) => [rating, Type.Optional(Type.Integer({ minimum: 1 }))])),
        {
          additionalProperties: false,
          description:
            'Votes in force per rating (one vote per reporter and number), only the ratings with at least one. `legitimate` weighs against spam, `missed` neither way, every other rating is a kind of spam.',
        },
      ),
      lastReportAt: Type.String({ format: 'date-time', description: 'When the latest vote in force was cast.' }),
      verdict: Type.Union(
        REPORT_VERDICTS.map((verdict) => Type.Literal(verdict)),
        {
          description:
            '`spam`: at least REPORT_MIN_REPORTERS reporters and the spam share confidently high (`/verdict` says `block`, the feed lists it); `suspect`: reported as spam below that bar (`/verdict` warns at least); `legitimate`: confidently reported legitimate (one website’s score alone never blocks it); `unclear`: neither.',
        },
      ),
    },
    { additionalProperties: false },
  ),
  {
    description:
      'What people of this deployment reported about the number (their phones, PBX or CRM, each with its token), or null when nobody did or every vote expired (REPORT_RETENTION_DAYS). After the operator’s lists and before the score, it decides `/verdict` and `/cid`; the report and the score still say what the sources say. See docs/reports.md.',
  },
);

/** The full report's meta: the score and risk are the server's, so no client computes them. */
export const ReportMetaSchema = Type.Object(
  {
    sources: SourcesMetaSchema,
    hints: HintsSchema,
    score: ScoreValueSchema,
    risk: RiskSchema,
    scoreSource: ScoreSourceSchema,
    list: ListMatchSchema,
    reports: ReportsMetaSchema,
  },
  { additionalProperties: false },
);

/** The score's meta: the score and risk are its data. */
export const ScoreMetaSchema = Type.Object(
  {
    sources: SourcesMetaSchema,
    hints: HintsSchema,
    scoreSource: ScoreSourceSchema,
    list: ListMatchSchema,
    reports: ReportsMetaSchema,
  },
  { additionalProperties: false },
);

export const envelope = <T extends TSchema, M extends TSchema>(data: T, meta: M) =>
  Type.Object({ success: Type.Literal(true), data, meta }, { additionalProperties: false });
// The parser alone decides which spellings are numbers (docs/numbering.md): the schema states
// the type and the outer length bound and lists the spellings in words, so there is no second
// copy of the rules to drift from it. A refusal comes from the parser with its reason.
export const NumberParamsSchema = Type.Object({
  number: Type.String({
    description: [
      'A phone number as a person writes it or a phone system sends it (every spelling: docs/numbering.md):',
      'national digits (0612345678), optionally grouped by one space, dot or dash between digits or by parentheses;',
      'international with a leading + (sent as %2B or as it is) or 00, with or without a trunk 0 after the calling code (+33 (0)6…, +33 06…);',
      `E.164 digits without + when they cannot be a national number (33612345678: ${E164_WITHOUT_PLUS_LENGTHS.min} to ${E164_WITHOUT_PLUS_LENGTHS.max} digits);`,
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

/** `?at=` on the text routes (docs/legal-hours.md "?at"). */
const AtParam = Type.String({
  description:
    'Answer as if the call were made at this instant (ISO 8601 with its offset, `2026-11-30T21:30:00+01:00` or `…Z`): for an operator testing a rule against the legal calling hours. Only the hours follow it (the lists and the reports are read as they are now). Such an answer is never held nor cached (`Cache-Control: no-store`); `X-Answer-At` gives the instant used. A malformed value is ignored (the answer is for now, and `X-Answer-At` says so): a text route always answers.',
  examples: ['2026-11-30T21:30:00+01:00'],
});

export const VerdictQuerySchema = Type.Object({
  wait: Type.Optional(WaitParam),
  at: Type.Optional(AtParam),
  cid: Type.Optional(
    Type.String({
      description:
        'Adds the `/cid` line in this language (`fr` or `en`; any other value gives French) as a second line, for clients that read a category from the body (SpamBlocker: docs/integrations/spamblocker.md).',
      examples: ['fr'],
    }),
  ),
});

export const CidQuerySchema = Type.Object({
  wait: Type.Optional(WaitParam),
  at: Type.Optional(AtParam),
  lang: Type.Optional(
    Type.String({
      description: 'Language of the line: `fr` (the default) or `en`; any other value gives French.',
      examples: ['en'],
    }),
  ),
});

const notModified = (cacheControl: object, extra: Record<string, object> = {}) => ({
  description: 'The client’s copy (If-None-Match) is still the answer: no body.',
  headers: {
    'X-Request-Id': RequestIdHeader,
    ...rateLimited,
    'Preference-Applied': PreferenceAppliedHeader,
    'Cache-Control': cacheControl,
    ETag: { ...EtagHeader, 'x-required': true },
    Vary: VaryHeader,
    ...extra,
  },
});

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
        { list: ListMatchSchema, reports: ReportsMetaSchema },
        {
          additionalProperties: false,
          description:
            'Only when the operator’s block rule covers the refused number’s digits, read as dialled in international form (`+225 01 02` under a blocked `+225*`): the rule, as a 200’s `meta.list`. `/verdict` and `/cid` then answer `block`. See docs/lists.md. `reports` is null: nobody can report a number that is not one.',
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
const notFound = problemResponse(
  'No such route: an empty number, or an unknown path below it.',
  problemSchema(['route_not_found'], ''),
  problemExample('route_not_found'),
  rateLimited,
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
const allSourcesFailed = problemResponse(
  'No upstream source could be read: every source that was asked failed (a source `skipped` because it does not cover the number is not asked). The number’s own facts (`number`, `phoneInfo`, as in a full report) are still given, `sources` says what became of each source, and `meta.list` the operator’s rule that applies and `meta.reports` what this deployment’s reporters said, as on a 200.',
  problemSchema(['all_sources_failed'], 'Carries the number’s facts as extension members.', {
    number: NumberSchema,
    phoneInfo: PhoneInfoSchema,
    sources: perSlotObject(Type.String(), {
      description:
        'Each source’s outcome: a failure reason (timeout, connection, http_429, parse…), `not_covered` for a source that was not asked, or its status',
    }),
    meta: Type.Object(
      { list: ListMatchSchema, reports: ReportsMetaSchema },
      {
        additionalProperties: false,
        description:
          'The operator’s rule that applies (as in a 200’s `meta.list`), or null: it decides whatever the sources say. And what this deployment’s reporters said (as in a 200’s `meta.reports`), or null.',
      },
    ),
  }),
  problemExample('all_sources_failed', 'No upstream data source could be read; see `sources` for each outcome.', {
    number: '0612345678',
    phoneInfo: EXAMPLE_PHONE_INFO,
    sources: { primary: 'timeout', community: 'http_429', signals: 'connection' },
    meta: { list: null, reports: null },
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
        commentList: [
          {
            author: 'Camille',
            text: 'Appel insistant pour une isolation à 1 euro.',
            date: '12/03/2024',
            callerType: 'Démarchage',
          },
        ],
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
  meta: {
    sources: EXAMPLE_META_SOURCES,
    hints: [],
    score: 8,
    risk: 'suspicious',
    scoreSource: 'primary',
    list: null,
    reports: null,
  },
};

const SCORE_EXAMPLE = {
  success: true,
  data: { number: '0162123456', score: 8, risk: 'suspicious' },
  meta: {
    sources: EXAMPLE_META_SOURCES,
    hints: ['npv'],
    list: { list: 'block', rule: '+33162*', label: 'NPV' },
    reports: {
      spam: 2.87,
      legitimate: 0,
      reporters: 3,
      categories: { fraud: 2, advertising: 1 },
      lastReportAt: '2026-11-21T17:42:00.000Z',
      verdict: 'spam',
    },
    scoreSource: 'primary',
  },
};

const INFO_EXAMPLE = { success: true, data: { number: '0612345678', phoneInfo: EXAMPLE_PHONE_INFO } };

// The two text routes (`/verdict`, `/cid`) answer with the same headers: the reputation headers
// beside the one-line body (a client that reads no JSON gets the score there), and the API's
// caching headers.
function textResponse(description: string, schema: TSchema, example: string) {
  return {
    description,
    headers: {
      'X-Request-Id': RequestIdHeader,
      ...rateLimited,
      ...waited,
      ...reputation,
      'X-Answer-At': AnswerAtHeader,
      'X-Operator-List': OperatorListHeader,
      'X-Caller-Reports': CallerReportsHeader,
      ...cachedApi(ApiCacheControlHeader),
    },
    content: { 'text/plain': { schema, example } },
  };
}

// ---- One complete route schema per operation

export const phoneRouteSchemas = {
  fullReport: {
    operationId: 'getFullReport',
    summary: 'Full report for a number',
    description:
      'What the number is (formats, line type, original carrier, region, NPV) and what each of the three reputation sources says. A source that failed, was skipped (it does not cover the number) or is still pending has empty fields and is explained in `meta.sources`; only when every source that was asked failed is the answer 502, which still carries the number’s facts. When no source covers the number, the answer is a 200 whose sources are all `skipped`.',
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: WaitQuerySchema,
    response: {
      200: jsonResponse(
        'The report, in the success envelope.',
        envelope(ReportSchema, ReportMetaSchema),
        FULL_REPORT_EXAMPLE,
        { ...rateLimited, ...waited, ...cachedApi(ApiCacheControlHeader) },
      ),
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
      200: jsonResponse('The score, in the success envelope.', envelope(ScoreSchema, ScoreMetaSchema), SCORE_EXAMPLE, {
        ...rateLimited,
        ...waited,
        ...cachedApi(ApiCacheControlHeader),
      }),
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
    description: `What to show as the caller’s name: one line of at most CID_MAX_LENGTH (30) grapheme clusters and max(${DISPLAY_LINE_MIN_BYTE_BOUND}, CID_MAX_LENGTH) bytes, starting with a letter, no line ending, \`text/plain\`, French unless \`?lang=en\`. For example \`SPAM? 8/9 Démarchage\`, \`Appel automatisé (NPV)\`, \`Neutre 5/9\`, \`Fiable 2/9\`, \`Pas de note\`, \`Non vérifié\`, \`Non vérifié (étranger)\`, \`Bloqué par l’administrateur\`, \`Masqué\`, \`Numéro invalide\` (English: \`SPAM? 8/9 Démarchage\`, \`Automated call (NPV)\`, \`Neutral 5/9\`, \`Trusted 2/9\`, \`No score\`, \`Not checked\`, \`Not checked (foreign)\`, \`Blocked by the administrator\`, \`Withheld\`, \`Invalid number\`). Control, format and invisible characters, noncharacters and \`${DISPLAY_UNSAFE_SYNTAX}\` are removed. Always 200 like \`/verdict\`.`,
    tags: ['phone'],
    params: NumberParamsSchema,
    querystring: CidQuerySchema,
    response: {
      200: textResponse(
        'The caller-ID line.',
        Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f";|,]*$' }),
        'SPAM? 8/9 Démarchage',
      ),
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
} as const;
