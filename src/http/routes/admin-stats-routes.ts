// The operator console's dashboard routes (docs/console.md): hourly counts of the screened calls
// (`/admin/stats`), the call log (`/admin/calls`), the deployment's state (`/admin/status`) and
// what `/verdict` and `/cid` answer for a number and why (`/admin/check/:number`). Registered
// inside the admin group (admin-routes.ts), so its Bearer check, no-store and error handler
// (a bad query is a 400 naming the field) hold here too. Nothing here logs a number.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PhoneNumberParser, ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { LookupService } from '../../domain/lookup/types.js';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import type { CallerReports, ReportEvidence } from '../../domain/ports/caller-reports.js';
import type { ListMatch, ListRule } from '../../domain/ports/operator-lists.js';
import { HOUR_MS, hourOf, type CallFilter } from '../../domain/ports/screening-record.js';
import type { BreakerState } from '../../domain/lookup/resilience.js';
import type { SourceSlot } from '../../domain/report.js';
import {
  cidLineOf,
  decisionOf,
  listCidLine,
  listDecision,
  reportCidLine,
  REPORTED_DECISION,
  reputationOf,
  unlookableCidLine,
  unlookableDecision,
  type DecidedBy,
  type Decision,
  type TextFacts,
  type Unlookable,
  type Verdict,
  type VerdictRule,
} from '../../domain/verdict.js';
import { LANGUAGES, type Language } from '../../domain/wording/catalogue.js';
import type { ScreeningRecorder } from '../../infra/screening/screening-recorder.js';
import type { TokenStore } from '../../infra/reports/token-store.js';
import type { ListStore } from '../../infra/lists/list-store.js';
import { adminStatsRouteSchemas } from '../schemas/admin-stats.js';
import { lookedUpFacts } from './phone-routes.js';

const ADMIN_ROUTE = { rateLimit: false, shed: false, cors: false, paramsError: 'bad_request' } as const;

/** One source as `/admin/status` shows it (the composition root reads the engine, the outcomes and the fetchers). */
export interface SourceState {
  slot: SourceSlot;
  name: string;
  state: 'ok' | 'failing';
  failingSince: string | null;
  breaker: BreakerState;
  budgetUsed: number;
  budgetPerMinute: number;
}

/** What the app gives the console's record: the recorder and the sources' state. */
export interface ScreeningDependencies {
  recorder: ScreeningRecorder;
  sources: () => Promise<SourceState[]>;
}

export interface AdminStatsRoutesOptions {
  screening: ScreeningDependencies;
  /** STATS_DAYS: `/admin/stats?hours` goes up to 24 × this. */
  statsDays: number;
  tokens?: TokenStore | undefined;
  /** What `/admin/check` needs to answer as `/verdict` and `/cid` do. */
  check: {
    parsePhoneNumber: PhoneNumberParser;
    lookupService: LookupService;
    hashKey: KeyedHasher;
    verdictRule: VerdictRule;
    legalHoursTimeZone: string;
    cidMaxLength: number;
    lists?: ListStore | undefined;
    reports?: CallerReports | undefined;
  };
  now: () => number;
}

/** The dashboard routes' options from the app's dependencies; undefined without a screening record. */
export function adminStatsRoutesOptions(deps: {
  config: { STATS_DAYS: number; LEGAL_HOURS_TZ: string; CID_MAX_LENGTH: number };
  screening?: ScreeningDependencies | undefined;
  parsePhoneNumber: PhoneNumberParser;
  lookupService: LookupService;
  hashKey: KeyedHasher;
  verdictRule: VerdictRule;
  lists?: ListStore | undefined;
  reports?: CallerReports | undefined;
  tokens?: TokenStore | undefined;
  now?: (() => number) | undefined;
}): AdminStatsRoutesOptions | undefined {
  if (deps.screening === undefined) return undefined;
  return {
    screening: deps.screening,
    statsDays: deps.config.STATS_DAYS,
    tokens: deps.tokens,
    check: {
      parsePhoneNumber: deps.parsePhoneNumber,
      lookupService: deps.lookupService,
      hashKey: deps.hashKey,
      verdictRule: deps.verdictRule,
      legalHoursTimeZone: deps.config.LEGAL_HOURS_TZ,
      cidMaxLength: deps.config.CID_MAX_LENGTH,
      lists: deps.lists,
      reports: deps.reports,
    },
    now: deps.now ?? Date.now,
  };
}

