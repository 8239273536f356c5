// The votes in memory, shared by both report stores (file and Redis): every number's votes in a
// Map, so that `evidence()` is one lookup and a few multiplications, never a wait on the store.
// Evidence is recomputed on each call (a number holds a handful of votes: a few microseconds).
// The feed's list of spam numbers is kept until the votes or the day change, and is built from
// the numbers with at least REPORT_MIN_REPORTERS spam votes only (kept up to date on every
// change), never by judging every number: with 100,000 reported numbers that took about a second.
import type { CallerReports, ReportEvidence, ReportVote } from '../../domain/ports/caller-reports.js';
import { evidenceOf, voteInForce, type EvidenceRule } from '../../domain/reports/evidence.js';
import { weightKind } from '../../domain/reports/ratings.js';

export const DAY_MS = 86_400_000;

/** The UTC day of `now` as `YYYY-MM-DD` (the per-token cap's day). */
export function utcDayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Whole seconds from `now` to the next UTC midnight, at least 1 (a capped token's Retry-After). */
export function secondsToUtcMidnight(now: number): number {
  const next = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  return Math.max(1, Math.ceil((next - now) / 1000));
}

export interface VoteBook extends CallerReports {
  /** Sets a token's vote on a number (replacing its earlier one); true when it replaced one. */
  put(vote: ReportVote): boolean;
  /** Drops the votes cast `retentionDays` or more before `now`; how many. */
  dropExpired(now: number): number;
  /** Replaces every vote. */
  replaceAll(votes: Iterable<ReportVote>): void;
  /** The votes on `e164` (in force or not yet dropped), oldest first. */
  votes(e164: string): ReportVote[];
  /** Every vote held. */
  all(): Iterable<ReportVote>;
  /** Votes held. */
  size(): number;
}

export function createVoteBook(rule: EvidenceRule, clock: () => number = Date.now): VoteBook {
  const byNumber = new Map<string, Map<string, ReportVote>>();
  /** The numbers with at least `minReporters` spam votes held: the only ones `spam` can be. */
  const candidates = new Set<string>();
  let count = 0;
  let changes = 0;
  let spamCache: { version: string; numbers: Array<{ e164: string; evidence: ReportEvidence }> } | undefined;

  const version = (now = clock()): string => `${changes}:${Math.floor(now / DAY_MS)}`;

  function noteCandidate(e164: string, votes: Map<string, ReportVote> | undefined): void {
    let spamVotes = 0;
    for (const vote of votes?.values() ?? []) if (weightKind(vote.rating) === 'spam') spamVotes += 1;
    if (spamVotes >= rule.minReporters) candidates.add(e164);
    else candidates.delete(e164);
  }

  function put(vote: ReportVote): boolean {
    let votes = byNumber.get(vote.e164);
    if (votes === undefined) {
      votes = new Map();
      byNumber.set(vote.e164, votes);
    }
    const replaced = votes.has(vote.tokenId);
    votes.set(vote.tokenId, vote);
    noteCandidate(vote.e164, votes);
    if (!replaced) count += 1;
    changes += 1;
    return replaced;
  }

  return {
    put,
    dropExpired(now) {
      let dropped = 0;
      for (const [e164, votes] of byNumber) {
        for (const [tokenId, vote] of votes) {
          if (voteInForce(vote, now, rule.retentionDays)) continue;
          votes.delete(tokenId);
          dropped += 1;
        }
        if (votes.size === 0) byNumber.delete(e164);
        if (candidates.has(e164)) noteCandidate(e164, byNumber.get(e164));
      }
      if (dropped > 0) {
        count -= dropped;
        changes += 1;
      }
      return dropped;
    },
    replaceAll(votes) {
      byNumber.clear();
      candidates.clear();
      count = 0;
      for (const vote of votes) put(vote);
      changes += 1;
    },
    votes: (e164) => [...(byNumber.get(e164)?.values() ?? [])].sort((a, b) => a.at - b.at),
    *all() {
      for (const votes of byNumber.values()) yield* votes.values();
    },
    size: () => count,
    evidence(e164, now = clock()) {
      const votes = byNumber.get(e164);
      return votes === undefined ? null : evidenceOf(votes.values(), now, rule);
    },
    reportedSpam(now = clock()) {
      const current = version(now);
      if (spamCache?.version !== current) {
        const numbers: Array<{ e164: string; evidence: ReportEvidence }> = [];
        for (const e164 of candidates) {
          const evidence = evidenceOf(byNumber.get(e164)?.values() ?? [], now, rule);
          if (evidence?.verdict === 'spam') numbers.push({ e164, evidence });
        }
        spamCache = { version: current, numbers };
      }
      return spamCache.numbers;
    },
    version,
  };
}
