// What the deployment's own reporters said about callers, as the rest of the service sees it
// (docs/reports.md): the phone routes ask `evidence()` after the operator's lists and before any
// upstream, the blocklist feed reads `reportedSpam()`. The stores (src/infra/reports/) keep the
// votes, file or Redis like the lists, and hold the evidence in memory so that a lookup never
// waits on them; src/domain/reports/ holds the rules (ratings, decay, the confidence bar).

/**
 * The closed set every reporter's rating maps onto (docs/reports.md, "Ratings"): SpamBlocker's
 * six tags and PhoneBlock's seven codes both land here (src/domain/reports/ratings.ts).
 * `legitimate` weighs against spam; `missed` (PhoneBlock's B_MISSED: a call not answered, not
 * judged) weighs neither way; every other rating is a kind of spam.
 */
export const REPORT_RATINGS = [
  'legitimate',
  'missed',
  'ping',
  'poll',
  'advertising',
  'gamble',
  'fraud',
  'political',
  'other',
] as const;
export type ReportRating = (typeof REPORT_RATINGS)[number];

/** One token's one vote on one number: the latest replaces the earlier (one vote per token and number). */
export interface ReportVote {
  /** The number in E.164 (`+33612345678`). */
  e164: string;
  /** The reporting token's id (never the token itself). */
  tokenId: string;
  rating: ReportRating;
  /** When the vote was cast, in ms since the epoch. */
  at: number;
  /** At most 200 characters, cleaned (src/domain/reports/comment.ts); absent when none or unreadable. */
  comment?: string;
}

/**
 * What the reports say of a number, as `meta.reports` carries it:
 * - `spam`: confidently reported as spam (enough distinct reporters, and the lower confidence
 *   bound of the decayed spam share above the bar): `/verdict` blocks, the feed lists it;
 * - `suspect`: reported as spam, below the bar: `/verdict` warns at least;
 * - `legitimate`: confidently reported legitimate: one website's score alone never blocks it;
 * - `unclear`: reports that say neither (missed calls only, or as much legitimate as spam below the bars).
 */
export type ReportVerdict = 'spam' | 'suspect' | 'legitimate' | 'unclear';

export interface ReportEvidence {
  /** Decayed spam weight (each spam vote 1 when cast, halved every REPORT_HALF_LIFE_DAYS), rounded to 2 decimals. */
  spam: number;
  /** Decayed legitimate weight, likewise. */
  legitimate: number;
  /** Distinct tokens with a vote in force on the number. */
  reporters: number;
  /** Votes in force per rating (only ratings with at least one). */
  categories: Partial<Record<ReportRating, number>>;
  /** ISO 8601 of the latest vote. */
  lastReportAt: string;
  verdict: ReportVerdict;
}

export interface CallerReports {
  /** What the reports in force say of `e164` at `now`, or null when nobody reported it (or every vote expired). Synchronous: from memory. */
  evidence(e164: string, now?: number): ReportEvidence | null;
  /** The numbers confidently reported as spam at `now` (verdict `spam`), for the feed. */
  reportedSpam(now?: number): Iterable<{ e164: string; evidence: ReportEvidence }>;
  /** Changes whenever the evidence may have changed (a vote here or on another instance, an expiry). */
  version(now?: number): string;
}

/** A reporter's token as stored and listed: its secret is never kept, only its hash. */
export interface ReporterToken {
  /** Short public id (`tok_…`), used to list and revoke. */
  id: string;
  label: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; refused from then on. */
  expiresAt?: string;
  /** ISO 8601, at most hourly resolution (rounded down to the hour). */
  lastUsedAt?: string;
  /** ISO 8601; a revoked token is refused. */
  revokedAt?: string;
}

/** The reporters' tokens as the report routes see them (src/infra/reports/token-store.ts keeps them). */
export interface ReporterTokens {
  /** True once at least one token is in force at `now` (not expired, not revoked): reporting is off until then. */
  anyInForce(now?: number): boolean;
  /**
   * The token in force whose secret `secret` is, or null (unknown, expired, revoked). Compared
   * by hash only. Notes the use (`lastUsedAt`, rounded down to the hour; written at most once an hour).
   */
  authenticate(secret: string, now?: number): Promise<ReporterToken | null>;
}

/** What recording a vote came to. */
export type RecordOutcome =
  | { ok: true; replaced: boolean }
  /** The token used up REPORT_MAX_PER_TOKEN_DAY for the current UTC day: a 429 with Retry-After, nothing changed. */
  | { ok: false; reason: 'token_day_cap'; retryAfterSeconds: number };

/** Where the report routes put a vote (src/infra/reports/report-store.ts). */
export interface ReportRecorder {
  /** Records `vote` (replacing the token's earlier vote on the number); throws ReportStoreUnavailable when the store cannot be written. */
  record(vote: ReportVote, now?: number): Promise<RecordOutcome>;
}

/** The store cannot be written (Redis down, the directory not writable): a 503, nothing changed. */
export class ReportStoreUnavailable extends Error {
  override name = 'ReportStoreUnavailable';
}
