// The phone endpoints (docs/api.md#routes): the full report and one-call score, the plain-text verdict and
// caller-ID line phone systems read (docs/integrations/README.md), and the number's facts alone
// (`/info`), which needs no upstream. The report, the score and the text answers are
// representations of one lookup, declared in one table (REPRESENTATIONS): route, content type,
// render function; the front cache, ETags and compression work the same for each.
//
// Answers are serialised here (by the route's own response serializer) so they can be kept as
// bytes: a number whose three slots are fresh hits is answered from the front cache
// (front-cache.ts) with its precompressed forms, `Cache-Control: public, max-age` until the
// first slot stops being fresh, and an ETag that `If-None-Match` turns into a 304; how the bytes
// are sent (304, coding, headers) is send-answer.ts. Rules: docs/hot-path.md.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault, RouteGenericInterface } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ParsedPhoneNumber, PhoneNumberParser } from '../../domain/phone-number.js';
import type { LookupOptions, LookupResult, LookupService } from '../../domain/lookup/types.js';
import type { LookupClient } from '../../domain/ports/source.js';
import {
  buildReport,
  buildScoreResult,
  buildSourceData,
  failureReasons,
  isAllSourcesFailed,
  sourceCheckOf,
} from '../../domain/report-builder.js';
import {
  cidLineOf,
  decisionOf,
  listCidLine,
  listDecision,
  REPORTED_DECISION,
  reportCidLine,
  reputationOf,
  unlookableCidLine,
  unlookableDecision,
  unlookableVerdict,
  verdictOf,
  type Decision,
  type TextFacts,
  type Unlookable,
  type VerdictRule,
} from '../../domain/verdict.js';
import { isLanguage, type Language } from '../../domain/wording/catalogue.js';
import { legalHoursApply, type LegalHoursClock } from '../../domain/hints.js';
import { nextLegalHoursBoundary, outsideLegalHours } from '../../domain/legal-hours.js';
import type { ListMatch, ListName, OperatorLists } from '../../domain/ports/operator-lists.js';
import type { CallerReports, ReportEvidence } from '../../domain/ports/caller-reports.js';
import type { PendingCall } from '../../domain/ports/screening-record.js';
import type { KeyedHasher } from '../../infra/hash.js';
import { ApiError, invalidNumberError } from '../errors.js';
import { encodeBody, type FrontCache, type FrontRoute, type NumberMemo } from '../front-cache.js';
import {
  phoneRouteSchemas,
  type CidQuerySchema,
  type NumberParamsSchema,
  type VerdictQuerySchema,
  type WaitQuerySchema,
} from '../schemas/phone.js';
import { JSON_TYPE, maxAgeOf, sendBuilt, sendEncoded } from '../send-answer.js';
import { waitRequestOf, type WaitRequest } from '../wait-request.js';

/** Everything the routes need, given by the app from the configuration: no default is repeated here. */
export interface PhoneRoutesOptions {
  parsePhoneNumber: PhoneNumberParser;
  lookupService: LookupService;
  hashKey: KeyedHasher;
  /** Absent: every answer is built from the engine (still compressed and with its headers). */
  frontCache?: FrontCache;
  /** The engine's clock (epoch ms): front entries expire on the same clock the slots do. */
  now: () => number;
  /** LOOKUP_TIMEOUT_MS: what `Preference-Applied` reports for a longer `Prefer: wait` (the engine bounds the wait itself). */
  lookupTimeoutMs: number;
  /** The `/verdict` rule (VERDICT_*). */
  verdictRule: VerdictRule;
  /** LEGAL_HOURS_TZ: where the legal calling hours are read (docs/legal-hours.md). */
  legalHoursTimeZone: string;
  /** CID_MAX_LENGTH. */
  cidMaxLength: number;
  /** Who a request's lookup is for (client-address.ts lookupClientOf); absent: no client, no share. */
  lookupClientOf?: (request: FastifyRequest) => LookupClient;
  /** The operator's allow and block lists: they decide the text answers before any upstream (docs/lists.md). */
  lists?: OperatorLists;
  /** Called for each answer a list decided (the metrics' counter). */
  onListMatch?: (list: ListName) => void;
  /**
   * What the deployment's reporters said (docs/reports.md "In the answers"): asked after the
   * lists and before any upstream; a `spam` verdict decides the text answers by itself.
   */
  reports?: CallerReports | undefined;
  /** Told of every lookup's outcome and the request it was for (the blocklist feed records the numbers whose verdict is block, for the clients it counts). */
  onLookedUp?: ((e164: string, facts: TextFacts, request: FastifyRequest) => void) | undefined;
  /**
   * Told of every `/verdict` and `/cid` answer (the screened calls: the console's counters and
   * call log, docs/console.md). What decided and the line are functions, worked out off the
   * request's path by the recorder, from the very functions the answer was made with.
   */
  onScreened?: ((call: PendingCall) => void) | undefined;
}

