// Reads a numeroinconnu.fr number page (GET /numero/{n}) into the `community` slot's data.
// Pure: HTML text in, typed result out; never throws. The markup is the one the site's template
// family shares (see shared/upstreams/numeroinconnu.md); what is unverified is tolerated in
// its plausible variants and reported as `invalid` when a required value cannot be read.
import type { CommunityComment, CommunityData } from '../../domain/report.js';
import { byClass, byId, findAll, findFirst, nextElementSibling, parseHtml, rawText, shortRawText } from '../common/html.js';
import type { HtmlElement } from '../common/html.js';
import { mostFrequentLabel } from '../common/most-frequent.js';
import { cleanText, dateSortKey, MAX_COMMENTS, parseCount, parseDate } from '../common/text.js';

export type NumeroinconnuPageResult =
  | { kind: 'ok'; data: CommunityData }
  | { kind: 'not_found' }
  /** None of the page's markers: a captcha, an interstitial or a different page. */
  | { kind: 'challenge' }
  /** The page is the site's, but a required value is missing or malformed. */
  | { kind: 'invalid'; reason: string };

/** Labels in danger order; `strong.rank.rN` maps to entry N-1 when the text gives no label (inferred order). */
export const NUMEROINCONNU_CATEGORIES = ['Dangereux', 'Gênant', 'Neutre', 'Fiable', 'Utile'] as const;

export interface NumeroinconnuMarkers {
  countComments: boolean;
  commentsRow: boolean;
  dangerBar: boolean;
  dangerBarPercent: boolean;
  statsTable: boolean;
  dangerRow: boolean;
  visitsRow: boolean;
  lastRatingRow: boolean;
  commentItems: boolean;
  commentTexts: boolean;
  ranks: boolean;
  readableDates: boolean;
  rankFilter: boolean;
  siteNotice: boolean;
}

function foldLabel(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[\s\u00a0\u202f]+/g, ' ')
    .replace(/\s*:\s*$/, '')
    .trim();
}

type RowKind = 'danger' | 'comments' | 'visits' | 'lastVisit' | 'lastRating';

/**
 * Row labels of the stats table, folded (no accents, lower case, no colon). The last-rating
 * label is unverified: every plausible wording is accepted; "Dernière visite" is a lookup,
 * not a comment, and is deliberately a kind of its own.
 */
function classifyRowLabel(folded: string): RowKind | null {
  if (folded === 'niveau de danger') return 'danger';
  if (folded === 'nombre de commentaires') return 'comments';
  if (folded === 'nombre de visites') return 'visits';
  if (folded === 'derniere visite') return 'lastVisit';
  if (/^derni(?:er|ere)s? (?:evaluation|commentaire|note|avis)s?$/.test(folded)) return 'lastRating';
  return null;
}

const LABEL_MAX_CHARS = 40;
const VALUE_MAX_CHARS = 200;
/** A real stats table has a handful of rows; more is a hostile page and not worth the time. */
const MAX_STATS_ROWS = 32;

interface StatsRow {
  kind: RowKind;
  value: string;
}

/**
 * Finds label/value rows whatever the markup (`<tr><td>label</td><td>value</td>`,
 * `<dt>/<dd>`, `<li><b>label</b> value</li>`, `<p>label : value</p>`): the label is the
 * outermost element whose whole text is a known label and the value its next sibling element,
 * else the rest of its parent's text; or an element whose short text is "label : value".
 */
