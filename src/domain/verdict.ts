// The plain-text answers phone systems read (`/verdict`, `/cid`): one word or one display line
// made from the same lookup as the JSON report. Pure. The rules and the exact wording are in
// docs/integrations/README.md; the words themselves in wording/catalogue.ts. What the deployment's
// own reporters said (`reports`, docs/reports.md "In the answers") comes after the operator's
// lists and before the score: `reportedVerdict` and `reportCidLine` are that rule.
import type { Risk, SourceDataBySlot } from './report.js';
import type { SourceCheck } from './report-builder.js';
import { computeScore, scoreToRisk } from './score.js';
import { words, type Language } from './wording/catalogue.js';
import type { ListMatch } from './ports/operator-lists.js';
import { safeDisplayLine } from './display-line.js';
import type { ReportEvidence, ReportRating } from './ports/caller-reports.js';
import { weightKind } from './reports/ratings.js';
import type { DecidedBy, Verdict } from './verdict-names.js';

export { displayLineMaxBytes, safeDisplayLine } from './display-line.js';
export { DECIDED_BY, VERDICTS, type DecidedBy, type Verdict } from './verdict-names.js';

export interface VerdictRule {
  /** A score at or above this blocks (VERDICT_BLOCK_SCORE). */
  blockScore: number;
  /** A score at or above this (and below blockScore) warns (VERDICT_WARN_SCORE). */
  warnScore: number;
  /** The verdict an NPV range asks for (VERDICT_NPV). */
  npv: Verdict;
  /** The verdict for a withheld caller (VERDICT_WITHHELD). */
  withheld: Verdict;
  /** The verdict a call-centre operator's block asks for (VERDICT_CALL_CENTRE). */
  callCentre: Verdict;
  /** The floor for an NPV or call-centre caller outside the legal hours (VERDICT_OUTSIDE_HOURS). */
  outsideHours: 'warn' | 'block';
}

/** What the text answers are made from: the number's one fact that matters here and the sources' data. */
export interface TextFacts {
  isNPV: boolean;
  /** The report's sources (a slot without data has its empty fields). */
  sources: SourceDataBySlot;
  /** Whether any source could say something (report-builder.ts sourceCheckOf): the words for "no score" differ. */
  check: SourceCheck;
  /** What the deployment's reporters said of the number (`meta.reports`); absent or null when nobody did. */
  reports?: ReportEvidence | null;
  /** The hint `call_centre_operator`: a fixed or non-geographic block of a call-centre operator. */
  callCentreOperator?: boolean;
  /** The hint `outside_legal_hours` at the time of the call (hints.ts computeHints); absent: inside. */
  outsideLegalHours?: boolean;
}

/** What a phone system is told about a caller it cannot look up. */
export type Unlookable = 'withheld' | 'invalid';

// When the score and the NPV range disagree, the stronger verdict wins: an operator who sets
// VERDICT_NPV=block blocks every NPV number whatever its score, and a score-8 NPV number is
// blocked whatever VERDICT_NPV says. `unknown` is the weakest: any fact beats it.
const SEVERITY: Readonly<Record<Verdict, number>> = { unknown: 0, allow: 1, warn: 2, block: 3 };

function stronger(a: Verdict, b: Verdict): Verdict {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}

/** The score rule alone: block, warn, allow for a lower score, unknown without a score. */
export function scoreVerdict(score: number | null, rule: VerdictRule): Verdict {
  if (score === null || !Number.isFinite(score)) return 'unknown';
  if (score >= rule.blockScore) return 'block';
  if (score >= rule.warnScore) return 'warn';
  return 'allow';
}

/**
 * The verdict, reports first, then the score (the operator's lists decide before this is asked;
 * docs/reports.md "In the answers"):
 * - reports `spam` (enough reporters, confidently): `block`, whatever the score;
 * - reports `suspect` (reported as spam, below the bar): at least `warn`, the score may say `block`;
 * - reports `legitimate` (confidently): the score alone never blocks (`block` becomes `warn`), and
 *   the reports are a fact (`unknown` becomes `allow`); VERDICT_NPV still applies, an operator's
 *   setting on a whole range, which an allow rule overrides for one number;
 * - reports `unclear`, or none: the score and the NPV rule alone.
 *
 * Then the ranges' rules, each a floor (the stronger verdict wins): VERDICT_NPV for an NPV
 * number, VERDICT_CALL_CENTRE for a call-centre operator's block, VERDICT_OUTSIDE_HOURS for
 * either calling outside the legal hours (docs/legal-hours.md). Like VERDICT_NPV, they are the
 * operator's settings on whole ranges, which an allow rule overrides for one number.
 */
