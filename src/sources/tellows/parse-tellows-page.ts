// Pure parser of a tellows number page (`/num/{n}`), with the markers the canary checks. It
// anchors on ids, classes and element order shared by the German, English, Spanish and French
// sites (see docs/upstreams/tellows.md); the only words it reads are labels (searches, the two
// rating tables' headings, the author suffix), in several languages.
import type { PrimaryComment, PrimaryData } from '../../domain/report.js';
import { isTag, isText } from 'domhandler';
import {
  attribute,
  byClass,
  byId,
  byTag,
  childElements,
  findAll,
  findFirst,
  findFirstNear,
  hasClass,
  ITEM_ELEMENTS,
  parsePage,
  previousElementSibling,
  shortTextOf,
  textOf,
} from '../common/html.js';
import type { HtmlElement, HtmlParent } from '../common/html.js';
import { outcomeOfPage, WITHIN_PARSE_BOUND_MARKER } from '../common/outcomes.js';
import type { PageParseResult } from '../common/outcomes.js';
import {
  MAX_COMMENTS,
  MAX_LIST_ITEMS,
  cleanText,
  parseCount,
  parseDate,
  readCount,
  type CountReading,
} from '../common/text.js';
import type { MarkerReport, ParseResult } from '../markers.js';

/** The page's outcome, its markers, and the page's most frequent call type (no comment carries its own). */
export type TellowsPageParse = ParseResult<PrimaryData> & { mainCallerType: string };