function readStatsRows(root: HtmlElement): StatsRow[] {
  const rows: StatsRow[] = [];
  const seen = new Set<HtmlElement>();
  const shortText = (element: HtmlElement, maxChars: number): string | null => {
    const text = shortRawText(element, maxChars * 4);
    if (text === null) return null;
    const clean = cleanText(text, maxChars + 1);
    return clean.length > maxChars ? null : clean;
  };
  const candidates = findAll(root, (element) => element.children.length > 0 && element.children.length <= 4);
  for (const candidate of candidates) {
    if (rows.length >= MAX_STATS_ROWS) break;
    // Cheap first look: every label starts with one of these words (entities keep the prefix).
    const raw = shortRawText(candidate, (LABEL_MAX_CHARS + VALUE_MAX_CHARS) * 4);
    if (raw === null || !/niveau|nombre|derni/i.test(raw)) continue;
    const text = shortText(candidate, LABEL_MAX_CHARS + VALUE_MAX_CHARS);
    if (text === null) continue;
    const kind = text.length <= LABEL_MAX_CHARS ? classifyRowLabel(foldLabel(text)) : null;
    if (kind === null) {
      const colon = text.indexOf(':');
      if (colon <= 0 || colon > LABEL_MAX_CHARS) continue;
      const inlineKind = classifyRowLabel(foldLabel(text.slice(0, colon)));
      const value = text.slice(colon + 1).trim();
      if (inlineKind !== null && value !== '') rows.push({ kind: inlineKind, value });
      continue;
    }
    let cell = candidate;
    while (cell.parent !== null && cell.parent.tag !== '#root' && shortText(cell.parent, LABEL_MAX_CHARS) === text) cell = cell.parent;
    if (seen.has(cell)) continue;
    seen.add(cell);
    const sibling = nextElementSibling(cell);
    let value: string;
    if (sibling !== null) {
      value = shortText(sibling, VALUE_MAX_CHARS) ?? '';
    } else {
      const parentText = cell.parent === null ? '' : (shortText(cell.parent, LABEL_MAX_CHARS + VALUE_MAX_CHARS) ?? '');
      value = parentText.startsWith(text) ? parentText.slice(text.length).replace(/^\s*:?\s*/, '') : '';
    }
    rows.push({ kind, value });
  }
  return rows;
}

type Percent = { kind: 'value'; value: number } | { kind: 'absent' } | { kind: 'out_of_range' };

/** "84", "84%", "84 %", "84,5 %" → 84 (rounded); no digits → absent (the bar's class is only a colour band). */
function readPercent(text: string): Percent {
  const match = /(\d{1,3}(?:[.,]\d+)?)\s*%?/.exec(text);
  if (match === null || match[1] === undefined) return { kind: 'absent' };
  const value = Math.round(Number(match[1].replace(',', '.')));
  if (!Number.isFinite(value) || value < 0 || value > 100) return { kind: 'out_of_range' };
  return { kind: 'value', value };
}

/** Known labels, with a folded key for matching text such as "Évaluation : gênant". */
const CATEGORY_BY_FOLDED = new Map<string, string>(NUMEROINCONNU_CATEGORIES.map((label) => [foldLabel(label), label]));

function canonicalCategory(text: string): string {
  return CATEGORY_BY_FOLDED.get(foldLabel(text)) ?? text;
}

function readCategory(item: HtmlElement): string {
  const rank = findFirst(item, byClass('rank'));
  if (rank === null) return '';
  const text = cleanText(rawText(rank));
  // A prefix such as "Évaluation : " precedes the label in some versions.
  const label = text.includes(':') ? text.slice(text.lastIndexOf(':') + 1).trim() : text;
  if (label !== '') return canonicalCategory(label);
  for (const className of rank.classes) {
    const match = /^r([1-5])$/.exec(className);
    if (match !== null) return NUMEROINCONNU_CATEGORIES[Number(match[1]) - 1] ?? '';
  }
  return '';
}

function readComments(root: HtmlElement): CommunityComment[] {
  const comments: CommunityComment[] = [];
  const items = findAll(
    root,
    (element) =>
      element.classes.includes('comment-item') &&
      !element.classes.includes('comment-disabled') &&
      !element.classes.includes('comment-item-ad'),
  );
  for (const item of items) {
    if (comments.length >= MAX_COMMENTS) break;
    const textElement = findFirst(item, byClass('comment-text'));
    // The site's own notice on unknown numbers is a comment item without a comment text.
    if (textElement === null) continue;
    // `rawText` joins inline elements without a space, so `span.profanity` loses only its wrapper.
    const text = cleanText(rawText(textElement));
    const dateElement = findFirst(item, byClass('date'));
    comments.push({ text, date: dateElement === null ? '' : parseDate(cleanText(rawText(dateElement))), category: readCategory(item) });
  }
  return comments;
}

/** "Gênant 14 Dangereux 17" (any markup, any separator) → the label with the highest count. */
function readTopCategoryFromFilter(filter: HtmlElement): string {
  const text = cleanText(rawText(filter));
  let best = '';
  let bestCount = -1;
  const pattern = /([\p{L}]+)\s*[:(]?\s*(\d{1,3}(?:[ .\u00a0\u202f]\d{3})+|\d+)\s*[)×x]?/gu;
  for (const match of text.matchAll(pattern)) {
    const label = CATEGORY_BY_FOLDED.get(foldLabel(match[1] ?? ''));
    const count = parseCount(match[2]);
    if (label === undefined || count === null) continue;
    if (count > bestCount) {
      best = label;
      bestCount = count;
    }
  }
  return best;
}