export function verdictOf(facts: TextFacts, rule: VerdictRule): Verdict {
  return decisionOf(facts, rule).verdict;
}

/** A text answer's verdict and what decided it, made by one function so the two never disagree. */
export interface Decision {
  verdict: Verdict;
  decidedBy: DecidedBy;
}

/**
 * verdictOf's rule, saying what decided: the last rule that changed the verdict (a floor that
 * only equals it changes nothing), else the score when it gave one, else `none`. Reports that
 * lower a blocking score to `warn`, or make an unknown caller `allow`, decided.
 */
export function decisionOf(facts: TextFacts, rule: VerdictRule): Decision {
  const reported = facts.reports?.verdict;
  if (reported === 'spam') return { verdict: 'block', decidedBy: 'reports' };
  let verdict = scoreVerdict(computeScore(facts.sources).score, rule);
  let decidedBy: DecidedBy = verdict === 'unknown' ? 'none' : 'score';
  const apply = (next: Verdict, cause: DecidedBy): void => {
    if (next === verdict) return;
    verdict = next;
    decidedBy = cause;
  };
  if (reported === 'legitimate') apply(stronger(verdict === 'block' ? 'warn' : verdict, 'allow'), 'reports');
  if (facts.isNPV) apply(stronger(verdict, rule.npv), 'npv');
  if (facts.callCentreOperator === true) apply(stronger(verdict, rule.callCentre), 'call_centre');
  if (facts.outsideLegalHours === true) apply(stronger(verdict, rule.outsideHours), 'legal_hours');
  if (reported === 'suspect') apply(stronger(verdict, 'warn'), 'reports');
  return { verdict, decidedBy };
}

export function unlookableVerdict(kind: Unlookable, rule: VerdictRule): Verdict {
  return unlookableDecision(kind, rule).verdict;
}

/** A withheld caller gets VERDICT_WITHHELD, an invalid number `unknown`: decided by what the caller is. */
export function unlookableDecision(kind: Unlookable, rule: VerdictRule): Decision {
  return kind === 'withheld'
    ? { verdict: rule.withheld, decidedBy: 'withheld' }
    : { verdict: 'unknown', decidedBy: 'invalid' };
}

/** An operator's rule decides by itself: its list is the verdict. */
export function listDecision(list: Pick<ListMatch, 'list'>): Decision {
  return { verdict: list.list, decidedBy: 'lists' };
}

/** Reports that say `spam` decide by themselves (reportedVerdict). */
export const REPORTED_DECISION: Readonly<Decision> = Object.freeze({ verdict: 'block', decidedBy: 'reports' });

/** The score and risk the `X-Reputation-*` headers carry. */
export function reputationOf(facts: TextFacts): { score: number | null; risk: Risk } {
  const { score } = computeScore(facts.sources);
  return { score, risk: scoreToRisk(score) };
}

/**
 * What the sources call this caller, for the suspicious line: the caller type most of the
 * primary source's comments give (the first of equals), else the community's top category,
 * else the signals' caller type; "" when none says.
 */