/** `/info` depends on the numbering data only, which changes with a release or a data update. */
export const INFO_MAX_AGE_SECONDS = 86_400;
const INFO_CACHE_CONTROL = `public, max-age=${INFO_MAX_AGE_SECONDS}`;
const TEXT_TYPE = 'text/plain; charset=utf-8';

// Public API routes: counted by the rate limit, shed under overload, callable from any page.
const API_ROUTE = { rateLimit: true, shed: true, cors: true, paramsError: 'invalid_number' } as const;

/**
 * The phone routes' parameter and query schemas document the API (OpenAPI); what a request may
 * be is decided by the parser (a number's spelling, and why it is refused) and by the handler
 * (`wait`, `lang`), so the schemas are not run per request: their verdict was only ever attached
 * and never read, at about a twentieth of a cached answer's CPU.
 */
const DOCUMENTED_ONLY = (): ((data: unknown) => boolean) => () => true;

/** The body Fastify would send for this payload: the route's own compiled 200 application/json serializer. */
function serialized(reply: FastifyReply, payload: { [key: string]: unknown }): string {
  const text: unknown = reply.serializeInput(payload, '200', 'application/json');
  if (typeof text !== 'string') throw new TypeError('the route has no JSON serializer for 200');
  return text;
}

// ---- The representations

/**
 * A phone route's query as its readers take it: each value `unknown`, whatever the published
 * schema says, since the schemas are not run (DOCUMENTED_ONLY) and a repeated parameter arrives
 * as an array.
 */
interface PhoneQuery {
  wait?: unknown;
  lang?: unknown;
  cid?: unknown;
  at?: unknown;
}

/** A phone route's request, typed by the type provider from the route schemas' parameters and queries. */
type PhoneRequest = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  IncomingMessage,
  {
    params: typeof NumberParamsSchema;
    querystring: typeof WaitQuerySchema | typeof VerdictQuerySchema | typeof CidQuerySchema;
  },
  TypeBoxTypeProvider
>;

/**
 * Why an answer depends on time: `'at'`, asked for another time (`?at=`); `'hours'`, an NPV or
 * call-centre caller whose `outside_legal_hours` follows the time of the call; null, it does not.
 */
type Timed = 'at' | 'hours' | null;

/** A number the routes could parse, or why not. */
type Subject = { memo: NumberMemo } | { refused: string; dialledAs?: readonly string[] | undefined };

/** Everything a render function may read. */
interface RenderInput {
  reply: FastifyReply;
  memo: NumberMemo;
  result: LookupResult;
  language: Language;
  /** The operator's rule that applies, or null: the JSON answers carry it in `meta.list`. */
  list: ListMatch | null;
  /** What the reporters said, or null: the JSON answers carry it in `meta.reports`, the text answers follow it. */
  reports: ReportEvidence | null;
  /** When the call is made (the request's time, or the text routes' `?at=`): `outside_legal_hours` depends on it. */
  clock: LegalHoursClock;
}