const AUTHOR_SUFFIX = /\s*(?:a écrit|schrieb|wrote|escribió|escribio)\s*:?\s*$/i;
/** The searches label's whole text: French (weakly evidenced), German, English, Spanish. */
const SEARCHES_LABEL = /^(?:recherches|suchanfragen|anfragen|searches|b[uú]squedas)\s*:?$/i;
const CALL_TYPES_HEADING =
  /types?\s+d['’]\s*appels?|anruf\s*typ|anrufart|call\s*types?|types?\s+of\s+calls?|tipos?\s+de\s+llamadas?/i;
const CALLER_NAMES_HEADING = /noms?\b|anrufername|caller\s*names?|names?\s+of\s+callers?|nombres?\b/i;

type Score = { kind: 'value'; value: number } | { kind: 'unreadable' } | { kind: 'absent' };

/** `alt` "… Score N …", else a `src` ending in `/images/score/sN.jpg` (the page's) or `scoreN.png` (the API's scorePath). */
function readScore(root: HtmlParent): Score {
  const image = findFirst(root, (element) => element.name === 'img' && hasClass(element, 'scoreimage'));
  if (image === null) return { kind: 'absent' };
  const fromAlt = /score\s*(\d)\b/i.exec(attribute(image, 'alt') ?? '');
  const src = attribute(image, 'src') ?? '';
  const fromSrc = /\/s(\d)\.jpe?g(?:$|[?#])/i.exec(src) ?? /score(\d)\.png(?:$|[?#])/i.exec(src);
  const value = Number(fromAlt?.[1] ?? fromSrc?.[1] ?? NaN);
  return value >= 1 && value <= 9 ? { kind: 'value', value } : { kind: 'unreadable' };
}

/** `<a href="#complaint_list"><strong>Évaluations: <span>12</span></strong></a>`: the span's number, else the link's. */
function readCommentsCount(root: HtmlParent): CountReading {
  const link = findFirst(
    root,
    (element) => element.name === 'a' && (attribute(element, 'href') ?? '').endsWith('#complaint_list'),
  );
  if (link === null) return { kind: 'absent' };
  const span = findFirstNear(link, byTag('span'), ITEM_ELEMENTS);
  const inSpan = span === null ? ({ kind: 'absent' } as const) : readCount(textOf(span));
  return inSpan.kind === 'absent' ? readCount(textOf(link)) : inSpan;
}

/**
 * The number right after the searches label element (`<strong>Recherches:</strong> 1 234`).
 * Only a label whose whole text is the word counts: a "Dernières recherches" sidebar lists
 * other numbers and must never be read as a count.
 */
function readSearches(root: HtmlParent): CountReading {
  const labels = findAll(
    root,
    (element) => ['strong', 'b', 'span', 'dt', 'th'].includes(element.name) && element.children.length <= 3,
  );
  for (const label of labels) {
    const text = shortTextOf(label, 30);
    if (text === null || !SEARCHES_LABEL.test(text)) continue;
    for (let node = label.next; node !== null; node = node.next) {
      const following = isText(node) ? cleanText(node.data) : isTag(node) ? (shortTextOf(node, 40) ?? '') : '';
      if (following === '') continue;
      // A sign before the digits makes it a number that is not a count, never a missing one.
      const count = /^[-+\u2212]?\d/.test(following) ? readCount(following) : ({ kind: 'absent' } as const);
      if (count.kind !== 'absent') return count;
      break;
    }
  }
  return { kind: 'absent' };
}

/** A real page has two rating tables, each a few elements below its heading: the look stops there. */
const MAX_RATING_TABLES = 4;
const MAX_HEADING_DISTANCE = 6;

/** The heading a rating table sits under: the nearest heading before it, up to its column. */
function headingOf(table: HtmlElement): string {
  for (let scope: HtmlElement | null = table, depth = 0; scope !== null && depth < 4; depth += 1) {
    let sibling = previousElementSibling(scope);
    for (let distance = 0; sibling !== null && distance < MAX_HEADING_DISTANCE; distance += 1) {
      if (/^h[1-6]$/.test(sibling.name)) return shortTextOf(sibling, 80) ?? '';
      const inner = findFirstNear(sibling, byTag('h4', 'h5', 'h6'), MAX_HEADING_DISTANCE);
      if (inner !== null) return shortTextOf(inner, 80) ?? '';
      sibling = previousElementSibling(sibling);
    }
    scope = scope.parent !== null && isTag(scope.parent) ? scope.parent : null;
  }
  return '';
}

/**
 * The call-type table among the `table.table-rating` ones: the one under a call-type heading,
 * else the one that is not under a caller-names heading (when that choice is unambiguous).
 */
function chooseCallTypeTable(tables: readonly HtmlElement[]): HtmlElement | null {
  const headed = tables.slice(0, MAX_RATING_TABLES).map((table) => ({ table, heading: headingOf(table) }));
  const byHeading = headed.find(({ heading }) => CALL_TYPES_HEADING.test(heading));
  if (byHeading !== undefined) return byHeading.table;
  const notNames = headed.filter(({ heading }) => !CALLER_NAMES_HEADING.test(heading));
  return notNames.length === 1 ? (notNames[0]?.table ?? null) : null;
}

/** Rows `<th>Démarchage <span class="small">(9)</span></th>`: the type without its count, most frequent first. */
function readCallerTypes(table: HtmlElement): Array<{ name: string; count: number }> {
  const rows = findAll(table, byTag('tr')).flatMap((row) => {
    const header = findFirstNear(row, byTag('th'), ITEM_ELEMENTS);
    if (header === null) return [];
    const name = textOf(header, (element) => hasClass(element, 'small'));
    const count = parseCount(textOf(findFirstNear(row, byClass('small'), ITEM_ELEMENTS)));
    return name === '' ? [] : [{ name, count: count ?? 0 }];
  });
  // Stable sort keeps the page's order among equal counts.
  return rows.sort((left, right) => right.count - left.count);
}

function readComments(root: HtmlParent, callerType: string): PrimaryComment[] {
  const container = findFirst(root, byId('singlecomments'));
  if (container === null) return [];
  const comments: PrimaryComment[] = [];
  for (const item of childElements(container)
    .filter((element) => element.name === 'li')
    .slice(0, MAX_LIST_ITEMS)) {
    if (comments.length >= MAX_COMMENTS) break;
    const body = findFirstNear(item, byClass('comment-body'), ITEM_ELEMENTS);
    const paragraph =
      body === null
        ? null
        : findFirstNear(body, (element) => element.name === 'p' && hasClass(element, 'mb-0'), ITEM_ELEMENTS);
    const text = textOf(paragraph ?? body);
    if (text === '') continue;
    const lead = findFirstNear(item, (element) => element.name === 'p' && hasClass(element, 'lead'), ITEM_ELEMENTS);
    comments.push({
      author: textOf(lead).replace(AUTHOR_SUFFIX, ''),
      text,
      // The meta starts with the date, then other text ("12.03.24 14:05 Signaler").
      date: parseDate(textOf(findFirstNear(item, byClass('comment-meta'), ITEM_ELEMENTS))),
      callerType,
    });
  }
  return comments;
}

function readPage(
  root: HtmlParent,
  markers: MarkerReport[],
): PageParseResult<PrimaryData> & { mainCallerType: string } {
  const score = readScore(root);
  const commentsCountOnPage = readCommentsCount(root);
  const searchesOnPage = readSearches(root);
  const ratingTables = findAll(root, (element) => element.name === 'table' && hasClass(element, 'table-rating'));
  const callTypeTable = chooseCallTypeTable(ratingTables);
  const callerTypes = callTypeTable === null ? [] : readCallerTypes(callTypeTable);
  // The HTML has no caller type per comment: every comment takes the page's most frequent one.
  const mainCallerType = callerTypes[0]?.name ?? '';
  const commentList = readComments(root, mainCallerType);
  markers.push(
    { marker: 'img.scoreimage', found: score.kind !== 'absent' },
    { marker: 'score in img.scoreimage alt or src (s{N}.jpg / score{N}.png)', found: score.kind === 'value' },
    { marker: 'a[href$="#complaint_list"] count', found: commentsCountOnPage.kind === 'value', required: false },
    {
      marker: 'searches label element (Recherches/Suchanfragen/Searches) + count',
      found: searchesOnPage.kind === 'value',
      required: false,
    },
    { marker: 'table.table-rating under a call-type h5 heading', found: callTypeTable !== null, required: false },
    { marker: 'call-type rows (th text + span.small count)', found: callerTypes.length > 0, required: false },
    { marker: '#singlecomments > li', found: findFirst(root, byId('singlecomments')) !== null, required: false },
    {
      marker: 'li div.comment-body p.mb-0 + div.comment-meta date',
      found: commentList.some((comment) => comment.date !== ''),
      required: false,
    },
  );
  if (score.kind === 'absent') return { kind: 'challenge', mainCallerType };
  if (score.kind === 'unreadable')
    return { kind: 'invalid', reason: 'score image without a readable score', mainCallerType };
  if (commentsCountOnPage.kind === 'invalid')
    return { kind: 'invalid', reason: 'comments count unreadable', mainCallerType };
  if (searchesOnPage.kind === 'invalid')
    return { kind: 'invalid', reason: 'searches count unreadable', mainCallerType };
  const commentsCount = commentsCountOnPage.kind === 'value' ? commentsCountOnPage.value : commentList.length;
  const searches = searchesOnPage.kind === 'value' ? searchesOnPage.value : 0;
  // Same unknown-number rule as the API: no comment and no search → not_found; a page with no
  // rating keeps a null score (tellows draws a neutral 5 for unrated numbers).
  if (commentsCount === 0 && searches === 0) return { kind: 'not_found', mainCallerType };
  return {
    kind: 'ok',
    data: { score: commentsCount === 0 ? null : score.value, searches, commentsCount, commentList },
    mainCallerType,
  };
}

export function parseTellowsPage(html: string): TellowsPageParse {
  const tree = parsePage(html);
  // Reported only when passed: a page within the bound is every page the canary knows.
  const markers: MarkerReport[] = tree.kind === 'tree' ? [] : [{ marker: WITHIN_PARSE_BOUND_MARKER, found: false }];
  if (tree.kind === 'too_complex')
    return { outcome: outcomeOfPage({ kind: 'invalid', reason: 'page too complex' }), markers, mainCallerType: '' };
  const page = readPage(tree.root, markers);
  return { outcome: outcomeOfPage(page), markers, mainCallerType: page.mainCallerType };
}

/** The markers of a page, for the live canary. */
export function markersOfTellowsPage(body: string): MarkerReport[] {
  return parseTellowsPage(body).markers;
}