function newestDate(dates: readonly string[]): string {
  let newest = '';
  for (const date of dates) if (dateSortKey(date) > dateSortKey(newest)) newest = date;
  return newest;
}

const isSiteNotice = (element: HtmlElement): boolean => element.tag === 'strong' && element.classes.includes('comment-heading');

/** Which of the markers the parser relies on are present (for the live canary). */
export function describeNumeroinconnuPage(html: string): NumeroinconnuMarkers {
  const root = parseHtml(html);
  const rows = readStatsRows(root);
  const bar = findFirst(root, byId('progress-bar-inner'));
  const hasRow = (kind: RowKind): boolean => rows.some((row) => row.kind === kind);
  return {
    countComments: findFirst(root, byId('count-comments')) !== null,
    commentsRow: hasRow('comments'),
    dangerBar: bar !== null,
    dangerBarPercent: bar !== null && readPercent(cleanText(rawText(bar))).kind === 'value',
    statsTable: rows.length > 0,
    dangerRow: hasRow('danger'),
    visitsRow: hasRow('visits'),
    lastRatingRow: hasRow('lastRating'),
    commentItems: findFirst(root, byClass('comment-item')) !== null,
    commentTexts: findFirst(root, byClass('comment-text')) !== null,
    ranks: findFirst(root, byClass('rank')) !== null,
    readableDates: findAll(root, byClass('date')).some((element) => parseDate(cleanText(rawText(element))) !== ''),
    rankFilter: findFirst(root, byId('filter-rank-only')) !== null,
    siteNotice: findFirst(root, isSiteNotice) !== null,
  };
}

export function parseNumeroinconnuPage(html: string): NumeroinconnuPageResult {
  const root = parseHtml(html);
  const countElement = findFirst(root, byId('count-comments'));
  const bar = findFirst(root, byId('progress-bar-inner'));
  const rows = readStatsRows(root);
  if (countElement === null && bar === null && rows.length === 0) return { kind: 'challenge' };
  const row = (kind: RowKind): StatsRow | undefined => rows.find((candidate) => candidate.kind === kind);

  // Danger: the bar's text first, then the table row; a bar with only its colour class gives no value.
  let dangerPercent: number | null = null;
  for (const source of [bar === null ? undefined : cleanText(rawText(bar)), row('danger')?.value]) {
    if (source === undefined) continue;
    const percent = readPercent(source);
    if (percent.kind === 'out_of_range') return { kind: 'invalid', reason: 'danger percent out of range' };
    if (percent.kind === 'value') {
      dangerPercent = percent.value;
      break;
    }
  }

  const countFromElement = countElement === null ? null : parseCount(cleanText(rawText(countElement)));
  const commentsRow = row('comments');
  const commentsCount = countFromElement ?? (commentsRow === undefined ? null : parseCount(commentsRow.value));
  if (commentsCount === null) return { kind: 'invalid', reason: 'comments count missing or unreadable' };

  const visitsRow = row('visits');
  const visits = visitsRow === undefined ? null : parseCount(visitsRow.value);
  const comments = readComments(root);

  // Unknown number: the site answers 200 with a zero count and its own notice
  // (`strong.comment-heading`) in place of comments. We call any page with no comment at all
  // not_found rather than ok-with-zeros: a danger bar computed from no rating (often 0 %) is
  // no data, and a number nobody rated must never look clean.
  if (commentsCount === 0 && comments.length === 0) return { kind: 'not_found' };

  const filter = findFirst(root, byId('filter-rank-only'));
  const filterTop = filter === null ? '' : readTopCategoryFromFilter(filter);
  const topCategory =
    filterTop !== '' ? filterTop : mostFrequentLabel(comments.map((comment) => ({ label: comment.category, date: comment.date })));

  const lastRatingRow = row('lastRating');
  const lastRatingDate = lastRatingRow === undefined ? '' : parseDate(lastRatingRow.value);
  const lastCommentDate = lastRatingDate !== '' ? lastRatingDate : newestDate(comments.map((comment) => comment.date));

  return {
    kind: 'ok',
    // The listed comments are a lower bound of the count, should the count be stale.
    data: { dangerPercent, visits, commentsCount: Math.max(commentsCount, comments.length), topCategory, lastCommentDate, commentList: comments },
  };
}
