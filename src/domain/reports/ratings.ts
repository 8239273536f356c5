// The one table from what reporters send to the closed set of ratings (docs/reports.md,
// "Ratings"). SpamBlocker's Report API sends one of its six tags (the category mapping of the
// served report.json), PhoneBlock-shaped clients send PhoneBlock's seven codes; this service's
// own names are accepted too. Matching ignores case and surrounding spaces.
import { REPORT_RATINGS, type ReportRating } from '../ports/caller-reports.js';

/** SpamBlocker's tags (its Report API's category names) → the closed set. */
export const SPAMBLOCKER_RATINGS: Readonly<Record<string, ReportRating>> = {
  valid: 'legitimate',
  other: 'other',
  fraud: 'fraud',
  marketing: 'advertising',
  survey: 'poll',
  political: 'political',
};

/** PhoneBlock's rating codes (`/api/rate`) → the closed set. */
export const PHONEBLOCK_RATINGS: Readonly<Record<string, ReportRating>> = {
  A_LEGITIMATE: 'legitimate',
  B_MISSED: 'missed',
  C_PING: 'ping',
  D_POLL: 'poll',
  E_ADVERTISING: 'advertising',
  F_GAMBLE: 'gamble',
  G_FRAUD: 'fraud',
};

const BY_SPELLING = new Map<string, ReportRating>([
  ...REPORT_RATINGS.map((rating) => [rating, rating] as const),
  ...Object.entries(SPAMBLOCKER_RATINGS),
  ...Object.entries(PHONEBLOCK_RATINGS).map(([code, rating]) => [code.toLowerCase(), rating] as const),
]);

/** Every spelling `ratingOf` accepts (for the OpenAPI document and error messages). */
export const RATING_SPELLINGS: readonly string[] = [
  ...REPORT_RATINGS,
  ...Object.keys(SPAMBLOCKER_RATINGS).filter((tag) => !(REPORT_RATINGS as readonly string[]).includes(tag)),
  ...Object.keys(PHONEBLOCK_RATINGS),
];

/** The rating a reporter's spelling stands for, or undefined when it is none of the table's. */
export function ratingOf(spelling: unknown): ReportRating | undefined {
  if (typeof spelling !== 'string') return undefined;
  return BY_SPELLING.get(spelling.trim().toLowerCase());
}

/** How a rating weighs: against spam, for it, or neither (a missed call says nothing of the caller). */
export function weightKind(rating: ReportRating): 'spam' | 'legitimate' | 'neutral' {
  if (rating === 'legitimate') return 'legitimate';
  if (rating === 'missed') return 'neutral';
  return 'spam';
}
