// The admin API the operator's console uses beyond the lists' and tokens' own routes
// (routes/admin-console-routes.ts, docs/console.md "Admin API for the console"): search the
// rules, explain the lists' decision for a number, review the reported numbers and dismiss them,
// and the setup check. One complete route schema per operation; the limits are the routes' own.
import { Type } from '@sinclair/typebox';
import { LIST_NAMES } from '../../domain/lists/rules.js';
import { REPORT_RATINGS } from '../../domain/ports/caller-reports.js';
import { REVIEW_STATES } from '../../domain/reports/review.js';
import { adminGuardProblems, RuleSchema } from './admin.js';
import { problemExample, problemResponse, problemSchema } from './problems.js';

/** A page's size when `limit` is not given, and the most one may be. */
export const CONSOLE_PAGE_DEFAULT = 50;
export const CONSOLE_PAGE_MAX = 500;
/** The longest search text. */
export const SEARCH_MAX_LENGTH = 100;

const ListNameSchema = Type.Union(LIST_NAMES.map((name) => Type.Literal(name)));
const tags = ['admin'];
const security = [{ adminToken: [] }];

const PageQuery = {
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Items skipped (0 = the first page).' })),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: CONSOLE_PAGE_MAX,
      default: CONSOLE_PAGE_DEFAULT,
      description: `Items answered, at most ${CONSOLE_PAGE_MAX}.`,
    }),
  ),
};

const badRequest = problemResponse(
  'Bad input, refused with nothing changed: `field` names what is wrong (`q`, `list`, `offset`, `limit`, `state`, `number`).',
  problemSchema(['bad_request', 'invalid_number'], '', {
    field: Type.Optional(Type.String()),
    code: Type.Optional(Type.String({ description: 'For `number`: the parser’s reason (`invalid_number`, …).' })),
  }),
  problemExample('bad_request', 'limit: must be <= 500', { field: 'limit' }),
  {},
);

const reportsUnavailable = problemResponse(
  'The reports’ store cannot be read or written (Redis unreachable, the file locked or not writable).',
  problemSchema(['reports_unavailable'], ''),
  problemExample('reports_unavailable'),
  {},
);

const problems = { 400: badRequest, ...adminGuardProblems };

const ReviewedNumberSchema = Type.Object(
  {
    number: Type.String({ description: 'E.164' }),
    verdict: Type.Union(
      (['spam', 'suspect', 'legitimate', 'unclear'] as const).map((verdict) => Type.Literal(verdict)),
      { description: 'What the reports say (`meta.reports.verdict` of the answers).' },
    ),
    reporters: Type.Integer({ description: 'Distinct tokens with a vote in force.' }),
    ratings: Type.Partial(
      Type.Record(Type.Union(REPORT_RATINGS.map((rating) => Type.Literal(rating))), Type.Integer({ minimum: 1 })),
      { description: 'Votes in force per rating (only ratings with one).', additionalProperties: false },
    ),
    labels: Type.Array(Type.String(), {
      description: 'The reporting tokens’ labels, newest vote first (a token no longer known: its id).',
    }),
    comments: Type.Array(Type.String(), {
      description: 'What the reporters wrote, newest first. Personal data: only this authenticated API shows them.',
    }),
    lastAt: Type.String({ description: 'ISO 8601 of the latest vote in force.' }),
    dismissed: Type.Boolean({ description: 'Dismissed by the operator after its latest vote.' }),
    dismissedAt: Type.Union([Type.String({ description: 'ISO 8601' }), Type.Null()]),
    list: Type.Union([ListNameSchema, Type.Null()], {
      description: 'The operator’s list whose rule decides for the number now, or null.',
    }),
  },
  { additionalProperties: false },
);

const NumberParam = Type.Object({
  number: Type.String({ description: 'A number in any spelling the API accepts (`+33 1 62 00 12 34`, `0162001234`).' }),
});

