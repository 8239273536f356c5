// The operator console's dashboard routes (routes/admin-stats-routes.ts, docs/console.md): the
// hourly counts, the call log, the deployment's state and the check of a number. The
// vocabularies (verdicts, what decided, feed clients, breaker states) are the domain's.
import { Type, type TSchema } from '@sinclair/typebox';
import { DECIDED_BY, VERDICTS } from '../../domain/verdict.js';
import { FEED_CLIENTS } from '../../domain/ports/screening-record.js';
import { BREAKER_STATES } from '../../domain/lookup/resilience.js';
import { SOURCE_SLOTS } from '../../domain/report.js';
import { LIST_NAMES } from '../../domain/lists/rules.js';
import { problemExample, problemResponse, problemSchema } from './problems.js';
import { adminGuardProblems } from './admin.js';

/** Most calls one `/admin/calls` answer lists. */
export const CALLS_MAX_LIMIT = 1000;
export const CALLS_DEFAULT_LIMIT = 100;
export const STATS_DEFAULT_HOURS = 24;

const literals = (values: readonly string[]): TSchema => Type.Union(values.map((value) => Type.Literal(value)));
const VerdictSchema = literals(VERDICTS);
const DecidedBySchema = literals(DECIDED_BY);
const counts = (keys: readonly string[]): TSchema =>
  Type.Object(Object.fromEntries(keys.map((key) => [key, Type.Integer({ minimum: 0 })])), {
    additionalProperties: false,
  });

const HourSchema = Type.Object(
  {
    hour: Type.String({ description: 'The hour’s start, ISO 8601 (UTC).' }),
    verdicts: counts(VERDICTS),
    decidedBy: counts(DECIDED_BY),
  },
  { additionalProperties: false },
);

const CallSchema = Type.Object(
  {
    at: Type.String({ description: 'When it was answered, ISO 8601.' }),
    number: Type.String({
      description:
        'The caller in E.164; for a refused number the digits read in international form (one reading), else "" (a withheld caller).',
    }),
    verdict: VerdictSchema,
    decidedBy: DecidedBySchema,
    cid: Type.String({ description: 'The `/cid` line, in the instance’s default language (French).' }),
  },
  { additionalProperties: false },
);

const SourceStateSchema = Type.Object(
  {
    slot: literals(SOURCE_SLOTS),
    name: Type.String(),
    state: literals(['ok', 'failing']),
    failingSince: Type.Union([Type.String(), Type.Null()], {
      description: 'ISO 8601 of the first failure of the current run of failures; null when not failing or not known.',
    }),
    breaker: literals(BREAKER_STATES),
    budgetUsed: Type.Integer({ minimum: 0, description: 'Requests this instance was granted in the last minute.' }),
    budgetPerMinute: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

const StatusSchema = Type.Object(
  {
    sources: Type.Array(SourceStateSchema),
    feedClients: Type.Array(
      Type.Object(
        {
          client: literals(FEED_CLIENTS),
          lastFetchAt: Type.String({ description: 'ISO 8601' }),
          entries: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
    ),
    reports: Type.Object(
      { last24h: Type.Integer({ minimum: 0 }), last7d: Type.Integer({ minimum: 0 }) },
      { additionalProperties: false },
    ),
    tokens: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          label: Type.String(),
          lastUsedAt: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601, rounded down to the hour.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const RuleSchema = Type.Object(
  {
    rule: Type.String(),
    list: literals(LIST_NAMES),
    label: Type.Optional(Type.String()),
    labelPublic: Type.Optional(Type.Boolean()),
    note: Type.Optional(Type.String()),
    createdAt: Type.String(),
    expiresAt: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const CheckSchema = Type.Object(
  {
    number: Type.String({ description: 'E.164 when the number parses; else as typed.' }),
    verdict: VerdictSchema,
    decidedBy: DecidedBySchema,
    cid: Type.Object({ fr: Type.String(), en: Type.String() }, { additionalProperties: false }),
    rule: Type.Union([RuleSchema, Type.Null()], { description: 'The operator’s rule that decides, or null.' }),
    reasons: Type.Array(Type.String(), { description: 'Why, in sentences for a person (English).' }),
  },
  { additionalProperties: false },
);

function problems(): Record<number, unknown> {
  return {
    400: problemResponse(
      'Bad query, refused: `field` names it (`hours`, `verdict`, `decidedBy`, `prefix`, `limit`).',
      problemSchema(['bad_request'], '', { field: Type.Optional(Type.String()) }),
      problemExample('bad_request', 'hours: must be <= 168', { field: 'hours' }),
      {},
    ),
    ...adminGuardProblems,
  };
}

const tags = ['admin'];
const security = [{ adminToken: [] }];

/** The route schemas; `maxHours` is 24 × STATS_DAYS. */
export function adminStatsRouteSchemas(maxHours: number) {
  const { 400: badRequest, ...guard } = problems();
  return {
    stats: {
      operationId: 'getScreeningStats',
      tags,
      security,
      summary: 'Screened calls per hour, by verdict and by what decided (the console’s dashboard)',
      description:
        'The `/verdict` and `/cid` answers of every instance (summed through Redis), one bucket per hour, oldest first, ending with the current hour. Every key is always present.',
      querystring: Type.Object({
        hours: Type.Integer({ minimum: 1, maximum: maxHours, default: STATS_DEFAULT_HOURS }),
      }),
      response: { 200: Type.Array(HourSchema), 400: badRequest, ...guard },
    },
    calls: {
      operationId: 'getScreenedCalls',
      tags,
      security,
      summary: 'The recent screened calls, newest first (the console’s call log)',
      description:
        'Kept CALL_LOG_RETENTION_DAYS (0: nothing is logged and this answers `[]`), at most CALL_LOG_MAX_ENTRIES, shared by every instance through Redis. Personal data: docs/console.md.',
      querystring: Type.Object({
        verdict: Type.Optional(VerdictSchema),
        decidedBy: Type.Optional(DecidedBySchema),
        prefix: Type.Optional(
          Type.String({
            pattern: '^[+ ]?[0-9]{0,15}$',
            description:
              'The start of the E.164 number: `+` and digits (an unencoded `+`, read as a space, and digits alone are taken as `+` and the digits).',
          }),
        ),
        limit: Type.Integer({ minimum: 1, maximum: CALLS_MAX_LIMIT, default: CALLS_DEFAULT_LIMIT }),
      }),
      response: { 200: Type.Array(CallSchema), 400: badRequest, ...guard },
    },
    status: {
      operationId: 'getDeploymentStatus',
      tags,
      security,
      summary: 'Each source’s state, the feed’s clients, reports received and tokens last used',
      response: { 200: StatusSchema, ...guard },
    },
    check: {
      operationId: 'checkNumber',
      tags,
      security,
      summary: 'What `/verdict` and `/cid` answer for a number now, and why',
      description:
        'Looks the number up as `/verdict` does (upstreams included when not cached). Not a screened call: not counted.',
      params: Type.Object({ number: Type.String() }),
      response: { 200: CheckSchema, ...guard },
    },
  } as const;
}
