// Reads a numeroinconnu.fr number page (GET /numero/{n}) into the `community` slot's data, with
// the markers the canary checks. Pure: HTML text in, typed result out; never throws. The markup
// is the one the site's template family shares (see docs/upstreams/numeroinconnu.md); what is
// unverified is tolerated in its plausible variants and reported as `invalid` when a required
// value cannot be read.
import { isTag } from 'domhandler';
import type { CommunityComment, CommunityData } from '../../domain/report.js';
import {
  boundedText,
  byClass,
  byId,
  byTag,
  classesOf,
  closest,
  findAll,
  findFirst,
  findFirstNear,
  hasClass,
  ITEM_ELEMENTS,
  nextElementSibling,
  parsePage,
  previousElementSibling,
  shortTextOf,
  textOf,
} from '../common/html.js';
import type { HtmlElement, HtmlParent } from '../common/html.js';
import { outcomeOfPage, WITHIN_PARSE_BOUND_MARKER } from '../common/outcomes.js';
import type { PageParseResult } from '../common/outcomes.js';
import type { MarkerReport, ParseResult } from '../markers.js';
import { mostFrequentLabel } from '../common/most-frequent.js';
import {
  dateSortKey,
  MAX_COMMENTS,
  MAX_LIST_ITEMS,
  parseCount,
  parseDate,
  readCount,
  readPercent,
  type CountReading,
} from '../common/text.js';

/** Labels in danger order; `strong.rank.rN` maps to entry N-1 (order confirmed by the twin's rating form). */
export const NUMEROINCONNU_CATEGORIES = ['Dangereux', 'Gênant', 'Neutre', 'Fiable', 'Utile'] as const;

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
 * Finds label/value rows inside one scope whatever the markup (`<tr><td>label</td><td>value</td>`,
 * `<dt>/<dd>`, `<li><b>label</b> value</li>`, `<p>label : value</p>`): the label is the
 * outermost element (within the scope) whose whole text is a known label and the value its next
 * sibling element, else the rest of its parent's text; or an element whose short text is
 * "label : value".
 */
function readStatsRows(scope: HtmlElement): StatsRow[] {
  const rows: StatsRow[] = [];
  const seen = new Set<HtmlElement>();
  const candidates = [
    scope,
    ...findAll(scope, (element) => element.children.length > 0 && element.children.length <= 4),
  ];
  for (const candidate of candidates) {
    if (rows.length >= MAX_STATS_ROWS) break;
    if (candidate.children.length === 0 || candidate.children.length > 4) continue;
    // Cheap first look: every label starts with one of these words.
    const raw = boundedText(candidate, (LABEL_MAX_CHARS + VALUE_MAX_CHARS) * 4);
    if (raw === null || !/niveau|nombre|derni/i.test(raw)) continue;
    const text = shortTextOf(candidate, LABEL_MAX_CHARS + VALUE_MAX_CHARS);
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
    for (let parent = cell.parent; cell !== scope && parent !== null && isTag(parent); parent = cell.parent) {
      if (shortTextOf(parent, LABEL_MAX_CHARS) !== text) break;
      cell = parent;
    }
    if (seen.has(cell)) continue;
    seen.add(cell);
    const sibling = nextElementSibling(cell);
    let value: string;
    if (sibling !== null) {
      value = shortTextOf(sibling, VALUE_MAX_CHARS) ?? '';
    } else {
      const parentText =
        cell.parent === null ? '' : (shortTextOf(cell.parent, LABEL_MAX_CHARS + VALUE_MAX_CHARS) ?? '');
      value = parentText.startsWith(text) ? parentText.slice(text.length).replace(/^\s*:?\s*/, '') : '';
    }
    rows.push({ kind, value });
  }
  return rows;
}

const isTable = byTag('table');

/** How far into a table its header is looked for: a header opens the table. */
const HEADER_SEARCH_ELEMENTS = 40;

/** A views table is announced by a short "Visites"-like header: its first caption or `th`, or the heading just before it. */
function hasViewsHeader(table: HtmlElement): boolean {
  const headers = [findFirstNear(table, byTag('caption', 'th'), HEADER_SEARCH_ELEMENTS), previousElementSibling(table)];
  return headers.some((header) => {
    if (header === null || !/^(?:caption|th|h[1-6])$/.test(header.name)) return false;
    const text = shortTextOf(header, LABEL_MAX_CHARS);
    if (text === null) return false;
    const folded = foldLabel(text);
    return folded.includes('visite') && classifyRowLabel(folded) === null;
  });
}

interface Scopes {
  statsTable: HtmlElement | null;
  viewsTables: HtmlElement[];
  /** Older family layouts without tables: a block marked `stats`. */
  statsBlocks: HtmlElement[];
}

