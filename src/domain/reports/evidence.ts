// The evidence rule (docs/reports.md, "Evidence"): from the votes of one number, what the
// deployment's reporters say of it. Pure: the votes, the time and the settings are parameters.
//
// Each vote weighs 1 when cast and half as much every `halfLifeDays`; a vote older than
// `retentionDays` no longer counts (the stores delete it too). The spam share is judged by the
// lower bound of its Wilson score interval over the decayed weights, never by the raw share, so
// that two fresh votes are not "100 % spam" and one reporter never decides for everyone.
import type { ReportEvidence, ReportRating, ReportVerdict, ReportVote } from '../ports/caller-reports.js';
import { weightKind } from './ratings.js';

/**
 * The z of the Wilson score lower bound: 1, about an 84 % one-sided confidence. With only spam
 * votes the bound is w / (w + 1) for a total weight w: 0.5 for one fresh vote, 0.67 for two,
 * and it stays at or above the bar while w ≥ 2/3: two votes would weigh that little only after
 * 198 days, past the 180 days they are kept.
 */
export const WILSON_Z = 1;

/**
 * The bar the lower bound must reach (with enough distinct reporters) for the verdict `spam`,
 * and likewise the legitimate share's for `legitimate`. Fresh votes: two spam (0.67) and three
 * spam against one legitimate (0.5) reach it; two spam against one legitimate (0.386) do not,
 * so one legitimate vote takes two spam votes back below the bar.
 */
export const EVIDENCE_BAR = 0.4;

const DAY_MS = 86_400_000;

/** The settings of the rule (REPORT_HALF_LIFE_DAYS, REPORT_MIN_REPORTERS, REPORT_RETENTION_DAYS). */
export interface EvidenceRule {
  halfLifeDays: number;
  /** Distinct reporters a verdict `spam` (or `legitimate`) needs, at least 1. */
  minReporters: number;
  retentionDays: number;
}

/**
 * The Wilson score interval's lower bound for `positive` out of `total` (weights, not only whole
 * counts), with `z`; 0 when `total` is 0.
 */
export function wilsonLowerBound(positive: number, total: number, z: number = WILSON_Z): number {
  if (total <= 0) return 0;
  const share = positive / total;
  const z2 = z * z;
  const centre = share + z2 / (2 * total);
  const spread = z * Math.sqrt((share * (1 - share)) / total + z2 / (4 * total * total));
  return Math.max(0, (centre - spread) / (1 + z2 / total));
}

/** A vote is in force from when it was cast until `retentionDays` later (then gone, not counted). */
export function voteInForce(vote: Pick<ReportVote, 'at'>, now: number, retentionDays: number): boolean {
  return now - vote.at < retentionDays * DAY_MS;
}

/** A vote's weight at `now`: 1 when cast, halved every `halfLifeDays` (a vote dated after `now` weighs 1). */
export function decayedWeight(at: number, now: number, halfLifeDays: number): number {
  const ageDays = Math.max(0, now - at) / DAY_MS;
  return 0.5 ** (ageDays / halfLifeDays);
}

const round2 = (value: number): number => Math.round(value * 100) / 100;

/**
 * What the votes on one number say at `now`, or null when none is in force. A token's latest vote
 * is its only one (the stores keep one per token and number; given several, the latest counts).
 * The verdict, in this order: `spam` (spam reporters ≥ minReporters and the spam share's lower
 * bound ≥ EVIDENCE_BAR), `legitimate` (the same for legitimate), `suspect` (a spam vote in force
 * and more spam weight than legitimate), else `unclear`.
 */
export function evidenceOf(votes: Iterable<ReportVote>, now: number, rule: EvidenceRule): ReportEvidence | null {
  const latest = new Map<string, ReportVote>();
  for (const vote of votes) {
    if (!voteInForce(vote, now, rule.retentionDays)) continue;
    const earlier = latest.get(vote.tokenId);
    if (earlier === undefined || vote.at >= earlier.at) latest.set(vote.tokenId, vote);
  }
  if (latest.size === 0) return null;
  let spam = 0;
  let legitimate = 0;
  let spamReporters = 0;
  let legitimateReporters = 0;
  let lastAt = Number.NEGATIVE_INFINITY;
  const categories: Partial<Record<ReportRating, number>> = {};
  for (const vote of latest.values()) {
    const weight = decayedWeight(vote.at, now, rule.halfLifeDays);
    const kind = weightKind(vote.rating);
    if (kind === 'spam') {
      spam += weight;
      spamReporters += 1;
    } else if (kind === 'legitimate') {
      legitimate += weight;
      legitimateReporters += 1;
    }
    categories[vote.rating] = (categories[vote.rating] ?? 0) + 1;
    lastAt = Math.max(lastAt, vote.at);
  }
  const total = spam + legitimate;
  let verdict: ReportVerdict;
  if (spamReporters >= rule.minReporters && wilsonLowerBound(spam, total) >= EVIDENCE_BAR) verdict = 'spam';
  else if (legitimateReporters >= rule.minReporters && wilsonLowerBound(legitimate, total) >= EVIDENCE_BAR)
    verdict = 'legitimate';
  else if (spamReporters > 0 && spam > legitimate) verdict = 'suspect';
  else verdict = 'unclear';
  return {
    spam: round2(spam),
    legitimate: round2(legitimate),
    reporters: latest.size,
    categories,
    lastReportAt: new Date(lastAt).toISOString(),
    verdict,
  };
}
