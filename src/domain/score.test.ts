import { describe, expect, it } from 'vitest';
import {
  COMMUNITY_DATA,
  PRIMARY_DATA,
  SIGNALS_DATA,
  frenchMobile,
  errorSlot,
  lookupResult,
  notFoundSlot,
  okSlot,
} from '../../harness/lookup.js';
import { buildScoreResult } from './report-builder.js';
import { emptySourceData, type SourceDataBySlot } from './report.js';
import { computeScore, percentToScore, scoreToRisk } from './score.js';

describe('scoreToRisk', () => {
  it.each([
    [1, 'trustworthy'],
    [2, 'trustworthy'],
    [3, 'trustworthy'],
    [4, 'trustworthy'],
    [5, 'neutral'],
    [6, 'suspicious'],
    [7, 'suspicious'],
    [8, 'suspicious'],
    [9, 'suspicious'],
    [null, 'unknown'],
    [Number.NaN, 'unknown'],
    [4.4, 'trustworthy'],
    [4.6, 'neutral'],
    [5.5, 'suspicious'],
  ] as const)('maps %s to %s', (score, risk) => {
    expect(scoreToRisk(score)).toBe(risk);
  });
});

describe('percentToScore: 1 + round(p × 8 / 100)', () => {
  it.each([
    [0, 1],
    [6.24, 1],
    [6.25, 2],
    [50, 5],
    [55, 5],
    [85, 8],
    [100, 9],
    [-10, 1],
    [150, 9],
  ])('maps %s %% to %s', (percent, score) => {
    expect(percentToScore(percent)).toBe(score);
  });
});

function sourcesWith(
  primaryScore: number | null,
  dangerPercent: number | null,
  spamScore: number | null,
): SourceDataBySlot {
  const empty = emptySourceData();
  return {
    primary: { ...empty.primary, score: primaryScore },
    community: { ...empty.community, dangerPercent },
    signals: { ...empty.signals, spamScore },
  };
}

describe('computeScore on every combination of available sources', () => {
  // primary score | community dangerPercent | signals spamScore → score, source
  it.each([
    [7, 80, 30, 7, 'primary'],
    [7, 80, null, 7, 'primary'],
    [7, null, 30, 7, 'primary'],
    [7, null, null, 7, 'primary'],
    [null, 80, 30, 5, 'derived'], // mean 55 → 1 + round(4.4)
    [null, 80, null, 7, 'derived'], // 80 → 1 + round(6.4)
    [null, null, 30, 3, 'derived'], // 30 → 1 + round(2.4)
    [null, null, null, null, null],
  ] as const)(
    'primary %s, community %s, signals %s → %s (%s)',
    (primaryScore, dangerPercent, spamScore, score, scoreSource) => {
      expect(computeScore(sourcesWith(primaryScore, dangerPercent, spamScore))).toEqual({ score, scoreSource });
    },
  );

  it('keeps a primary score of 1 (a low score is a score, not a missing one)', () => {
    expect(computeScore(sourcesWith(1, 100, 100))).toEqual({ score: 1, scoreSource: 'primary' });
  });

  it('counts a percentage of 0 as available data', () => {
    expect(computeScore(sourcesWith(null, 0, null))).toEqual({ score: 1, scoreSource: 'derived' });
  });
});

describe('buildScoreResult: the score endpoint over slot outcomes', () => {
  const number = frenchMobile(7);

  it('uses the primary score when the primary slot is ok', () => {
    const built = buildScoreResult(
      number,
      lookupResult(okSlot(PRIMARY_DATA), okSlot(COMMUNITY_DATA), okSlot(SIGNALS_DATA)),
    );
    expect(built.score).toEqual({ number: number.number, score: 7, risk: 'suspicious' });
    expect(built.meta.scoreSource).toBe('primary');
  });

  it('derives from community and signals when the primary slot failed', () => {
    const built = buildScoreResult(
      number,
      lookupResult(errorSlot('timeout'), okSlot(COMMUNITY_DATA), okSlot(SIGNALS_DATA)),
    );
    // mean(80, 90) = 85 → 1 + round(6.8) = 8
    expect(built.score).toEqual({ number: number.number, score: 8, risk: 'suspicious' });
    expect(built.meta.scoreSource).toBe('derived');
    const asked = { fetchedAt: '2026-03-01T12:00:00.000Z', cache: 'miss' };
    expect(built.meta.sources.primary).toEqual({ status: 'error', reason: 'timeout', cause: 'timeout', ...asked });
  });

  it('derives when the primary is ok but has no rating, using stale community data', () => {
    const built = buildScoreResult(
      number,
      lookupResult(
        okSlot({ ...PRIMARY_DATA, score: null }),
        okSlot({ ...COMMUNITY_DATA, dangerPercent: 20 }, 'stale'),
        notFoundSlot(),
      ),
    );
    expect(built.score).toEqual({ number: number.number, score: 3, risk: 'trustworthy' });
    expect(built.meta.scoreSource).toBe('derived');
  });

  it('answers null/unknown when no source has data, and 200 (not 502) when they were not_found', () => {
    const built = buildScoreResult(number, lookupResult(notFoundSlot(), notFoundSlot(), notFoundSlot()));
    expect(built.score).toEqual({ number: number.number, score: null, risk: 'unknown' });
    expect(built.meta.scoreSource).toBeNull();
    expect(built.allSourcesFailed).toBe(false);
  });

  it('ignores data of a slot that is not ok', () => {
    const failedWithData = { ...errorSlot<'community'>('parse'), data: COMMUNITY_DATA };
    const built = buildScoreResult(number, lookupResult(errorSlot('timeout'), failedWithData, errorSlot('connection')));
    expect(built.score.score).toBeNull();
    expect(built.allSourcesFailed).toBe(true);
  });
});
