// The admin API the operator's console needs beyond the lists' and tokens' routes
// (docs/console.md "Admin API for the console"; docs/lists.md, docs/reports.md):
// - GET /admin/lists/search: one page of the rules a search finds, and how many in all;
// - GET /admin/lists/decide/:number: the rule that decides for a number, and why (the lists' one
//   decision, worded as `phone-rep list check` words it);
// - GET /admin/reports, POST and DELETE /admin/reports/:number/dismiss: the review of the
//   reported numbers (domain/reports/review.ts), the dismissals kept with the votes;
// - GET /admin/setup: the settings in effect (secrets masked by the composition root), the
//   numbering data, Redis, the version.
// Registered inside the admin group (admin-routes.ts): its Bearer check, no-store and error
// handler hold here too. A dismissal writes one audit line, the number as its keyed hash.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { explainDecision } from '../../domain/lists/rule-index.js';
import { ruleQueryOf } from '../../domain/lists/rule-search.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import { ReportStoreUnavailable, type ReportVote } from '../../domain/ports/caller-reports.js';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import type { EvidenceRule } from '../../domain/reports/evidence.js';
import { reviewReportSteps } from '../../domain/reports/review.js';
import { runInSlices } from '../../infra/runtime/event-loop-slices.js';
import { voteInForce } from '../../domain/reports/evidence.js';
import type { ListStore } from '../../infra/lists/list-store.js';
import type { ReadinessCheck } from '../../infra/readiness/readiness.js';
import type { ReportDismissals } from '../../infra/reports/report-dismissals.js';
import type { TokenStore } from '../../infra/reports/token-store.js';
import { ApiError, invalidNumberError } from '../errors.js';
import { adminConsoleRouteSchemas, CONSOLE_PAGE_DEFAULT } from '../schemas/admin-console.js';
import type { AdminAuditLogger } from './admin-routes.js';

/** What the composition root gives the console's routes (AppDependencies.adminConsole). */
export interface AdminConsoleDependencies {
  /** The reporters' votes (the report store), where dismissals are kept, and the evidence rule (REPORT_*). */
  reports?: {
    votes(e164: string): ReportVote[];
    allVotes(): Iterable<ReportVote>;
    dismissals: ReportDismissals;
    rule: EvidenceRule;
  };
  /** Every setting in effect, secrets already masked (config.ts settingsForDisplay). */
  settings?: Readonly<Record<string, string | number | boolean | null>>;
  /** The numbering data in use, as `phone-rep data info` shows it. */
  numberingData?: { date: string; origin: 'configured' | 'updated' | 'snapshot'; blocks: number };
}

export interface AdminConsoleRoutesOptions extends AdminConsoleDependencies {
  lists: ListStore;
  context: RuleContext;
  hashKey: KeyedHasher;
  tokens?: TokenStore;
  /** /health/ready's check: the numbering data's age and Redis's state. */
  readiness?: ReadinessCheck;
  version: string;
  audit?: AdminAuditLogger;
  now?: () => number;
}

const ADMIN_ROUTE = { rateLimit: false, shed: false, cors: false, paramsError: 'bad_request' } as const;

async function orUnavailable<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ReportStoreUnavailable) throw new ApiError('reports_unavailable', error.message);
    throw error;
  }
}