/**
 * Where label rows may be read: the table holding `#count-comments` or the bar, the tables under
 * a views header, and `.stats` blocks. Never the whole page: a hidden locality table earlier in
 * the page reuses the views label for the region's population.
 */
function findScopes(root: HtmlParent, countElement: HtmlElement | null, bar: HtmlElement | null): Scopes {
  const statsTable =
    (countElement === null ? null : closest(countElement, isTable)) ??
    (bar === null ? null : closest(bar, isTable)) ??
    null;
  const viewsTables = outermost(
    findAll(root, (element) => isTable(element) && element !== statsTable && hasViewsHeader(element)),
  );
  const statsBlocks = outermost(
    findAll(root, (element) => hasClass(element, 'stats') && element !== statsTable && !viewsTables.includes(element)),
  );
  return { statsTable, viewsTables, statsBlocks };
}

/** Drops the elements nested in another of the list: each subtree is read once. */
function outermost(elements: readonly HtmlElement[]): HtmlElement[] {
  const members = new Set(elements);
  return elements.filter((element) => closest(element, (ancestor) => members.has(ancestor)) === null);
}

/** Known labels, with a folded key for matching text such as "Évaluation : gênant". */
const CATEGORY_BY_FOLDED = new Map<string, string>(NUMEROINCONNU_CATEGORIES.map((label) => [foldLabel(label), label]));

function canonicalCategory(text: string): string {
  return CATEGORY_BY_FOLDED.get(foldLabel(text)) ?? text;
}

function readCategory(rank: HtmlElement): string {
  const text = textOf(rank);
  // A prefix such as "Évaluation : " precedes the label in some versions.
  const label = text.includes(':') ? text.slice(text.lastIndexOf(':') + 1).trim() : text;
  if (label !== '') return canonicalCategory(label);
  return categoryOfRankClass(rank);
}

/** `r1`…`r5` → its label; '' when the element carries no rating class. */
function categoryOfRankClass(rank: HtmlElement): string {
  for (const className of classesOf(rank)) {
    const match = /^r([1-5])$/.exec(className);
    if (match !== null) return NUMEROINCONNU_CATEGORIES[Number(match[1]) - 1] ?? '';
  }
  return '';
}

interface CommentScan {
  comments: CommunityComment[];
  items: number;
  /** Items that are the site's own notices: no rating or no readable date. */
  notices: number;
  adverts: number;
}

/**
 * A real comment is a `div.comment-item` (an advert follows a `comment-item-ad` one, but that
 * item is a user's comment too) with a rating (`strong.rank.rN`) and a readable date. The
 * site's notices (administrator message, partner pointers, removed placeholders) are items
 * too, without either, and are no comment.
 */
function readComments(root: HtmlParent): CommentScan {
  const comments: CommunityComment[] = [];
  let notices = 0;
  const items = findAll(root, (element) => hasClass(element, 'comment-item') && !hasClass(element, 'comment-disabled'));
  for (const item of items.slice(0, MAX_LIST_ITEMS)) {
    if (comments.length >= MAX_COMMENTS) break;
    const rank = findFirstNear(
      item,
      (element) => hasClass(element, 'rank') && categoryOfRankClass(element) !== '',
      ITEM_ELEMENTS,
    );
    const dateElement = findFirstNear(item, byClass('date'), ITEM_ELEMENTS);
    const date = parseDate(textOf(dateElement));
    const textElement = findFirstNear(item, byClass('comment-text'), ITEM_ELEMENTS);
    if (rank === null || date === '' || textElement === null) {
      notices += 1;
      continue;
    }
    // Inline elements join without a space, so `span.profanity` loses only its wrapper.
    comments.push({ text: textOf(textElement), date, category: readCategory(rank) });
  }
  return { comments, items: items.length, notices, adverts: findAll(root, byClass('ad-comments')).length };
}

