import { describe, expect, it } from 'vitest';
import type { ReportRating, ReportVote } from '../ports/caller-reports.js';
import { decayedWeight, EVIDENCE_BAR, evidenceOf, wilsonLowerBound, WILSON_Z, type EvidenceRule } from './evidence.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-28T12:00:00.000Z');
const RULE: EvidenceRule = { halfLifeDays: 125, minReporters: 2, retentionDays: 180 };
const NUMBER = '+33612345678';

function vote(tokenId: string, rating: ReportRating, daysAgo = 0): ReportVote {
  return { e164: NUMBER, tokenId, rating, at: NOW - daysAgo * DAY };
}

describe('the Wilson score lower bound (z = 1)', () => {
  // Hand-computed: (p + 1/2n − sqrt(p(1−p)/n + 1/4n²)) / (1 + 1/n).
  it.each([
    // 1 of 1: (1 + 0.5 − 0.5) / 2
    [1, 1, 0.5],
    // 2 of 2: (1 + 0.25 − 0.25) / 1.5
    [2, 2, 2 / 3],
    // 3 of 4: p = 0.75, (0.875 − sqrt(0.046875 + 0.015625)) / 1.25 = (0.875 − 0.25) / 1.25
    [3, 4, 0.5],
    // 2 of 3: (5/6 − sqrt(2/27 + 1/36)) / (4/3) = (0.833333 − 0.319142) / 1.333333
    [2, 3, 0.385644],
    // 1 of 2: (0.75 − sqrt(0.125 + 0.0625)) / 1.5 = (0.75 − 0.433013) / 1.5
    [1, 2, 0.211325],
    // 0.5 of 0.5 (one vote at its half-life): 0.5 / 1.5
    [0.5, 0.5, 1 / 3],
  ])('of %s out of %s is %s', (positive, total, expected) => {
    expect(wilsonLowerBound(positive, total)).toBeCloseTo(expected, 5);
  });

  it('is 0 with no weight at all', () => {
    expect(wilsonLowerBound(0, 0)).toBe(0);
  });

  it('uses z = 1 and the bar 0.4', () => {
    expect(WILSON_Z).toBe(1);
    expect(EVIDENCE_BAR).toBe(0.4);
  });
});

describe('the evidence of a number', () => {
  it('is null when nobody reported it', () => {
    expect(evidenceOf([], NOW, RULE)).toBeNull();
  });

  it('halves a vote every REPORT_HALF_LIFE_DAYS', () => {
    expect(decayedWeight(NOW, NOW, 125)).toBe(1);
    expect(decayedWeight(NOW - 125 * DAY, NOW, 125)).toBeCloseTo(0.5, 10);
    expect(decayedWeight(NOW - 250 * DAY, NOW, 125)).toBeCloseTo(0.25, 10);
    const evidence = evidenceOf(
      [vote('a', 'fraud', 125), vote('b', 'fraud', 0), vote('c', 'legitimate', 62.5)],
      NOW,
      RULE,
    );
    expect(evidence).toMatchObject({ spam: 1.5, legitimate: 0.71, reporters: 3 });
  });

  it('keeps one vote per token: the latest replaces the earlier', () => {
    // Token a said fraud, then legitimate: only legitimate counts, so a and b cancel out.
    const votes = [vote('a', 'fraud', 10), vote('a', 'legitimate', 0), vote('b', 'fraud', 1)];
    const evidence = evidenceOf(votes, NOW, RULE);
    expect(evidence).toMatchObject({ reporters: 2, categories: { legitimate: 1, fraud: 1 } });
    expect(evidence?.spam).toBe(0.99);
    expect(evidence?.legitimate).toBe(1);
    expect(evidence?.verdict).toBe('unclear');
    // In any order.
    expect(evidenceOf([...votes].reverse(), NOW, RULE)).toEqual(evidence);
  });

  it('says spam only from REPORT_MIN_REPORTERS distinct reporters (2)', () => {
    expect(evidenceOf([vote('a', 'fraud')], NOW, RULE)?.verdict).toBe('suspect');
    expect(evidenceOf([vote('a', 'fraud'), vote('b', 'advertising')], NOW, RULE)).toEqual({
      spam: 2,
      legitimate: 0,
      reporters: 2,
      categories: { fraud: 1, advertising: 1 },
      lastReportAt: '2026-11-28T12:00:00.000Z',
      verdict: 'spam',
    });
  });

  it('lets one reporter decide when REPORT_MIN_REPORTERS is 1 (a single household)', () => {
    const single = { ...RULE, minReporters: 1 };
    expect(evidenceOf([vote('a', 'fraud')], NOW, single)?.verdict).toBe('spam');
    expect(evidenceOf([vote('a', 'legitimate')], NOW, single)?.verdict).toBe('legitimate');
  });

  it('weighs legitimate votes against spam ones', () => {
    // 2 spam against 1 legitimate: lower bound 0.386, below the bar.
    expect(evidenceOf([vote('a', 'fraud'), vote('b', 'ping'), vote('c', 'legitimate')], NOW, RULE)?.verdict).toBe(
      'suspect',
    );
    // 3 against 1: lower bound 0.5.
    expect(
      evidenceOf([vote('a', 'fraud'), vote('b', 'ping'), vote('d', 'gamble'), vote('c', 'legitimate')], NOW, RULE)
        ?.verdict,
    ).toBe('spam');
    // 2 legitimate against 1 spam: the website's false positive fixed by the reporters.
    expect(evidenceOf([vote('a', 'legitimate'), vote('b', 'legitimate')], NOW, RULE)?.verdict).toBe('legitimate');
    expect(evidenceOf([vote('a', 'legitimate'), vote('b', 'legitimate'), vote('c', 'fraud')], NOW, RULE)?.verdict).toBe(
      'unclear',
    );
    // As much spam as legitimate: neither.
    expect(evidenceOf([vote('a', 'fraud'), vote('b', 'legitimate')], NOW, RULE)?.verdict).toBe('unclear');
  });

  it('counts a missed call neither way', () => {
    const evidence = evidenceOf([vote('a', 'missed'), vote('b', 'missed')], NOW, RULE);
    expect(evidence).toMatchObject({
      spam: 0,
      legitimate: 0,
      reporters: 2,
      categories: { missed: 2 },
      verdict: 'unclear',
    });
  });

  it('drops votes past REPORT_RETENTION_DAYS, and the decay lowers old ones', () => {
    const votes = [vote('a', 'fraud', 179), vote('b', 'fraud', 181)];
    expect(evidenceOf(votes, NOW, RULE)).toMatchObject({ spam: 0.37, reporters: 1, verdict: 'suspect' });
    expect(evidenceOf(votes, NOW + 2 * DAY, RULE)).toBeNull();
    expect(evidenceOf([vote('a', 'fraud', 180)], NOW, RULE)).toBeNull();
    expect(evidenceOf([vote('a', 'fraud', 179.99)], NOW, RULE)).not.toBeNull();
  });

  it('keeps two reporters above the bar as their votes age, until they expire', () => {
    const votes = [vote('a', 'fraud'), vote('b', 'fraud')];
    expect(evidenceOf(votes, NOW + 179 * DAY, RULE)).toMatchObject({ spam: 0.74, verdict: 'spam' });
    expect(evidenceOf(votes, NOW + 180 * DAY, RULE)).toBeNull();
  });

  it('dates the evidence by its latest vote in force', () => {
    expect(evidenceOf([vote('a', 'fraud', 3), vote('b', 'fraud', 1)], NOW, RULE)?.lastReportAt).toBe(
      new Date(NOW - DAY).toISOString(),
    );
  });
});