interface Representation {
  /** The front-cache slot of this request's body (a representation with variants has one per variant). */
  frontRoute(language: Language): FrontRoute;
  contentType: string;
  render(input: RenderInput): string;
  /** Headers that describe the answer (besides caching and coding). */
  headers?(input: RenderInput): Record<string, string>;
  /**
   * Text answers are always 200 (a phone system would show an error body as the caller's
   * name): they say what they know for a refused number or a lookup that found nothing. JSON
   * answers keep their 400 and 502.
   */
  alwaysAnswers?: {
    refused(kind: Unlookable, language: Language): { body: string; headers: Record<string, string> };
  };
  /** The query parameter that gives this representation its language (`lang`, or `cid` for `/verdict?cid=`). */
  languageParameter?: 'lang' | 'cid';
  /** A text answer an operator's rule decides by itself, with no lookup. */
  listed?(list: ListMatch, language: Language): string;
  /** A text answer the reports decide by themselves (verdict `spam`), with no lookup. */
  reported?(evidence: ReportEvidence, language: Language): string;
}

/**
 * The text answers' facts. Without a clock (what the blocklist feed is told) the caller is
 * taken as inside the legal hours: the feed is a list of numbers, not of calls.
 */
function textFactsOf(
  memo: NumberMemo,
  result: LookupResult,
  reports: ReportEvidence | null,
  clock?: LegalHoursClock,
): TextFacts {
  return lookedUpFacts(memo.parsed, result, reports, clock);
}

/** The text answers' facts of a number looked up (textFactsOf), for the console's check of a number. */
export function lookedUpFacts(
  parsed: ParsedPhoneNumber,
  result: LookupResult,
  reports: ReportEvidence | null,
  clock?: LegalHoursClock,
): TextFacts {
  return {
    isNPV: parsed.phoneInfo.isNPV,
    callCentreOperator: parsed.callCentreOperator === true,
    outsideLegalHours: clock !== undefined && legalHoursApply(parsed) && outsideLegalHours(clock.atMs, clock.timeZone),
    sources: buildSourceData(result),
    check: sourceCheckOf(result),
    reports,
  };
}

/** An instant in ISO 8601 with its offset (`2026-11-30T21:30:00+01:00`, `…Z`); a time without one is ambiguous. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * The text routes' `?at=`: the instant to answer for (epoch ms), `'malformed'` when given but
 * not an ISO 8601 instant with an offset, undefined when absent (docs/legal-hours.md "?at").
 */
function atOf(query: PhoneQuery): number | 'malformed' | undefined {
  const { at } = query;
  if (at === undefined) return undefined;
  if (typeof at !== 'string' || !ISO_INSTANT.test(at)) return 'malformed';
  const ms = Date.parse(at);
  return Number.isFinite(ms) ? ms : 'malformed';
}

function reputationHeaders({ memo, result }: RenderInput): Record<string, string> {
  const { score, risk } = reputationOf(textFactsOf(memo, result, null));
  return { 'x-reputation-score': score === null ? 'none' : String(score), 'x-reputation-risk': risk };
}

const factsOf = ({ memo, result, reports, clock }: RenderInput): TextFacts => textFactsOf(memo, result, reports, clock);

const UNLOOKABLE_HEADERS = { 'x-reputation-score': 'none', 'x-reputation-risk': 'unknown' };
/** A text answer an operator's rule decided: no lookup, so no score; `X-Operator-List` says which list. */
const LISTED_HEADERS: Readonly<Record<ListName, Record<string, string>>> = {
  allow: { ...UNLOOKABLE_HEADERS, 'x-operator-list': 'allow' },
  block: { ...UNLOOKABLE_HEADERS, 'x-operator-list': 'block' },
};
/** A text answer the reports decided (verdict `spam`): no lookup, so no score; `X-Caller-Reports` says so. */
const REPORTED_HEADERS: Readonly<Record<string, string>> = { ...UNLOOKABLE_HEADERS, 'x-caller-reports': 'spam' };

function languageOf(query: PhoneQuery, parameter: 'lang' | 'cid' = 'lang'): Language {
  const lang = query[parameter];
  return isLanguage(lang) ? lang : 'fr';
}

/** `/verdict?cid=…` asks for the `/cid` line too. */
function asksForCidLine(query: PhoneQuery): boolean {
  return query.cid !== undefined;
}

/** The language of the `/cid` line the console's call log keeps: what `/cid` answers without `lang`. */
const DEFAULT_LANGUAGE: Language = 'fr';