interface CheckAnswer {
  number: string;
  verdict: Verdict;
  decidedBy: DecidedBy;
  cid: Record<Language, string>;
  rule: ListRule | null;
  reasons: string[];
}

const cidOf = (line: (language: Language) => string): Record<Language, string> =>
  Object.fromEntries(LANGUAGES.map((language) => [language, line(language)])) as Record<Language, string>;

/** Why a looked-up number gets its verdict, in sentences (English, like the CLI's `check`). */
function lookupReasons(facts: TextFacts, decision: Decision, rule: VerdictRule): string[] {
  const reasons: string[] = [];
  const { score, risk } = reputationOf(facts);
  reasons.push(
    score === null
      ? `No score: ${facts.check === 'answered' ? 'no source knows the number' : facts.check === 'not_covered' ? 'no source covers the number' : 'no source could be asked'}.`
      : `Score ${score} (${risk}); VERDICT_BLOCK_SCORE ${rule.blockScore}, VERDICT_WARN_SCORE ${rule.warnScore}.`,
  );
  const reported = facts.reports?.verdict;
  if (reported !== undefined)
    reasons.push(`The reporters say ${reported} (${facts.reports?.reporters ?? 0} reporter(s)).`);
  if (facts.isNPV) reasons.push(`An NPV range (VERDICT_NPV=${rule.npv}).`);
  if (facts.callCentreOperator === true)
    reasons.push(`A call-centre operator’s range (VERDICT_CALL_CENTRE=${rule.callCentre}).`);
  if (facts.outsideLegalHours === true)
    reasons.push(`Outside the legal calling hours now (VERDICT_OUTSIDE_HOURS=${rule.outsideHours}).`);
  reasons.push(`Decided by: ${decision.decidedBy}.`);
  return reasons;
}

