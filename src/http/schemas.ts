// One schema per shape: Fastify validates with it, serialises with it (fast-json-stringify,
// which also drops any member not listed), and @fastify/swagger publishes it as OpenAPI 3.1.
import { Type, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const DateDMY = Type.String({ description: 'DD/MM/YYYY, or "" when unknown', examples: ['12/03/2024'] });

export const PhoneInfoSchema = Type.Object(
  {
    national: Type.String({ examples: ['06 12 34 56 78'] }),
    e164: Type.String({ examples: ['+33612345678'] }),
    type: Type.String({ examples: ['mobile'] }),
    rangeLabel: Type.String(),
    originalCarrier: Type.String(),
    region: Type.String(),
    isNPV: Type.Boolean(),
  },
  { additionalProperties: false },
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

export const ReportSchema = Type.Object(
  {
    number: Type.String({ description: 'Normalised number: national digits for the French plan, E.164 otherwise', examples: ['0612345678'] }),
    phoneInfo: PhoneInfoSchema,
    sources: Type.Object({ primary: PrimarySchema, community: CommunitySchema, signals: SignalsSchema }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const ScoreSchema = Type.Object(
  {
    number: Type.String(),
    score: Nullable(Type.Integer({ minimum: 1, maximum: 9 })),
    risk: Type.Union([Type.Literal('trustworthy'), Type.Literal('neutral'), Type.Literal('suspicious'), Type.Literal('unknown')]),
  },
  { additionalProperties: false },
);

const SourceMetaSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('not_found'), Type.Literal('blocked'), Type.Literal('error')]),
    reason: Type.Optional(Type.String({ description: 'Why the slot is not ok, or why stale data was served' })),
    fetchedAt: Type.String({ description: 'ISO 8601 time the upstream answered' }),
    cache: Type.Union([Type.Literal('hit'), Type.Literal('miss'), Type.Literal('stale')]),
  },
  { additionalProperties: false },
);

export const MetaSchema = Type.Object(
  {
    sources: Type.Object({ primary: SourceMetaSchema, community: SourceMetaSchema, signals: SourceMetaSchema }, { additionalProperties: false }),
    scoreSource: Type.Optional(Nullable(Type.Union([Type.Literal('primary'), Type.Literal('derived')]))),
  },
  { additionalProperties: false },
);

export const envelope = <T extends TSchema>(data: T) =>
  Type.Object({ success: Type.Literal(true), data, meta: MetaSchema }, { additionalProperties: false });

export const HealthSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    uptime: Type.Number({ description: 'Seconds since the process started' }),
    timestamp: Type.String({ description: 'ISO 8601 UTC with milliseconds', examples: ['2026-11-22T03:00:00.000Z'] }),
  },
  { additionalProperties: false },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    requestId: Type.String(),
    success: Type.Literal(false),
    error: Type.String(),
    sources: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'With 502: each source outcome' })),
  },
  { description: 'RFC 9457 problem details, also in envelope style' },
);

export const NumberParamsSchema = Type.Object({
  number: Type.String({ description: 'A phone number: national digits (0612345678), optionally with spaces, dots, dashes or parentheses; or international with + (%2B) or 00', examples: ['0612345678'] }),
});
