import { describe, expect, it } from 'vitest';
import type { ReportVote } from '../../domain/ports/caller-reports.js';
import { createVoteBook, secondsToUtcMidnight, utcDayOf } from './vote-book.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-28T12:00:00.000Z');
const RULE = { halfLifeDays: 125, minReporters: 2, retentionDays: 180 };
const vote = (e164: string, tokenId: string, rating: ReportVote['rating'] = 'fraud', at = NOW): ReportVote => ({
  e164,
  tokenId,
  rating,
  at,
});
const spamNumbers = (book: ReturnType<typeof createVoteBook>, now = NOW): string[] =>
  [...book.reportedSpam(now)].map((entry) => entry.e164).sort();

describe('the votes in memory', () => {
  it('lists for the feed exactly the numbers whose verdict is spam, as votes change and expire', () => {
    const book = createVoteBook(RULE, () => NOW);
    book.put(vote('+33600000001', 'a'));
    book.put(vote('+33600000001', 'b'));
    book.put(vote('+33600000002', 'a'));
    book.put(vote('+33600000003', 'a', 'legitimate'));
    book.put(vote('+33600000003', 'b', 'legitimate'));
    expect(spamNumbers(book)).toEqual(['+33600000001']);
    book.put(vote('+33600000002', 'b', 'fraud', NOW - 100 * DAY));
    expect(spamNumbers(book)).toEqual(['+33600000001', '+33600000002']);
    // A reporter changes its mind.
    book.put(vote('+33600000001', 'b', 'legitimate'));
    expect(spamNumbers(book)).toEqual(['+33600000002']);
    // 81 days on, the older vote on …02 expires: one reporter is left.
    expect(book.dropExpired(NOW + 80 * DAY)).toBe(1);
    expect(spamNumbers(book, NOW + 80 * DAY)).toEqual([]);
    expect(book.votes('+33600000002')).toEqual([vote('+33600000002', 'a')]);
  });

  it('changes its version with every change and every day', () => {
    const book = createVoteBook(RULE, () => NOW);
    const first = book.version();
    book.put(vote('+33600000001', 'a'));
    const second = book.version();
    expect(second).not.toBe(first);
    expect(book.version(NOW + DAY)).not.toBe(second);
    expect(book.dropExpired(NOW)).toBe(0);
    expect(book.version()).toBe(second);
  });

  it('gives the UTC day and the seconds to the next UTC midnight', () => {
    expect(utcDayOf(Date.parse('2026-11-28T23:59:59.999Z'))).toBe('2026-11-28');
    expect(secondsToUtcMidnight(Date.parse('2026-11-28T23:00:00.000Z'))).toBe(3600);
    expect(secondsToUtcMidnight(Date.parse('2026-11-28T23:59:59.500Z'))).toBe(1);
    expect(secondsToUtcMidnight(Date.parse('2026-11-28T00:00:00.000Z'))).toBe(86_400);
  });
});