/** "Gênant 14 Dangereux 17" (any markup, any separator) → the label with the highest count; ties: the first listed. */
function readTopCategoryFromFilter(filter: HtmlElement): string {
  const text = textOf(filter);
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

function readPage(root: HtmlParent, markers: MarkerReport[]): PageParseResult<CommunityData> {
  const countElement = findFirst(root, byId('count-comments'));
  const bar = findFirst(root, byId('progress-bar-inner'));
  const scopes = findScopes(root, countElement, bar);
  const statsRows = [scopes.statsTable, ...scopes.statsBlocks].flatMap((scope) =>
    scope === null ? [] : readStatsRows(scope),
  );
  const viewsRows = scopes.viewsTables.flatMap(readStatsRows);
  const row = (kind: RowKind): StatsRow | undefined => statsRows.find((candidate) => candidate.kind === kind);
  const visitsRow = viewsRows.find((candidate) => candidate.kind === 'visits') ?? row('visits');
  const lastRatingRow = row('lastRating') ?? viewsRows.find((candidate) => candidate.kind === 'lastRating');
  const scan = readComments(root);

  const countFromElement: CountReading = countElement === null ? { kind: 'absent' } : readCount(textOf(countElement));
  const commentsRow = row('comments');
  const countReading = countFromElement.kind !== 'absent' ? countFromElement : readCount(commentsRow?.value);
  const commentsCount = countReading.kind === 'value' ? countReading.value : null;
  const barPercent: CountReading = bar === null ? { kind: 'absent' } : readPercent(textOf(bar));

  markers.push(
    // The comment count is the one value the parser cannot do without (from either place).
    { marker: 'comments count (#count-comments or row "Nombre de commentaires")', found: commentsCount !== null },
    { marker: '#count-comments', found: countElement !== null, required: false },
    {
      marker: 'stats table (the table holding #count-comments or #progress-bar-inner)',
      found: scopes.statsTable !== null,
      required: false,
    },
    { marker: '#progress-bar-inner', found: bar !== null, required: false },
    { marker: '#progress-bar-inner with a percentage', found: barPercent.kind === 'value', required: false },
    { marker: 'row "Niveau de danger"', found: row('danger') !== undefined, required: false },
    { marker: 'views table (a "Visites" header)', found: scopes.viewsTables.length > 0, required: false },
    {
      marker: 'row "Nombre de visites" in the views table',
      found: viewsRows.some((candidate) => candidate.kind === 'visits'),
      required: false,
    },
    {
      marker: 'row last rating ("Dernière évaluation" or similar; label unverified)',
      found: lastRatingRow !== undefined,
      required: false,
    },
    { marker: 'div.comment-item', found: scan.items > 0, required: false },
    {
      marker: 'real comment (strong.rank.rN + p.comment-text + readable span.date)',
      found: scan.comments.length > 0,
      required: false,
    },
    { marker: 'site notice (comment item without rating or date)', found: scan.notices > 0, required: false },
    { marker: 'div.ad-comments', found: scan.adverts > 0, required: false },
    { marker: '#filter-rank-only', found: findFirst(root, byId('filter-rank-only')) !== null, required: false },
  );

  if (countElement === null && bar === null && statsRows.length === 0 && viewsRows.length === 0)
    return { kind: 'challenge' };

  // Danger: the bar's text first, then the table row; a bar with only its colour class gives no value.
  let dangerPercent: number | null = null;
  for (const percent of [barPercent, readPercent(row('danger')?.value ?? '')]) {
    if (percent.kind === 'invalid') return { kind: 'invalid', reason: 'danger percent out of range' };
    if (percent.kind === 'value') {
      dangerPercent = percent.value;
      break;
    }
  }

  if (commentsCount === null) return { kind: 'invalid', reason: 'comments count missing or unreadable' };
  const visitsReading = readCount(visitsRow?.value);
  if (visitsReading.kind === 'invalid') return { kind: 'invalid', reason: 'visits count unreadable' };
  const visits = visitsReading.kind === 'value' ? visitsReading.value : null;
  const comments = scan.comments;

  // Unknown number: a zero count, and at most the site's own notice in place of comments. A
  // danger bar computed from no rating is no data, and a number nobody rated must never look clean.
  if (commentsCount === 0 && comments.length === 0) return { kind: 'not_found' };

  const filter = findFirst(root, byId('filter-rank-only'));
  const filterTop = filter === null ? '' : readTopCategoryFromFilter(filter);
  const topCategory =
    filterTop !== ''
      ? filterTop
      : mostFrequentLabel(comments.map((comment) => ({ label: comment.category, date: comment.date })));

  const lastRatingDate = lastRatingRow === undefined ? '' : parseDate(lastRatingRow.value);
  const lastCommentDate = lastRatingDate !== '' ? lastRatingDate : newestDate(comments.map((comment) => comment.date));

  return {
    kind: 'ok',
    // The listed comments are a lower bound of the count, should the count be stale.
    data: {
      dangerPercent,
      visits,
      commentsCount: Math.max(commentsCount, comments.length),
      topCategory,
      lastCommentDate,
      commentList: comments,
    },
  };
}

export function parseNumeroinconnuPage(html: string): ParseResult<CommunityData> {
  const tree = parsePage(html);
  // Reported only when passed: a page within the bound is every page the canary knows.
  const markers: MarkerReport[] = tree.kind === 'tree' ? [] : [{ marker: WITHIN_PARSE_BOUND_MARKER, found: false }];
  const outcome = outcomeOfPage(
    tree.kind === 'tree' ? readPage(tree.root, markers) : { kind: 'invalid', reason: 'page too complex' },
  );
  return { outcome, markers };
}

/** The markers the parser relies on, found or not in a real page (for the live canary). */
export function markersOfNumeroinconnu(body: string): MarkerReport[] {
  return parseNumeroinconnuPage(body).markers;
}
