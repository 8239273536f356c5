// A report's body as reporters really send it (docs/reports.md, "Reporting"), read from its raw
// bytes whatever its Content-Type says. Pure: the routes (src/http/routes/report-routes.ts) parse
// the number and record the vote.
//
// - JSON `{"phone", "rating", "comment"?}`: PhoneBlock-shaped clients, curl, scripts.
// - The same JSON labelled `application/x-www-form-urlencoded`: SpamBlocker sets no Content-Type
//   and Android's HttpURLConnection labels every POST body so (aj3423/SpamBlocker util/Http.kt).
// - That JSON made invalid by its comment: SpamBlocker fills `{comment}` into its body template
//   with a plain String.replace (service/bot/Actions1.kt, HttpRequest.execute), so a `"` or a
//   newline in the comment breaks the JSON. `phone` and `rating` come before the comment in the
//   served template (routes/spamblocker-report.ts), so they are still read, by a scan for
//   `"phone": "…"` and `"rating": "…"`; the comment, which cannot be told from the rest, is dropped.
// - A real form body `phone=…&rating=…&comment=…`.
// Anything else is refused with the field it concerns.
import { RATING_SPELLINGS, ratingOf } from './ratings.js';
import { cleanComment, COMMENT_MAX_LENGTH } from './comment.js';
import type { ReportRating } from '../ports/caller-reports.js';

/** The largest body read; past it the route answers 413 before reading more (Fastify's bodyLimit). */
export const REPORT_BODY_MAX_BYTES = 4096;

/** The longest `phone` value looked at (the parser refuses longer spellings anyway, with its own code). */
const PHONE_MAX_LENGTH = 256;

export interface ReportBody {
  /** As sent: the routes give it to the number parser. */
  phone: string;
  rating: ReportRating;
  /** Cleaned (comment.ts); absent when none was sent, nothing was left, or it could not be read. */
  comment?: string;
  /** True when a comment was sent in a body whose JSON it broke, and was dropped. */
  commentDropped: boolean;
}

export type ReportBodyField = 'body' | 'phone' | 'rating' | 'comment';

export type ReportBodyResult =
  { ok: true; value: ReportBody } | { ok: false; field: ReportBodyField; reason: string; tooLarge?: true };

const decoder = new TextDecoder('utf-8', { fatal: true });

/** `"name": "value"` in a body that is not JSON: a string with no quote, backslash or line break in it. */
function scanned(text: string, name: 'phone' | 'rating'): string | undefined {
  return new RegExp(`"${name}"\\s*:\\s*"([^"\\\\\\r\\n]{0,${PHONE_MAX_LENGTH}})"`).exec(text)?.[1];
}

type Fields = { phone?: unknown; rating?: unknown; comment?: unknown; commentDropped: boolean };

function fieldsOf(text: string): Fields | { field: 'body'; reason: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { field: 'body', reason: 'the body is empty: send {"phone", "rating", "comment"?}' };
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      const phone = scanned(trimmed, 'phone');
      const rating = scanned(trimmed, 'rating');
      if (phone === undefined && rating === undefined)
        return { field: 'body', reason: 'the body is neither JSON nor a form' };
      return { phone, rating, commentDropped: /"comment"\s*:/.test(trimmed) };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { field: 'body', reason: 'the body must be a JSON object' };
    const object = parsed as Record<string, unknown>;
    return { phone: object.phone, rating: object.rating, comment: object.comment, commentDropped: false };
  }
  if (!/^[^=&\s]+=/.test(trimmed)) return { field: 'body', reason: 'the body is neither JSON nor a form' };
  const form = new URLSearchParams(trimmed);
  return {
    phone: form.get('phone') ?? undefined,
    rating: form.get('rating') ?? undefined,
    comment: form.get('comment') ?? undefined,
    commentDropped: false,
  };
}

/** The report a body holds, or the field that is wrong and why (a sentence for a person). */
export function readReportBody(raw: Uint8Array | string): ReportBodyResult {
  const bytes = typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : raw.byteLength;
  if (bytes > REPORT_BODY_MAX_BYTES)
    return { ok: false, field: 'body', reason: `the body is over ${REPORT_BODY_MAX_BYTES} bytes`, tooLarge: true };
  let text: string;
  if (typeof raw === 'string') text = raw;
  else {
    try {
      text = decoder.decode(raw);
    } catch {
      return { ok: false, field: 'body', reason: 'the body is not UTF-8 text' };
    }
  }
  const fields = fieldsOf(text.replace(/^\uFEFF/, ''));
  if ('field' in fields) return { ok: false, ...fields };

  const { phone, rating } = fields;
  if (phone === undefined || phone === null || phone === '')
    return { ok: false, field: 'phone', reason: 'phone is missing: the number reported, such as +33612345678' };
  if (typeof phone !== 'string' || phone.length > PHONE_MAX_LENGTH)
    return { ok: false, field: 'phone', reason: 'phone must be a string: the number reported, such as +33612345678' };
  if (rating === undefined || rating === null || rating === '')
    return { ok: false, field: 'rating', reason: `rating is missing: one of ${RATING_SPELLINGS.join(', ')}` };
  const known = ratingOf(rating);
  if (known === undefined)
    return { ok: false, field: 'rating', reason: `rating is unknown: one of ${RATING_SPELLINGS.join(', ')}` };

  const { comment } = fields;
  if (comment !== undefined && comment !== null && typeof comment !== 'string')
    return {
      ok: false,
      field: 'comment',
      reason: `comment must be a string (at most ${COMMENT_MAX_LENGTH} characters are kept)`,
    };
  const cleaned = typeof comment === 'string' ? cleanComment(comment) : undefined;
  return {
    ok: true,
    value: {
      phone,
      rating: known,
      ...(cleaned === undefined ? {} : { comment: cleaned }),
      commentDropped: fields.commentDropped,
    },
  };
}
