// The review of the reported numbers: which are listed in each state (a dismissal covers the votes
// cast up to it, a newer vote brings the number back), in what order, and what each one shows.
import { describe, expect, it } from 'vitest';
import type { ReportVote } from '../ports/caller-reports.js';
import { reviewReports, reviewReportSteps, type ReviewInput } from './review.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-28T12:00:00Z');
const rule = { halfLifeDays: 30, minReporters: 2, retentionDays: 180 };

const vote = (
  e164: string,
  tokenId: string,
  rating: ReportVote['rating'],
  at: number,
  comment?: string,
): ReportVote => ({
  e164,
  tokenId,
  rating,
  at,
  ...(comment === undefined ? {} : { comment }),
});

const votes = [
  vote('+33612345601', 'tok_a', 'fraud', NOW - 3 * DAY, 'faux conseiller'),
  vote('+33612345601', 'tok_b', 'advertising', NOW - 2 * DAY),
  vote('+33612345602', 'tok_a', 'legitimate', NOW - DAY, 'mon médecin'),
  // Past retention: not listed, not counted.
  vote('+33612345603', 'tok_a', 'fraud', NOW - 200 * DAY),
];

const input = (extra: Partial<ReviewInput> = {}): ReviewInput => ({
  votes,
  votesOf: (e164) => [...(extra.votes ?? votes)].filter((each) => each.e164 === e164),
  dismissals: new Map(),
  rule,
  now: NOW,
  labelOf: (id) => ({ tok_a: 'Kitchen' })[id] ?? id,
  listOf: (e164) => (e164 === '+33612345602' ? 'allow' : null),
  state: 'review',
  offset: 0,
  limit: 50,
  ...extra,
});

describe('reviewReports', () => {
  it('lists every number with a vote in force, newest report first, with what the votes say', () => {
    const { total, numbers } = reviewReports(input());
    expect(total).toBe(2);
    expect(numbers).toEqual([
      {
        number: '+33612345602',
        verdict: 'unclear',
        reporters: 1,
        ratings: { legitimate: 1 },
        labels: ['Kitchen'],
        comments: ['mon médecin'],
        lastAt: new Date(NOW - DAY).toISOString(),
        dismissed: false,
        dismissedAt: null,
        list: 'allow',
      },
      {
        number: '+33612345601',
        verdict: 'spam',
        reporters: 2,
        ratings: { fraud: 1, advertising: 1 },
        labels: ['tok_b', 'Kitchen'],
        comments: ['faux conseiller'],
        lastAt: new Date(NOW - 2 * DAY).toISOString(),
        dismissed: false,
        dismissedAt: null,
        list: null,
      },
    ]);
    expect(reviewReports(input({ offset: 1, limit: 1 })).numbers.map((each) => each.number)).toEqual(['+33612345601']);
  });

  it('leaves a number dismissed after its latest vote out of the review, and brings it back with a newer vote', () => {
    const dismissals = new Map([['+33612345601', NOW - DAY]]);
    expect(reviewReports(input({ dismissals })).numbers.map((each) => each.number)).toEqual(['+33612345602']);
    const dismissed = reviewReports(input({ dismissals, state: 'dismissed' }));
    expect(dismissed.total).toBe(1);
    expect(dismissed.numbers[0]).toMatchObject({ dismissed: true, dismissedAt: new Date(NOW - DAY).toISOString() });
    expect(reviewReports(input({ dismissals, state: 'all' })).total).toBe(2);
    // A dismissal at the very time of the latest vote covers it; one vote later does not.
    const atLatest = new Map([['+33612345601', NOW - 2 * DAY]]);
    expect(reviewReports(input({ dismissals: atLatest, state: 'dismissed' })).total).toBe(1);
    const newer = [...votes, vote('+33612345601', 'tok_c', 'ping', NOW - DAY + 1)];
    expect(reviewReports(input({ votes: newer, dismissals, state: 'dismissed' })).total).toBe(0);
    expect(reviewReports(input({ votes: newer, dismissals })).total).toBe(2);
  });
});

describe('reviewReportSteps', () => {
  it('reads many votes in steps (the route runs them in slices), with the same page as at once', () => {
    const many = Array.from({ length: 5000 }, (_, at) =>
      vote(`+336${String(10_000_000 + at)}`, at % 2 === 0 ? 'tok_a' : 'tok_b', 'fraud', NOW - at * 1000),
    );
    const given = input({ votes: many, offset: 10, limit: 5 });
    const steps = reviewReportSteps(given);
    let yields = 0;
    let next = steps.next();
    while (next.done !== true) {
      yields += 1;
      next = steps.next();
    }
    expect(yields).toBeGreaterThan(5);
    expect(next.value).toEqual(reviewReports(given));
    expect(next.value.total).toBe(5000);
    expect(next.value.numbers.map((each) => each.number)).toEqual(
      [10, 11, 12, 13, 14].map((at) => `+336${String(10_000_000 + at)}`),
    );
  });
});