/**
 * A looked-up text answer as the console's recorder is told of it: one object per answer (a held
 * answer's path stays cheap), its facts made once, when the recorder asks, from what made the answer.
 */
class LookedUpCall implements PendingCall {
  readonly number: string;
  private facts: TextFacts | undefined;

  constructor(
    readonly atMs: number,
    private readonly memo: NumberMemo,
    private readonly result: LookupResult,
    private readonly evidence: ReportEvidence | null,
    private readonly clock: LegalHoursClock,
    private readonly rule: VerdictRule,
    private readonly cidMaxLength: number,
  ) {
    this.number = memo.parsed.e164;
  }

  private factsOnce(): TextFacts {
    this.facts ??= textFactsOf(this.memo, this.result, this.evidence, this.clock);
    return this.facts;
  }

  decision(): Decision {
    return decisionOf(this.factsOnce(), this.rule);
  }

  cidLine(): string {
    return cidLineOf(this.factsOnce(), DEFAULT_LANGUAGE, this.cidMaxLength);
  }
}

/** A refused number as the call log keeps it: its digits read in international form, when there is one reading; else "". */
function refusedNumberOf(dialledAs: readonly string[] | undefined): string {
  const [digits] = dialledAs ?? [];
  return digits !== undefined && dialledAs?.length === 1 ? `+${digits}` : '';
}

function unlookableOf(reason: string): Unlookable {
  return reason === 'withheld' ? 'withheld' : 'invalid';
}

/**
 * A matched rule as an answer shows it: the label only when `labelVisible` (labels are often
 * people's names), and never the rule's own flags.
 */
function shownMatch(list: ListMatch, labelVisible: boolean): ListMatch {
  return { list: list.list, rule: list.rule, label: labelVisible ? list.label : null };
}