describe('the worked examples of docs/reports.md ("Evidence")', () => {
  const spam = (count: number, daysAgo = 0): ReportVote[] =>
    Array.from({ length: count }, (_, at) => vote(`spam_${at}`, at % 2 === 0 ? 'fraud' : 'advertising', daysAgo));
  const legitimate = (count: number): ReportVote[] =>
    Array.from({ length: count }, (_, at) => vote(`legit_${at}`, 'legitimate'));
  it.each([
    ['1 fraud', spam(1), 1, 0, 0.5, 'suspect'],
    ['1 fraud + 1 advertising', spam(2), 2, 0, 0.667, 'spam'],
    ['2 spam + 1 legitimate', [...spam(2), ...legitimate(1)], 2, 1, 0.386, 'suspect'],
    ['3 spam + 1 legitimate', [...spam(3), ...legitimate(1)], 3, 1, 0.5, 'spam'],
    ['2 spam, each 125 days old', spam(2, 125), 1, 0, 0.5, 'spam'],
    ['2 spam, each 179 days old', spam(2, 179), 0.74, 0, 0.426, 'spam'],
    ['1 spam + 1 legitimate', [...spam(1), ...legitimate(1)], 1, 1, 0.211, 'unclear'],
    ['2 legitimate + 1 spam', [...spam(1), ...legitimate(2)], 1, 2, 0.136, 'unclear'],
    ['2 legitimate', legitimate(2), 0, 2, 0, 'legitimate'],
  ] as const)('%s', (_name, votes, spamWeight, legitimateWeight, bound, verdict) => {
    const evidence = evidenceOf(votes, NOW, RULE);
    expect(evidence).toMatchObject({ spam: spamWeight, legitimate: legitimateWeight, verdict });
    expect(wilsonLowerBound(evidence?.spam ?? 0, (evidence?.spam ?? 0) + (evidence?.legitimate ?? 0))).toBeCloseTo(
      bound,
      2,
    );
  });

  it('meets both bars only from about 25 votes of weight split half and half, and says spam then', () => {
    expect(wilsonLowerBound(12, 24)).toBeLessThan(EVIDENCE_BAR);
    expect(wilsonLowerBound(12.5, 25)).toBeGreaterThanOrEqual(EVIDENCE_BAR);
    const votes = [...spam(13), ...legitimate(13)];
    expect(evidenceOf(votes, NOW, RULE)?.verdict).toBe('spam');
  });
});
