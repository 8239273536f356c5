// Reads a telguarder number page (the answer to POST /fr/search or GET /fr/number/{n}) into
// the `signals` slot's data, with the markers the canary checks. Pure: HTML text in, typed
// result out; never throws. The `ai-*` class names are shared by every locale of the site (see
// docs/upstreams/telguarder.md); the French date format, the level on the web page and the
// unknown-number page are unverified and tolerated as noted below.
import type { SignalsComment, SignalsData } from '../../domain/report.js';
import {
  attribute,
  byClass,
  byId,
  childElements,
  classesOf,
  findAll,
  findFirst,
  findFirstNear,
  ITEM_ELEMENTS,
  parsePage,
  textOf,
} from '../common/html.js';
import type { HtmlElement, HtmlParent } from '../common/html.js';
import { outcomeOfPage, WITHIN_PARSE_BOUND_MARKER } from '../common/outcomes.js';
import type { PageParseResult } from '../common/outcomes.js';
import type { MarkerReport, ParseResult } from '../markers.js';
import { mostFrequentLabel } from '../common/most-frequent.js';
import { cleanText, MAX_COMMENTS, MAX_LIST_ITEMS, parseDate, readCount } from '../common/text.js';

/**
 * telguarder's `data-security-level` is a *security* level, higher = safer (its own app API
 * gives 26 to a number reported thousands of times as spam and 90 to a clean company): the
 * spec's spamScore (higher = riskier) is 100 − level; 0 ("not enough data") or no level is null.
 */
export function securityLevelToSpamScore(level: number | null): number | null {
  if (level === null || level === 0) return null;
  return 100 - level;
}

type Level = { kind: 'value'; value: number } | { kind: 'absent' } | { kind: 'malformed' };

function readSecurityLevel(root: HtmlParent): Level {
  const element = findFirst(root, byId('securityLevelValue'));
  const value = element === null ? undefined : attribute(element, 'data-security-level');
  if (value === undefined || value.trim() === '') return { kind: 'absent' };
  const match = /^\s*(\d{1,3})(?:[.,]\d+)?\s*%?\s*$/.exec(value);
  if (match === null) return { kind: 'malformed' };
  const level = Number(match[1]);
  return level > 100 ? { kind: 'malformed' } : { kind: 'value', value: level };
}

/** A stats cell is a label then a value: `.ai-row-info-value`, else the cell's second element. */
function readCellValue(cell: HtmlElement): string {
  const value = findFirstNear(cell, byClass('ai-row-info-value'), ITEM_ELEMENTS) ?? childElements(cell)[1] ?? null;
  return textOf(value);
}

/** Slug class → label, for a reason element with no text ("ai-sr-telephone-seller" → "Telephone seller"). */
function labelFromSlug(element: HtmlElement): string {
  for (const className of classesOf(element)) {
    const match = /^ai-sr-([a-z0-9-]+)$/.exec(className);
    if (match?.[1] !== undefined) {
      const words = match[1].replace(/-+/g, ' ').trim();
      return words === '' ? '' : cleanText(words.charAt(0).toUpperCase() + words.slice(1));
    }
  }
  return '';
}

