// The operator's review of the reported numbers (GET /admin/reports, docs/reports.md "Review"):
// every number with a vote in force, newest report first, with what the votes say (the same
// evidence the answers use), who reported it (the tokens' labels) and what they wrote. A number
// is dismissed when the operator dismissed it after its latest vote in force: a newer vote puts
// it back in review. Pure: the votes, the dismissals and the labels are given.
import type { ListName } from '../ports/operator-lists.js';
import type { ReportRating, ReportVerdict, ReportVote } from '../ports/caller-reports.js';
import { evidenceOf, voteInForce, type EvidenceRule } from './evidence.js';
import { runToEnd, type Steps } from '../steps.js';
import { sortInSteps } from '../blocklist/feed-content.js';

/** Votes read, or numbers looked at, between two yield points. */
const ITEMS_PER_STEP = 1024;

export const REVIEW_STATES = ['review', 'dismissed', 'all'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

export interface ReviewedNumber {
  number: string;
  /** The reports' verdict (`meta.reports.verdict`): spam, suspect, legitimate or unclear. */
  verdict: ReportVerdict;
  /** Distinct tokens with a vote in force. */
  reporters: number;
  /** Votes in force per rating. */
  ratings: Partial<Record<ReportRating, number>>;
  /** The reporting tokens' labels, newest vote first, each once. */
  labels: string[];
  /** The votes' comments, newest first. */
  comments: string[];
  /** ISO 8601 of the latest vote in force. */
  lastAt: string;
  dismissed: boolean;
  /** ISO 8601 of the dismissal in force, or null. */
  dismissedAt: string | null;
  /** The list whose rule decides for the number now (an operator's block or allow), or null. */
  list: ListName | null;
}

export interface ReviewInput {
  /** Every vote held (one pass finds each number's latest vote in force). */
  votes: Iterable<ReportVote>;
  /** The votes held on one number (for the page's numbers only). */
  votesOf(e164: string): Iterable<ReportVote>;
  /** E.164 → when the operator dismissed it (ms). */
  dismissals: ReadonlyMap<string, number>;
  rule: EvidenceRule;
  now: number;
  /** A token's label; its id when the token is unknown. */
  labelOf(tokenId: string): string;
  /** The list deciding for a number now, or null. */
  listOf(e164: string): ListName | null;
  state: ReviewState;
  offset: number;
  limit: number;
}

/**
 * One page of the numbers in `state`, and how many there are. One pass over the votes keeps only
 * each number's latest time (100,000 reported numbers make no object each); the evidence, labels
 * and comments are worked out for the page's numbers alone.
 */
export function reviewReports(input: ReviewInput): { total: number; numbers: ReviewedNumber[] } {
  return runToEnd(reviewReportSteps(input));
}

/** `reviewReports` as steps (domain/steps.ts), so that 100,000 reported numbers never hold the loop. */
export function* reviewReportSteps(input: ReviewInput): Steps<{ total: number; numbers: ReviewedNumber[] }> {
  const { now, rule } = input;
  let items = 0;
  const pause = (): boolean => (items += 1) % ITEMS_PER_STEP === 0;
  const latest = new Map<string, number>();
  for (const vote of input.votes) {
    if (pause()) yield;
    if (!voteInForce(vote, now, rule.retentionDays)) continue;
    const held = latest.get(vote.e164);
    if (held === undefined || vote.at > held) latest.set(vote.e164, vote.at);
  }
  const listed: string[] = [];
  const lastAts: number[] = [];
  for (const [e164, lastAt] of latest) {
    if (pause()) yield;
    const mark = input.dismissals.get(e164);
    const dismissed = mark !== undefined && mark >= lastAt;
    if (input.state === 'all' || (input.state === 'dismissed') === dismissed) {
      listed.push(e164);
      lastAts.push(lastAt);
    }
  }
  const order = yield* sortInSteps([...listed.keys()], (a, b) => {
    const byTime = (lastAts[b] ?? 0) - (lastAts[a] ?? 0);
    if (byTime !== 0) return byTime;
    const [x = '', y = ''] = [listed[a], listed[b]];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const numbers: ReviewedNumber[] = [];
  for (const at of order.slice(input.offset, input.offset + input.limit)) {
    const e164 = listed[at] ?? '';
    const votes = [...input.votesOf(e164)].filter((vote) => voteInForce(vote, now, rule.retentionDays));
    const evidence = evidenceOf(votes, now, rule);
    if (evidence === null) continue;
    const mark = input.dismissals.get(e164);
    const dismissedAt = mark !== undefined && mark >= (lastAts[at] ?? 0) ? mark : undefined;
    const newestFirst = votes.sort((a, b) => b.at - a.at);
    numbers.push({
      number: e164,
      verdict: evidence.verdict,
      reporters: evidence.reporters,
      ratings: evidence.categories,
      labels: [...new Set(newestFirst.map((vote) => input.labelOf(vote.tokenId)))],
      comments: newestFirst.flatMap((vote) => (vote.comment === undefined ? [] : [vote.comment])),
      lastAt: evidence.lastReportAt,
      dismissed: dismissedAt !== undefined,
      dismissedAt: dismissedAt === undefined ? null : new Date(dismissedAt).toISOString(),
      list: input.listOf(e164),
    });
  }
  return { total: listed.length, numbers };
}