export function categoryOf(sources: SourceDataBySlot): string {
  const counts = new Map<string, number>();
  for (const comment of sources.primary.commentList) {
    const type = comment.callerType.trim();
    if (type !== '') counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  let best = '';
  let bestCount = 0;
  for (const [type, count] of counts) {
    if (count > bestCount) {
      best = type;
      bestCount = count;
    }
  }
  if (best !== '') return best;
  return sources.community.topCategory.trim() || sources.signals.callerType.trim();
}

/**
 * The line without a score, by what the sources could say. None is "Inconnu", which a French
 * phone shows for a withheld caller (that one is `cid.withheld`).
 */
const NO_SCORE_LINE: Readonly<Record<SourceCheck, 'cid.unknown' | 'cid.notChecked' | 'cid.notCovered'>> = {
  answered: 'cid.unknown',
  not_checked: 'cid.notChecked',
  not_covered: 'cid.notCovered',
};

/**
 * Which spam rating a tie between equally reported ones names: the one a person most needs to
 * hear first (a fraud before a poll).
 */
const SPAM_RATING_ORDER: readonly ReportRating[] = [
  'fraud',
  'gamble',
  'ping',
  'advertising',
  'poll',
  'political',
  'other',
];

/** The spam rating most reporters gave (ties: SPAM_RATING_ORDER), or undefined when none gave one. */
export function topSpamRating(evidence: ReportEvidence): ReportRating | undefined {
  let best: ReportRating | undefined;
  let bestCount = 0;
  for (const rating of SPAM_RATING_ORDER) {
    const count = evidence.categories[rating] ?? 0;
    if (count > bestCount) {
      best = rating;
      bestCount = count;
    }
  }
  return best;
}

/** Reporters whose vote in force is a kind of spam (one vote per reporter and number). */
export function spamReportersOf(evidence: ReportEvidence): number {
  let count = 0;
  for (const [rating, votes] of Object.entries(evidence.categories) as Array<[ReportRating, number | undefined]>)
    if (weightKind(rating) === 'spam') count += votes ?? 0;
  return count;
}

/**
 * The caller-ID line the reports give, or null when they give none (`unclear`: the score's line
 * stands). `spam` and `suspect` alike: `SIGNALÉ 3× Arnaque` (the spam reporters, the rating most
 * of them gave); `legitimate`: `SIGNALÉ FIABLE 2×` (the legitimate reporters).
 */
export function reportCidLine(evidence: ReportEvidence, language: Language, maxLength: number): string | null {
  if (evidence.verdict === 'spam' || evidence.verdict === 'suspect') {
    const rating = topSpamRating(evidence);
    return safeDisplayLine(
      words(language, 'cid.reported', {
        count: spamReportersOf(evidence),
        category: rating === undefined ? '' : words(language, `report.${rating}` as const),
      }),
      maxLength,
    );
  }
  if (evidence.verdict === 'legitimate')
    return safeDisplayLine(
      words(language, 'cid.reportedLegitimate', { count: evidence.categories.legitimate ?? 0 }),
      maxLength,
    );
  return null;
}

/**
 * The caller-ID line of a number that was looked up: the reports' line first (reportCidLine),
 * then outside the legal hours `Hors horaires légaux`, else the score's (an NPV or call-centre
 * number that is not suspicious says what range it is in).
 */
export function cidLineOf(facts: TextFacts, language: Language, maxLength: number): string {
  const reported = facts.reports == null ? null : reportCidLine(facts.reports, language, maxLength);
  if (reported !== null) return reported;
  const { score, risk } = reputationOf(facts);
  let line: string;
  // Outside the legal hours, what decides the call is the hour: said before the score.
  if (facts.outsideLegalHours === true) line = words(language, 'cid.outsideHours');
  else if (risk === 'suspicious')
    line = words(language, 'cid.suspicious', {
      score: score ?? '',
      category: safeDisplayLine(categoryOf(facts.sources), maxLength),
    });
  else if (facts.isNPV) line = words(language, 'cid.npv');
  else if (facts.callCentreOperator === true) line = words(language, 'cid.callCentre');
  else if (risk === 'neutral') line = words(language, 'cid.neutral', { score: score ?? '' });
  else if (risk === 'trustworthy') line = words(language, 'cid.trustworthy', { score: score ?? '' });
  else line = words(language, NO_SCORE_LINE[facts.check]);
  return safeDisplayLine(line, maxLength);
}

export function unlookableCidLine(kind: Unlookable, language: Language, maxLength: number): string {
  return safeDisplayLine(words(language, kind === 'withheld' ? 'cid.withheld' : 'cid.invalid'), maxLength);
}

/** The caller-ID line of a number an operator's rule decides: its label, else the catalogue's words. */
export function listCidLine(list: ListMatch, language: Language, maxLength: number): string {
  const label = list.label === null ? '' : safeDisplayLine(list.label, maxLength);
  return label !== ''
    ? label
    : safeDisplayLine(words(language, list.list === 'block' ? 'cid.listBlock' : 'cid.listAllow'), maxLength);
}
