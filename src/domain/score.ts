// The reputation score of the score endpoint and the risk level derived from it. Pure.
//
// Rule: the primary source's own score (1–9) when it has one; otherwise the mean of the
// available percentages – community `dangerPercent` and signals `spamScore`, both 0–100 –
// mapped to 1–9 as 1 + round(p × 8 / 100); otherwise null (risk `unknown`). The full report's
// `primary.score` is always the upstream's own value; only the score endpoint derives.
import type { Risk, SourceDataBySlot } from './report.js';

/** Where a score came from: the primary source's own, or derived from the others' percentages. */
export const SCORE_SOURCES = ['primary', 'derived'] as const;
export type ScoreSource = (typeof SCORE_SOURCES)[number];

export interface ComputedScore {
  score: number | null;
  /** Where the score came from; null exactly when score is null. */
  scoreSource: ScoreSource | null;
}

/** docs/engine.md#the-score-rule-apiphonenumberscore: 1–4 trustworthy, 5 neutral, 6–9 suspicious, null unknown. A fractional score is rounded first. */
export function scoreToRisk(score: number | null): Risk {
  if (score === null || !Number.isFinite(score)) return 'unknown';
  const rounded = Math.round(score);
  if (rounded <= 4) return 'trustworthy';
  if (rounded === 5) return 'neutral';
  return 'suspicious';
}

/** Maps a 0–100 percentage to the 1–9 scale: 0 → 1, 50 → 5, 100 → 9. Out-of-range input is clamped. */
export function percentToScore(percent: number): number {
  const clamped = Math.min(100, Math.max(0, percent));
  return 1 + Math.round((clamped * 8) / 100);
}

function isUsable(value: number | null): value is number {
  return value !== null && Number.isFinite(value);
}

/**
 * Takes the report's sources as built by the report builder (a slot without data has its
 * fields null), so a failed or stale-less source simply contributes nothing.
 */
export function computeScore(sources: SourceDataBySlot): ComputedScore {
  const primaryScore = sources.primary.score;
  if (isUsable(primaryScore)) return { score: primaryScore, scoreSource: 'primary' };
  const percentages = [sources.community.dangerPercent, sources.signals.spamScore].filter(isUsable);
  if (percentages.length === 0) return { score: null, scoreSource: null };
  const mean = percentages.reduce((sum, value) => sum + value, 0) / percentages.length;
  return { score: percentToScore(mean), scoreSource: 'derived' };
}