export const adminConsoleRouteSchemas = {
  searchRules: {
    operationId: 'searchListRules',
    tags,
    security,
    summary: 'One page of the rules a search finds (every rule without `q`), in the order of their spellings',
    description:
      '`q` is matched, case-insensitive, against each rule’s label and note, and when it is digits against the rule’s digits anywhere (`612` finds `+33612345678`); a national or `00` spelling also finds the rules it is a prefix of (`0162` finds `+33162*` and `+33162001234`). Expired rules are included (with their `expiresAt`).',
    querystring: Type.Object(
      {
        q: Type.Optional(
          Type.String({ maxLength: SEARCH_MAX_LENGTH, description: 'Text or digits; empty = every rule.' }),
        ),
        list: Type.Optional(ListNameSchema),
        ...PageQuery,
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        {
          total: Type.Integer({ description: 'Rules that match, in all.' }),
          offset: Type.Integer(),
          limit: Type.Integer(),
          rules: Type.Array(RuleSchema),
        },
        { additionalProperties: false },
      ),
      ...problems,
    },
  },
  decide: {
    operationId: 'decideListRule',
    tags,
    security,
    summary: 'The rule that decides for a number, and why (the lists’ one decision, as `phone-rep list check`)',
    params: NumberParam,
    response: {
      200: Type.Object(
        {
          number: Type.String({ description: 'E.164' }),
          rule: Type.Union([RuleSchema, Type.Null()]),
          list: Type.Union([ListNameSchema, Type.Null()]),
          why: Type.Array(Type.String(), {
            description: 'The decision in words, then every other rule covering the number and why it does not apply.',
          }),
        },
        { additionalProperties: false },
      ),
      ...problems,
    },
  },
  reports: {
    operationId: 'listReportedNumbers',
    tags,
    security,
    summary: 'The reported numbers, newest report first: for review, dismissed, or all',
    description:
      'Every number with a vote in force. `review` (the default): not dismissed, or reported again since; `dismissed`: dismissed after its latest vote. Labels come from the tokens; comments are personal data.',
    querystring: Type.Object(
      {
        state: Type.Optional(
          Type.Union(
            REVIEW_STATES.map((state) => Type.Literal(state)),
            { default: 'review' },
          ),
        ),
        ...PageQuery,
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        {
          total: Type.Integer({ description: 'Numbers in this state, in all.' }),
          offset: Type.Integer(),
          limit: Type.Integer(),
          numbers: Type.Array(ReviewedNumberSchema),
        },
        { additionalProperties: false },
      ),
      ...problems,
      503: reportsUnavailable,
    },
  },
  dismiss: {
    operationId: 'dismissReportedNumber',
    tags,
    security,
    summary: 'Dismisses a reported number: no longer listed for review, its votes kept and still deciding',
    description:
      'Every instance sees it at once (kept where the votes are: Redis, or `reports-dismissed.json` beside the lists file). A vote cast afterwards puts the number back in review. Dismissing a number with no vote in force is a 404.',
    params: NumberParam,
    response: {
      204: Type.Null(),
      404: problemResponse(
        'No vote in force on this number.',
        problemSchema(['report_not_found'], '', { field: Type.Optional(Type.String()) }),
        problemExample('report_not_found', 'Nobody reported this number.', { field: 'number' }),
        {},
      ),
      ...problems,
      503: reportsUnavailable,
    },
  },
  undismiss: {
    operationId: 'undismissReportedNumber',
    tags,
    security,
    summary: 'Takes a dismissal back: the number is listed for review again',
    description: 'A 204 whether or not the number was dismissed.',
    params: NumberParam,
    response: { 204: Type.Null(), ...problems, 503: reportsUnavailable },
  },
  setup: {
    operationId: 'getSetup',
    tags,
    security,
    summary: 'The setup check: effective settings (secrets masked), the numbering data’s date, Redis, version',
    response: {
      200: Type.Object(
        {
          settings: Type.Record(
            Type.String(),
            Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
            {
              description:
                'Every variable of docs/configuration.md in effect (defaults included; null when unset). A secret’s value is `••••`, and a URL’s user, password and credential parameters are masked.',
            },
          ),
          numberingData: Type.Object(
            {
              date: Type.Union([Type.String({ description: 'YYYY-MM-DD' }), Type.Null()]),
              ageDays: Type.Union([Type.Integer(), Type.Null()]),
              status: Type.Union(
                ['ok', 'degraded', 'down'].map((status) => Type.Literal(status)),
                {
                  description: '`degraded` past ARCEP_MAX_AGE_DAYS (`phone-rep data update` refreshes it).',
                },
              ),
              origin: Type.Union([
                Type.Union(['configured', 'updated', 'snapshot'].map((origin) => Type.Literal(origin))),
                Type.Null(),
              ]),
              blocks: Type.Union([Type.Integer({ description: 'Number blocks of the plan.' }), Type.Null()]),
            },
            { additionalProperties: false, description: 'As `phone-rep data info` shows it.' },
          ),
          redis: Type.Union(
            ['ok', 'degraded', 'off'].map((state) => Type.Literal(state)),
            {
              description:
                '`off` without REDIS_URL; `degraded` while it cannot be reached (the service runs on memory).',
            },
          ),
          version: Type.String(),
        },
        { additionalProperties: false },
      ),
      ...adminGuardProblems,
    },
  },
} as const;
