// The plain-text answers phone systems read (`/verdict`, `/cid`): one word or one display line
// made from the same lookup as the JSON report. Pure. The rules and the exact wording are in
// docs/integrations/README.md; the words themselves in wording/catalogue.ts.
import type { Risk, SourceDataBySlot } from './report.js';
import type { SourceCheck } from './report-builder.js';
import { computeScore, scoreToRisk } from './score.js';
import { words, type Language } from './wording/catalogue.js';
import type { ListMatch } from './ports/operator-lists.js';
import { safeDisplayLine } from './display-line.js';

export { displayLineMaxBytes, safeDisplayLine } from './display-line.js';

export const VERDICTS = ['block', 'warn', 'allow', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

export interface VerdictRule {
  /** A score at or above this blocks (VERDICT_BLOCK_SCORE). */
  blockScore: number;
  /** A score at or above this (and below blockScore) warns (VERDICT_WARN_SCORE). */
  warnScore: number;
  /** The verdict an NPV range asks for (VERDICT_NPV). */
  npv: Verdict;
  /** The verdict for a withheld caller (VERDICT_WITHHELD). */
  withheld: Verdict;
}

/** What the text answers are made from: the number's one fact that matters here and the sources' data. */
export interface TextFacts {
  isNPV: boolean;
  /** The report's sources (a slot without data has its empty fields). */
  sources: SourceDataBySlot;
  /** Whether any source could say something (report-builder.ts sourceCheckOf): the words for "no score" differ. */
  check: SourceCheck;
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

export function verdictOf(facts: TextFacts, rule: VerdictRule): Verdict {
  const byScore = scoreVerdict(computeScore(facts.sources).score, rule);
  return facts.isNPV ? stronger(byScore, rule.npv) : byScore;
}

export function unlookableVerdict(kind: Unlookable, rule: VerdictRule): Verdict {
  return kind === 'withheld' ? rule.withheld : 'unknown';
}

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

/** The caller-ID line of a number that was looked up. */
export function cidLineOf(facts: TextFacts, language: Language, maxLength: number): string {
  const { score, risk } = reputationOf(facts);
  let line: string;
  if (risk === 'suspicious')
    line = words(language, 'cid.suspicious', {
      score: score ?? '',
      category: safeDisplayLine(categoryOf(facts.sources), maxLength),
    });
  else if (facts.isNPV) line = words(language, 'cid.npv');
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