/** The site appends where a comment came from: "… Commentaire de l'utilisateur (France, web)". */
const COMMENT_TRAILER = /\s*Commentaire de l['’]utilisateur\s*(?:\([^)]*\))?\s*$/i;

function readComments(root: HtmlParent): SignalsComment[] {
  const comments: SignalsComment[] = [];
  const seen = new Set<string>();
  for (const body of findAll(root, byClass('ai-assessment-body')).slice(0, MAX_LIST_ITEMS)) {
    if (comments.length >= MAX_COMMENTS) break;
    const textElement = findFirstNear(body, byClass('ai-comment-text'), ITEM_ELEMENTS);
    const text = textOf(textElement).replace(COMMENT_TRAILER, '');
    const dateElement = findFirstNear(body, byClass('ai-assessment-date'), ITEM_ELEMENTS);
    const date = parseDate(textOf(dateElement));
    const reason = findFirstNear(body, byClass('ai-spam-reason'), ITEM_ELEMENTS);
    const reasonText = textOf(reason);
    const callerType = reason === null ? '' : reasonText !== '' ? reasonText : labelFromSlug(reason);
    if (text === '' && callerType === '') continue;
    // The latest-comment panel may repeat an assessment listed in the container.
    const key = `${text}\u0000${date}\u0000${callerType}`;
    if (seen.has(key)) continue;
    seen.add(key);
    comments.push({ text, date, callerType });
  }
  return comments;
}

function readPage(root: HtmlParent, markers: MarkerReport[]): PageParseResult<SignalsData> {
  const panel = findFirst(root, byClass('ai-number-stats-panel'));
  markers.push({ marker: 'div.ai-number-stats-panel', found: panel !== null });
  if (panel === null) return { kind: 'challenge' };

  const cells = findAll(panel, byClass('ai-row-1-cell'));
  markers.push({
    marker: 'div.ai-row-1-cell x3 (searches, reports, last search)',
    found: cells.length >= 3,
    required: false,
  });
  const reportsCell = cells[1];
  const reports = reportsCell === undefined ? ({ kind: 'absent' } as const) : readCount(readCellValue(reportsCell));
  const reportsCount = reports.kind === 'value' ? reports.value : null;
  markers.push({
    marker: 'div.ai-row-1-cell #2 (reports) with a count',
    found: reportsCount !== null,
    required: false,
  });
  if (reports.kind === 'invalid') return { kind: 'invalid', reason: 'reports count unreadable' };

  const level = readSecurityLevel(root);
  markers.push({
    marker: '#securityLevelValue[data-security-level] (web page: unverified)',
    found: level.kind === 'value',
    required: false,
  });
  if (level.kind === 'malformed') return { kind: 'invalid', reason: 'security level malformed' };
  const spamScore = securityLevelToSpamScore(level.kind === 'value' ? level.value : null);

  const ownComments = readComments(root);
  markers.push({
    marker: '.ai-assessment-body',
    found: findFirst(root, byClass('ai-assessment-body')) !== null,
    required: false,
  });
  markers.push({
    marker: '.ai-assessment-date with a readable date (French format unverified)',
    found: ownComments.some((comment) => comment.date !== ''),
    required: false,
  });
  markers.push({
    marker: '.ai-spam-reason',
    found: findFirst(root, byClass('ai-spam-reason')) !== null,
    required: false,
  });
  const callerType = mostFrequentLabel(
    ownComments.map((comment) => ({ label: comment.callerType, date: comment.date })),
  );

  // Unknown number (unverified): nothing reported, no level, no assessment. The search count
  // is ignored on purpose: looking a number up may itself count as a search.
  if ((reportsCount === null || reportsCount === 0) && spamScore === null && ownComments.length === 0) {
    return { kind: 'not_found' };
  }

  // A comment without its own caller type takes the number's main caller type.
  const commentList = ownComments.map((comment) => (comment.callerType === '' ? { ...comment, callerType } : comment));
  return { kind: 'ok', data: { spamScore, reportsCount, callerType, commentList } };
}

export function parseTelguarderPage(html: string): ParseResult<SignalsData> {
  const tree = parsePage(html);
  // Reported only when passed: a page within the bound is every page the canary knows.
  const markers: MarkerReport[] = tree.kind === 'tree' ? [] : [{ marker: WITHIN_PARSE_BOUND_MARKER, found: false }];
  const outcome = outcomeOfPage(
    tree.kind === 'tree' ? readPage(tree.root, markers) : { kind: 'invalid', reason: 'page too complex' },
  );
  return { outcome, markers };
}

/** The markers the parser relies on, found or not in a real page (for the live canary). */
export function markersOfTelguarder(body: string): MarkerReport[] {
  return parseTelguarderPage(body).markers;
}
