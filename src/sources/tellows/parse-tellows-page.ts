// Pure parser of a tellows number page (`/num/{n}`). It anchors on ids and classes shared by
// the German, English and Spanish sites (the French label texts are unverified); the only
// words it reads are the searches label and the author suffix, in several languages.
import type { PrimaryComment, PrimaryData } from '../../domain/report.js';
import type { MarkerReport } from '../markers.js';
import { MAX_COMMENTS, cleanText, parseCount, parseDate } from '../common/text.js';
import { findElement, findFirst, findOutermostElements, hasClass, type Attributes } from './html-fragments.js';

export type TellowsPageResult =
  | { kind: 'ok'; data: PrimaryData; mainCallerType: string }
  | { kind: 'not_found' }
  /** A 200 page without the score image: captcha or interstitial. */
  | { kind: 'challenge' }
  | { kind: 'invalid'; detail: string };

const isScoreImage = (attributes: Attributes) => hasClass(attributes, 'scoreimage');
const linksToComplaints = (attributes: Attributes) => (attributes.href ?? '').endsWith('#complaint_list');
const isRatingTable = (attributes: Attributes) => hasClass(attributes, 'table-rating');
const isCommentList = (attributes: Attributes) => attributes.id === 'singlecomments';
const SEARCHES_LABEL = /(?:recherches|suchanfragen|anfragen|searches|b[uú]squedas)\s*:?\s*(\d{1,3}(?:[ \u00a0\u202f.,]\d{3})+(?!\d)|\d+)/i;
const AUTHOR_SUFFIX = /\s*(?:a écrit|schrieb|wrote|escribió|escribio)\s*:?\s*$/i;

function readScore(html: string): number | null | undefined {
  const image = findElement(html, 'img', isScoreImage);
  if (!image) return undefined;
  const fromAlt = /score\s*(\d)\b/i.exec(image.attributes.alt ?? '');
  const fromSrc = /score(\d)\.png(?:$|[?#])/i.exec(image.attributes.src ?? '');
  const value = Number(fromAlt?.[1] ?? fromSrc?.[1] ?? NaN);
  return value >= 1 && value <= 9 ? value : null;
}

function readCommentsCount(html: string): number | null {
  const link = findFirst(html, ['a', 'span', 'div', 'strong'], linksToComplaints);
  return link ? parseCount(cleanText(link.inner)) : null;
}

function readSearches(html: string): number | null {
  const match = SEARCHES_LABEL.exec(cleanText(html, Number.MAX_SAFE_INTEGER));
  return match ? parseCount(match[1]) : null;
}

/** Caller types of `table.table-rating`, most frequent first. */
function readCallerTypes(html: string): Array<{ name: string; count: number }> {
  const table = findElement(html, 'table', isRatingTable);
  if (!table) return [];
  const rows = findOutermostElements(table.inner, 'tr').flatMap((row) => {
    const name = cleanText(findElement(row.inner, 'th')?.inner ?? '');
    const count = parseCount(cleanText(findElement(row.inner, 'span', (attributes) => hasClass(attributes, 'small'))?.inner ?? ''));
    return name === '' ? [] : [{ name, count: count ?? 0 }];
  });
  // Stable sort keeps the page's order among equal counts.
  return rows.sort((left, right) => right.count - left.count);
}

function readComments(html: string, callerType: string): PrimaryComment[] {
  const container = findFirst(html, ['ol', 'ul', 'div'], isCommentList);
  if (!container) return [];
  const comments: PrimaryComment[] = [];
  for (const item of findOutermostElements(container.inner, 'li')) {
    if (comments.length >= MAX_COMMENTS) break;
    const body = findElement(item.inner, 'div', (attributes) => hasClass(attributes, 'comment-body'));
    const paragraph = body ? findElement(body.inner, 'p', (attributes) => hasClass(attributes, 'mb-0')) : undefined;
    const text = cleanText(paragraph?.inner ?? body?.inner ?? '');
    if (text === '') continue;
    const meta = findElement(item.inner, 'div', (attributes) => hasClass(attributes, 'comment-meta'));
    const lead = findElement(item.inner, 'p', (attributes) => hasClass(attributes, 'lead'));
    comments.push({
      author: cleanText(lead?.inner ?? '').replace(AUTHOR_SUFFIX, ''),
      text,
      date: parseDate(cleanText(meta?.inner ?? '')),
      callerType,
    });
  }
  return comments;
}

/**
 * Same unknown-number rule as the API: no comment and no search → `not_found`; a page with
 * no rating keeps a null score (tellows draws a neutral 5 for unrated numbers).
 */
export function parseTellowsPage(html: string): TellowsPageResult {
  const rawScore = readScore(html);
  if (rawScore === undefined) return { kind: 'challenge' };
  if (rawScore === null) return { kind: 'invalid', detail: 'score image without a readable score' };
  const callerTypes = readCallerTypes(html);
  // The HTML has no caller type per comment: every comment takes the page's most frequent one.
  const mainCallerType = callerTypes[0]?.name ?? '';
  const commentList = readComments(html, mainCallerType);
  const commentsCount = readCommentsCount(html) ?? commentList.length;
  const searches = readSearches(html) ?? 0;
  if (commentsCount === 0 && searches === 0) return { kind: 'not_found' };
  return {
    kind: 'ok',
    data: { score: commentsCount === 0 ? null : rawScore, searches, commentsCount, commentList },
    mainCallerType,
  };
}

/** The markers the page parser relies on, for the live canary. */
export function describeTellowsPageMarkers(html: string): MarkerReport[] {
  const container = findFirst(html, ['ol', 'ul', 'div'], isCommentList);
  return [
    { marker: 'img.scoreimage', found: readScore(html) !== undefined },
    { marker: 'score in img.scoreimage alt/src', found: typeof readScore(html) === 'number' },
    { marker: 'a[href$="#complaint_list"] count', found: readCommentsCount(html) !== null, required: false },
    { marker: 'searches label (Recherches/Suchanfragen/Searches) + count', found: readSearches(html) !== null, required: false },
    { marker: 'table.table-rating rows', found: readCallerTypes(html).length > 0, required: false },
    { marker: '#singlecomments > li', found: container !== undefined && findOutermostElements(container.inner, 'li').length > 0, required: false },
    {
      marker: 'li div.comment-body p.mb-0 + div.comment-meta date',
      found: readComments(html, '').some((comment) => comment.date !== ''),
      required: false,
    },
  ];
}