/** The phone route group, an encapsulated plugin. */
export async function phoneRoutes(app: FastifyInstance, options: PhoneRoutesOptions): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const {
    parsePhoneNumber,
    lookupService,
    hashKey,
    frontCache,
    now,
    lookupTimeoutMs,
    verdictRule: rule,
    legalHoursTimeZone,
    cidMaxLength,
    lists,
    onListMatch,
    reports,
  } = options;
  /** The cid line of a number reported as spam (reportCidLine gives one for `spam`). */
  const reportedCidLine = (evidence: ReportEvidence, language: Language): string =>
    reportCidLine(evidence, language, cidMaxLength) ?? '';
  const { onScreened } = options;
  /** Tells the recorder of a text answer (a route that always answers); the JSON answers are not calls. */
  const screened = (
    representation: Representation,
    number: string,
    decision: () => Decision,
    cidLine: () => string,
  ): void => {
    if (onScreened !== undefined && representation.alwaysAnswers !== undefined)
      onScreened({ atMs: now(), number, decision, cidLine });
  };

  const REPRESENTATIONS = {
    report: {
      path: '/api/phone/:number',
      schema: phoneRouteSchemas.fullReport,
      frontRoute: () => 'report',
      contentType: JSON_TYPE,
      render: ({ reply, memo, result, list, reports: evidence, clock }) => {
        const built = buildReport(memo.parsed, result, list, evidence, clock);
        return serialized(reply, { success: true as const, data: built.report, meta: built.meta });
      },
    },
    score: {
      path: '/api/phone/:number/score',
      schema: phoneRouteSchemas.score,
      frontRoute: () => 'score',
      contentType: JSON_TYPE,
      render: ({ reply, memo, result, list, reports: evidence, clock }) => {
        const built = buildScoreResult(memo.parsed, result, list, evidence, clock);
        return serialized(reply, { success: true as const, data: built.score, meta: built.meta });
      },
    },
    verdict: {
      path: '/api/phone/:number/verdict',
      schema: phoneRouteSchemas.verdict,
      frontRoute: () => 'verdict',
      contentType: TEXT_TYPE,
      render: (input) => `${verdictOf(factsOf(input), rule)}\n`,
      headers: reputationHeaders,
      alwaysAnswers: {
        refused: (kind) => ({ body: `${unlookableVerdict(kind, rule)}\n`, headers: UNLOOKABLE_HEADERS }),
      },
      listed: (list) => `${listDecision(list).verdict}\n`,
      reported: () => `${REPORTED_DECISION.verdict}\n`,
    },
    cid: {
      path: '/api/phone/:number/cid',
      schema: phoneRouteSchemas.cid,
      frontRoute: (language) => (language === 'en' ? 'cid:en' : 'cid:fr'),
      contentType: TEXT_TYPE,
      render: (input) => cidLineOf(factsOf(input), input.language, cidMaxLength),
      headers: reputationHeaders,
      alwaysAnswers: {
        refused: (kind, language) => ({
          body: unlookableCidLine(kind, language, cidMaxLength),
          headers: UNLOOKABLE_HEADERS,
        }),
      },
      languageParameter: 'lang',
      listed: (list, language) => listCidLine(list, language, cidMaxLength),
      reported: reportedCidLine,
    },
    // `/verdict?cid=fr|en`: the verdict's line, then the `/cid` line, for a client that reads a
    // category from the body with a regular expression (SpamBlocker).
    verdictWithCid: {
      path: '/api/phone/:number/verdict',
      schema: phoneRouteSchemas.verdict,
      frontRoute: (language) => (language === 'en' ? 'verdict+cid:en' : 'verdict+cid:fr'),
      contentType: TEXT_TYPE,
      render: (input) =>
        `${verdictOf(factsOf(input), rule)}\n${cidLineOf(factsOf(input), input.language, cidMaxLength)}\n`,
      headers: reputationHeaders,
      alwaysAnswers: {
        refused: (kind, language) => ({
          body: `${unlookableVerdict(kind, rule)}\n${unlookableCidLine(kind, language, cidMaxLength)}\n`,
          headers: UNLOOKABLE_HEADERS,
        }),
      },
      languageParameter: 'cid',
      listed: (list, language) => `${listDecision(list).verdict}\n${listCidLine(list, language, cidMaxLength)}\n`,
      reported: (evidence, language) => `${REPORTED_DECISION.verdict}\n${reportedCidLine(evidence, language)}\n`,
    },
  } as const satisfies Record<string, Representation & { path: string; schema: unknown }>;

  // The parser alone decides what is a number, and says *why* a spelling is refused; the
  // schemas only document the parameter (DOCUMENTED_ONLY): they are not run.
  // A spelling accepted once is remembered with its parse and hash (front cache).
  function subjectOf(request: PhoneRequest): Subject {
    const raw = request.params.number;
    const known = frontCache?.numberOf(raw);
    if (known !== undefined) return { memo: known };
    const parsed = parsePhoneNumber(raw);
    if (!parsed.ok) return { refused: parsed.reason, dialledAs: parsed.dialledAs };
    const numberHash = hashKey(parsed.value.e164);
    return {
      memo: frontCache
        ? frontCache.remember(raw, parsed.value, numberHash)
        : { parsed: parsed.value, numberHash, info: undefined },
    };
  }

  /**
   * What `/verdict` and `/cid` show of a rule: its label when the operator made it public, or to
   * a PBX (a RATE_LIMIT_EXEMPT address), which shows it to the household on the phone's screen.
   */
  function shownOnText(list: ListMatch, request: PhoneRequest): ListMatch {
    return shownMatch(list, list.labelPublic === true || options.lookupClientOf?.(request).exempt === true);
  }

  /** The block rule over a refused number's digits, read in international form (one reading only), or null. */
  function blockingRuleOf(dialledAs: readonly string[] | undefined): ListMatch | null {
    const [digits] = dialledAs ?? [];
    if (lists === undefined || digits === undefined || dialledAs?.length !== 1) return null;
    const list = lists.match(`+${digits}`, now());
    return list?.list === 'block' ? list : null;
  }

  function numberOf(request: PhoneRequest): NumberMemo {
    const subject = subjectOf(request);
    if ('refused' in subject) throw invalidNumberError(subject.refused);
    return subject.memo;
  }

  // A client that disconnects, or stops waiting (`?wait`), does not cancel the lookup: its
  // fetches are shared with other callers and their results are cached, so finishing them is
  // never wasted.
  // The client rides along so the fetches it starts are queued and charged as its own (its
  // fair turn and share of each upstream budget).
  function lookup(memo: NumberMemo, wait: WaitRequest, request: PhoneRequest): Promise<LookupResult> {
    const lookupOptions: LookupOptions = { numberHash: memo.numberHash };
    if (wait.waitMs !== undefined) lookupOptions.waitMs = wait.waitMs;
    const client = options.lookupClientOf?.(request);
    if (client !== undefined) lookupOptions.client = client;
    return lookupService.lookup(memo.parsed, lookupOptions);
  }

  /**
   * The request's wait. A malformed `?wait` is refused here, the one place, on every route that
   * keeps its errors (JSON); a route that always answers (text) ignores it.
   */
  function waitOf(request: PhoneRequest, alwaysAnswers: boolean): WaitRequest {
    const wait = waitRequestOf(request.query, request.headers.prefer, lookupTimeoutMs);
    if (wait.invalid && !alwaysAnswers) {
      throw new ApiError('bad_request', '`wait` must be a whole number of milliseconds (0 or more).', {
        code: 'invalid_wait',
      });
    }
    return wait;
  }

  /**
   * Answers a request: at once (synchronously, no promise) when the number's entry is held in
   * the front cache, else through the lookup (a promise). Errors are thrown either way.
   */
  function answer(
    kind: keyof typeof REPRESENTATIONS,
    request: PhoneRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> | undefined {
    const representation: Representation = REPRESENTATIONS[kind];
    const language: Language =
      representation.languageParameter === undefined
        ? 'fr'
        : languageOf(request.query, representation.languageParameter);
    const wait = waitOf(request, representation.alwaysAnswers !== undefined);
    if (wait.preferenceApplied !== undefined) reply.header('preference-applied', wait.preferenceApplied);
    const subject = subjectOf(request);
    if ('refused' in subject) {
      // The operator blocked a range: digits dialled under it are blocked, whatever the parser
      // thinks of the rest (a wrong digit count). An allow names callers the operator knows,
      // which a malformed number is not: only a block applies here.
      const blocked = blockingRuleOf(subject.dialledAs);
      if (blocked !== null) {
        onListMatch?.(blocked.list);
        screened(
          representation,
          refusedNumberOf(subject.dialledAs),
          () => listDecision(blocked),
          () => listCidLine(blocked, DEFAULT_LANGUAGE, cidMaxLength),
        );
        if (representation.listed !== undefined) {
          reply.headers(LISTED_HEADERS.block);
          return sendBuilt(
            request,
            reply,
            representation.listed(shownOnText(blocked, request), language),
            'no-store',
            representation.contentType,
          );
        }
        if (representation.alwaysAnswers === undefined)
          throw invalidNumberError(subject.refused, {
            meta: { list: shownMatch(blocked, blocked.labelPublic === true), reports: null },
          });
      }
      if (representation.alwaysAnswers === undefined) throw invalidNumberError(subject.refused);
      const kind = unlookableOf(subject.refused);
      screened(
        representation,
        kind === 'withheld' ? '' : refusedNumberOf(subject.dialledAs),
        () => unlookableDecision(kind, rule),
        () => unlookableCidLine(kind, DEFAULT_LANGUAGE, cidMaxLength),
      );
      const refused = representation.alwaysAnswers.refused(kind, language);
      reply.headers(refused.headers);
      return sendBuilt(request, reply, refused.body, 'no-store', representation.contentType);
    }
    const { memo } = subject;
    // When the call is made: the request's time, or a text route's `?at=` (a malformed one is
    // ignored, as a text route ignores a malformed `wait`: `X-Answer-At` says which time was
    // used). docs/legal-hours.md.
    const at = representation.alwaysAnswers === undefined ? undefined : atOf(request.query);
    const clock: LegalHoursClock = { atMs: typeof at === 'number' ? at : now(), timeZone: legalHoursTimeZone };
    if (at !== undefined) reply.header('x-answer-at', new Date(clock.atMs).toISOString());
    // An answer for another time is never kept nor held; one that depends on the time of the
    // call (an NPV or call-centre caller: `outside_legal_hours`) is built for each request and
    // lives no longer than the next legal-hours boundary (docs/legal-hours.md "Caching").
    const timed: Timed = at !== undefined ? 'at' : legalHoursApply(memo.parsed) ? 'hours' : null;
    // The operator's lists decide first: a text answer at once, with no upstream asked; a JSON
    // answer still looks the number up and says which rule applies in `meta.list`.
    const list = lists === undefined ? null : lists.match(memo.parsed.e164, now());
    if (list !== null) {
      onListMatch?.(list.list);
      if (representation.listed !== undefined) {
        screened(
          representation,
          memo.parsed.e164,
          () => listDecision(list),
          () => listCidLine(list, DEFAULT_LANGUAGE, cidMaxLength),
        );
        reply.headers(LISTED_HEADERS[list.list]);
        return sendBuilt(
          request,
          reply,
          representation.listed(shownOnText(list, request), language),
          'no-store',
          representation.contentType,
        );
      }
      // A body with a rule in it is never kept: a held body always says `list: null`, which
      // stays true exactly as long as no rule matches (checked above on every request).
      return answerByLookup(
        representation,
        memo,
        wait,
        language,
        request,
        reply,
        clock,
        timed,
        shownMatch(list, list.labelPublic === true),
        reports?.evidence(memo.parsed.e164, now()) ?? null,
      );
    }
    // Then the reports: a `spam` verdict answers the text routes at once, with no upstream asked;
    // any evidence keeps the answer out of the front cache (a held body always says
    // `reports: null`, which stays true exactly as long as nobody reported the number: checked
    // here on every request, so a new report is seen at once).
    const evidence = reports === undefined ? null : reports.evidence(memo.parsed.e164, now());
    if (evidence !== null) {
      if (evidence.verdict === 'spam' && representation.reported !== undefined) {
        screened(
          representation,
          memo.parsed.e164,
          () => REPORTED_DECISION,
          () => reportedCidLine(evidence, DEFAULT_LANGUAGE),
        );
        reply.headers(REPORTED_HEADERS);
        return sendBuilt(
          request,
          reply,
          representation.reported(evidence, language),
          'no-store',
          representation.contentType,
        );
      }
      return answerByLookup(representation, memo, wait, language, request, reply, clock, timed, null, evidence);
    }
    const route = representation.frontRoute(language);
    if (frontCache !== undefined && timed === null) {
      const nowMs = now();
      let entry = frontCache.entry(memo.numberHash, nowMs);
      if (entry === undefined) {
        const fresh = lookupService.peekFresh?.(memo.parsed, memo.numberHash);
        if (fresh !== undefined) {
          entry = frontCache.store(memo.numberHash, fresh.result, fresh.freshUntilMs);
          options.onLookedUp?.(memo.parsed.e164, textFactsOf(memo, fresh.result, null), request);
        }
      }
      if (entry !== undefined) {
        const input: RenderInput = { reply, memo, result: entry.result, language, list: null, reports: null, clock };
        let body = entry[route];
        if (body === undefined) {
          body = encodeBody(representation.render(input));
          frontCache.fill(memo.numberHash, entry, route, body);
        }
        if (representation.headers !== undefined) reply.headers(representation.headers(input));
        if (onScreened !== undefined) screenedLookup(representation, memo, input.result, null, clock);
        sendEncoded(request, reply, body, maxAgeOf(entry.freshUntilMs, nowMs), representation.contentType);
        return undefined;
      }
    }
    return answerByLookup(representation, memo, wait, language, request, reply, clock, timed);
  }

  /** A looked-up answer's record: its facts are made again by the recorder, as the answer made them. */
  function screenedLookup(
    representation: Representation,
    memo: NumberMemo,
    result: LookupResult,
    evidence: ReportEvidence | null,
    clock: LegalHoursClock,
  ): void {
    if (onScreened !== undefined && representation.alwaysAnswers !== undefined)
      onScreened(new LookedUpCall(now(), memo, result, evidence, clock, rule, cidMaxLength));
  }

  async function answerByLookup(
    representation: Representation,
    memo: NumberMemo,
    wait: WaitRequest,
    language: Language,
    request: PhoneRequest,
    reply: FastifyReply,
    clock: LegalHoursClock,
    timed: Timed,
    list: ListMatch | null = null,
    evidence: ReportEvidence | null = null,
  ): Promise<FastifyReply> {
    const result = await lookup(memo, wait, request);
    options.onLookedUp?.(memo.parsed.e164, textFactsOf(memo, result, evidence), request);
    if (representation.alwaysAnswers === undefined && isAllSourcesFailed(result)) {
      // The number's own facts need no upstream: they still answer part of the question. So
      // does the operator's rule (`meta.list`, as on a 200): an allowed doctor stays allowed.
      throw new ApiError(
        'all_sources_failed',
        'No upstream data source could be read; see `sources` for each outcome.',
        {
          number: memo.parsed.number,
          phoneInfo: memo.parsed.phoneInfo,
          sources: failureReasons(result),
          meta: { list, reports: evidence },
        },
      );
    }
    const input: RenderInput = { reply, memo, result, language, list, reports: evidence, clock };
    if (onScreened !== undefined) screenedLookup(representation, memo, result, evidence, clock);
    let freshUntilMs =
      list === null && evidence === null && timed !== 'at' ? lookupService.freshUntilOf?.(result) : undefined;
    // The hint was decided at the request's time: the answer holds until the next boundary after it.
    if (freshUntilMs !== undefined && timed === 'hours')
      freshUntilMs = Math.min(freshUntilMs, nextLegalHoursBoundary(clock.atMs, clock.timeZone).getTime());
    const cacheControl = freshUntilMs === undefined ? 'no-store' : maxAgeOf(freshUntilMs, now());
    if (representation.headers !== undefined) reply.headers(representation.headers(input));
    return sendBuilt(request, reply, representation.render(input), cacheControl, representation.contentType);
  }

  // Each representation is a route of its own: the table is the only place one is added. A text
  // route also says what it answers for a number segment the router could not hand it (over
  // maxParamLength): the catch-all route gives that 200 (problems.ts).
  for (const kind of ['report', 'score', 'verdict', 'cid'] as const) {
    const { path, schema } = REPRESENTATIONS[kind];
    const kindOf =
      kind === 'verdict' ? (query: PhoneQuery) => (asksForCidLine(query) ? 'verdictWithCid' : 'verdict') : () => kind;
    const config =
      (REPRESENTATIONS[kind] as Representation).alwaysAnswers === undefined
        ? API_ROUTE
        : {
            ...API_ROUTE,
            refusedText: (query: Readonly<Record<string, string>>) => {
              const representation: Representation = REPRESENTATIONS[kindOf(query)];
              const language: Language =
                representation.languageParameter === undefined
                  ? 'fr'
                  : languageOf(query, representation.languageParameter);
              const refused = representation.alwaysAnswers?.refused('invalid', language) ?? { body: '', headers: {} };
              return { body: refused.body, headers: refused.headers, contentType: representation.contentType };
            },
          };
    typed.get(path, { config, validatorCompiler: DOCUMENTED_ONLY, schema }, (request, reply) =>
      answer(kindOf(request.query), request, reply),
    );
  }

  typed.get(
    '/api/phone/:number/info',
    { config: API_ROUTE, validatorCompiler: DOCUMENTED_ONLY, schema: phoneRouteSchemas.numberInfo },
    (request, reply) => {
      // `/info` never waits, but a malformed `wait` is refused as on the other JSON routes.
      waitOf(request, false);
      const memo = numberOf(request);
      let body = memo.info;
      if (body === undefined) {
        body = encodeBody(
          serialized(reply, {
            success: true as const,
            data: { number: memo.parsed.number, phoneInfo: memo.parsed.phoneInfo },
          }),
        );
        if (frontCache === undefined) memo.info = body;
        else frontCache.rememberInfo(request.params.number, memo, body);
      }
      // Synchronous: no promise per request.
      sendEncoded(request, reply, body, INFO_CACHE_CONTROL);
    },
  );
}