export async function adminConsoleRoutes(app: FastifyInstance, options: AdminConsoleRoutesOptions): Promise<void> {
  const { lists, context, reports, audit } = options;
  const now = options.now ?? Date.now;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  /** The number of a path, in any spelling the API accepts; a 400 naming `number` otherwise. */
  const e164Of = (written: string): string => {
    const parsed = context.parsePhoneNumber(written);
    if (!parsed.ok) throw invalidNumberError(parsed.reason, { field: 'number' });
    return parsed.value.e164;
  };

  typed.get(
    '/admin/lists/search',
    { config: ADMIN_ROUTE, schema: adminConsoleRouteSchemas.searchRules },
    async (request) => {
      const { q = '', list, offset = 0, limit = CONSOLE_PAGE_DEFAULT } = request.query;
      const query = ruleQueryOf(q, { ...(list === undefined ? {} : { list }), offset, limit }, context);
      const { total, rules } = lists.index().search(query);
      return { total, offset, limit, rules };
    },
  );

  typed.get(
    '/admin/lists/decide/:number',
    { config: ADMIN_ROUTE, schema: adminConsoleRouteSchemas.decide },
    async (request) => {
      const e164 = e164Of(request.params.number);
      const at = now();
      const index = lists.index();
      const decision = index.decide(e164.slice(1), false, at);
      return {
        number: e164,
        rule: decision === null ? null : (index.get(decision.rule) ?? null),
        list: decision?.list ?? null,
        why: explainDecision(e164, index, at),
      };
    },
  );

  const reviewed = (): NonNullable<AdminConsoleDependencies['reports']> => {
    if (reports === undefined) throw new ApiError('reports_unavailable', 'The reports are not kept by this server.');
    return reports;
  };

  typed.get('/admin/reports', { config: ADMIN_ROUTE, schema: adminConsoleRouteSchemas.reports }, async (request) => {
    const { state = 'review', offset = 0, limit = CONSOLE_PAGE_DEFAULT } = request.query;
    const store = reviewed();
    const at = now();
    const dismissals = await orUnavailable(() => store.dismissals.read(at));
    const labels = new Map((options.tokens?.list() ?? []).map((token) => [token.id, token.label]));
    // In slices: a review of 100,000 reported numbers lets the lookups through meanwhile.
    const page = await runInSlices(
      reviewReportSteps({
        votes: store.allVotes(),
        votesOf: (e164) => store.votes(e164),
        dismissals,
        rule: store.rule,
        now: at,
        labelOf: (tokenId) => labels.get(tokenId) ?? tokenId,
        listOf: (e164) => lists.match(e164, at)?.list ?? null,
        state,
        offset,
        limit,
      }),
    );
    return { total: page.total, offset, limit, numbers: page.numbers };
  });

  const auditLine = (action: string, e164: string): void => {
    audit?.info(
      { audit: 'reports', who: 'admin', action, number: options.hashKey(e164), at: new Date(now()).toISOString() },
      `reports: ${action} by admin`,
    );
  };

  typed.post(
    '/admin/reports/:number/dismiss',
    { config: ADMIN_ROUTE, schema: adminConsoleRouteSchemas.dismiss },
    async (request, reply) => {
      const e164 = e164Of(request.params.number);
      const store = reviewed();
      const at = now();
      if (!store.votes(e164).some((vote) => voteInForce(vote, at, store.rule.retentionDays)))
        throw new ApiError('report_not_found', 'Nobody reported this number.', { field: 'number' });
      await orUnavailable(() => store.dismissals.dismiss(e164, at));
      auditLine('dismiss', e164);
      return reply.code(204).send(null);
    },
  );

  typed.delete(
    '/admin/reports/:number/dismiss',
    { config: ADMIN_ROUTE, schema: adminConsoleRouteSchemas.undismiss },
    async (request, reply) => {
      const e164 = e164Of(request.params.number);
      const store = reviewed();
      if (await orUnavailable(() => store.dismissals.undismiss(e164, now()))) auditLine('undismiss', e164);
      return reply.code(204).send(null);
    },
  );

  typed.get('/admin/setup', { config: ADMIN_ROUTE, schema: adminConsoleRouteSchemas.setup }, async () => {
    const readiness = await options.readiness?.evaluate();
    const redis = readiness?.dependencies.redis?.status;
    const numbering = readiness?.dependencies.numberingData;
    const known = options.numberingData;
    return {
      settings: options.settings ?? {},
      numberingData: {
        date: numbering?.dataDate ?? known?.date ?? null,
        ageDays: numbering?.ageDays ?? null,
        status: numbering?.status ?? (known === undefined ? 'down' : 'ok'),
        origin: known?.origin ?? null,
        blocks: known?.blocks ?? null,
      },
      redis: redis === undefined ? 'off' : redis === 'ok' ? 'ok' : 'degraded',
      version: options.version,
    };
  });
}