export async function adminStatsRoutes(app: FastifyInstance, options: AdminStatsRoutesOptions): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const { screening, now } = options;
  const { recorder } = screening;
  const schemas = adminStatsRouteSchemas(24 * options.statsDays);
  const check = options.check;

  typed.get('/admin/stats', { config: ADMIN_ROUTE, schema: schemas.stats }, async (request) => {
    await recorder.flush();
    const last = hourOf(now());
    const hours = await recorder.record.hourly(last - (request.query.hours - 1) * HOUR_MS, last);
    return hours.map((counts) => ({
      hour: new Date(counts.hourMs).toISOString(),
      verdicts: counts.verdicts,
      decidedBy: counts.decidedBy,
    }));
  });

  typed.get('/admin/calls', { config: ADMIN_ROUTE, schema: schemas.calls }, async (request) => {
    if (!recorder.logsCalls) return [];
    await recorder.flush();
    const { verdict, decidedBy, prefix, limit } = request.query;
    const filter: CallFilter = {
      limit,
      ...(verdict === undefined ? {} : { verdict: verdict as Verdict }),
      ...(decidedBy === undefined ? {} : { decidedBy: decidedBy as DecidedBy }),
      ...(prefix === undefined ? {} : { prefix: `+${prefix.replace(/^[+ ]/, '')}` }),
    };
    const calls = await recorder.record.calls(filter, now());
    return calls.map((call) => ({
      at: new Date(call.atMs).toISOString(),
      number: call.number,
      verdict: call.verdict,
      decidedBy: call.decidedBy,
      cid: call.cid,
    }));
  });

  typed.get('/admin/status', { config: ADMIN_ROUTE, schema: schemas.status }, async () => {
    await recorder.flush();
    const last = hourOf(now());
    const week = await recorder.record.hourly(last - 167 * HOUR_MS, last);
    const sum = (hours: typeof week): number => hours.reduce((total, counts) => total + counts.reports, 0);
    const fetches = await recorder.record.feedFetches();
    return {
      sources: await screening.sources(),
      feedClients: fetches.map((fetch) => ({
        client: fetch.client,
        lastFetchAt: new Date(fetch.atMs).toISOString(),
        entries: fetch.entries,
      })),
      reports: { last24h: sum(week.slice(-24)), last7d: sum(week) },
      tokens: (options.tokens?.list() ?? [])
        .filter((token) => token.revokedAt === undefined)
        .map((token) => ({ id: token.id, label: token.label, lastUsedAt: token.lastUsedAt ?? null })),
    };
  });

  /** The stored rule of a match (its note, expiry and creation), or the match alone when it went meanwhile. */
  const ruleOf = (match: ListMatch): ListRule => {
    const stored = check.lists?.storedRules().find((rule) => rule.rule === match.rule);
    return (
      stored ?? {
        rule: match.rule,
        list: match.list,
        createdAt: '',
        ...(match.label === null ? {} : { label: match.label }),
      }
    );
  };
  const listAnswer = (number: string, match: ListMatch, why: string): CheckAnswer => {
    const rule = ruleOf(match);
    return {
      number,
      ...listDecision(match),
      cid: cidOf((language) => listCidLine(match, language, check.cidMaxLength)),
      rule,
      reasons: [`${why}: the ${match.list} rule ${match.rule} decides before anything else.`, 'Decided by: lists.'],
    };
  };

  typed.get('/admin/check/:number', { config: ADMIN_ROUTE, schema: schemas.check }, async (request) => {
    const raw = request.params.number;
    const nowMs = now();
    const parsed = check.parsePhoneNumber(raw);
    if (!parsed.ok) {
      const readings = parsed.dialledAs ?? [];
      const [digits] = readings;
      const blocked =
        digits !== undefined && readings.length === 1 ? (check.lists?.match(`+${digits}`, nowMs) ?? null) : null;
      if (blocked !== null && blocked.list === 'block')
        return listAnswer(`+${digits}`, blocked, `Not a valid number (${parsed.reason}), but its digits are blocked`);
      const kind: Unlookable = parsed.reason === 'withheld' ? 'withheld' : 'invalid';
      return {
        number: raw,
        ...unlookableDecision(kind, check.verdictRule),
        cid: cidOf((language) => unlookableCidLine(kind, language, check.cidMaxLength)),
        rule: null,
        reasons: [
          kind === 'withheld'
            ? `A withheld caller (VERDICT_WITHHELD=${check.verdictRule.withheld}).`
            : `Not a number that can be looked up: ${parsed.reason}.`,
          `Decided by: ${kind}.`,
        ],
      };
    }
    const number: ParsedPhoneNumber = parsed.value;
    const match = check.lists?.match(number.e164, nowMs) ?? null;
    if (match !== null) return listAnswer(number.e164, match, 'The operator’s lists');
    const evidence: ReportEvidence | null = check.reports?.evidence(number.e164, nowMs) ?? null;
    if (evidence?.verdict === 'spam')
      return {
        number: number.e164,
        ...REPORTED_DECISION,
        cid: cidOf((language) => reportCidLine(evidence, language, check.cidMaxLength) ?? ''),
        rule: null,
        reasons: [
          `The reporters say spam (${evidence.reporters} reporter(s)): blocked before any source is asked.`,
          'Decided by: reports.',
        ],
      };
    const result = await check.lookupService.lookup(number, { numberHash: check.hashKey(number.e164) });
    const facts = lookedUpFacts(number, result, evidence, { atMs: nowMs, timeZone: check.legalHoursTimeZone });
    const decision = decisionOf(facts, check.verdictRule);
    return {
      number: number.e164,
      ...decision,
      cid: cidOf((language) => cidLineOf(facts, language, check.cidMaxLength)),
      rule: null,
      reasons: lookupReasons(facts, decision, check.verdictRule),
    };
  });
}
