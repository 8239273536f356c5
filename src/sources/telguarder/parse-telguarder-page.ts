// Reads a telguarder number page (the answer to POST /fr/search) into the `signals` slot's data.
// Pure: HTML text in, typed result out; never throws. The `ai-*` class names are shared by
// every locale of the site (see shared/upstreams/telguarder.md); the French date format, the
// level's direction and the unknown-number page are unverified and handled as noted below.
import type { SignalsComment, SignalsData } from '../../domain/report.js';
import { byClass, byId, childElements, findAll, findFirst, parseHtml, rawText } from '../common/html.js';
import type { HtmlElement } from '../common/html.js';
import { mostFrequentLabel } from '../common/most-frequent.js';
import { cleanText, MAX_COMMENTS, parseCount, parseDate } from '../common/text.js';

export type TelguarderPageResult =
  | { kind: 'ok'; data: SignalsData }
  | { kind: 'not_found' }
  /** No stats panel: a captcha, an interstitial or a different page. */
  | { kind: 'challenge' }
  /** The page is the site's, but a required value is malformed. */
  | { kind: 'invalid'; reason: string };

export interface TelguarderMarkers {
  statsPanel: boolean;
  statsCells: number;
  securityLevel: boolean;
  assessments: number;
  assessmentDates: number;
  spamReasons: number;
}

/**
 * Which way `data-security-level` points. Evidence (the mobile app marks a number reported as
 * telephone spam with 50) says higher = riskier, but it is unverified: if the canary shows the
 * opposite, flip this one constant.
 */
export const TELGUARDER_LEVEL_DIRECTION: 'higher_is_riskier' | 'higher_is_safer' = 'higher_is_riskier';

/** `data-security-level` (0–100, 0 = not enough data) as the spec's spamScore (0–100, higher = riskier) or null. */
export function securityLevelToSpamScore(
  level: number | null,
  direction: 'higher_is_riskier' | 'higher_is_safer' = TELGUARDER_LEVEL_DIRECTION,
): number | null {
  if (level === null || level === 0) return null;
  return direction === 'higher_is_riskier' ? level : 100 - level;
}

type Level = { kind: 'value'; value: number } | { kind: 'absent' } | { kind: 'malformed' };

function readSecurityLevel(root: HtmlElement): Level {
  const element = findFirst(root, byId('securityLevelValue'));
  const attribute = element?.attributes.get('data-security-level');
  if (attribute === undefined || attribute.trim() === '') return { kind: 'absent' };
  const match = /^\s*(\d{1,3})(?:[.,]\d+)?\s*%?\s*$/.exec(attribute);
  if (match === null) return { kind: 'malformed' };
  const value = Number(match[1]);
  return value > 100 ? { kind: 'malformed' } : { kind: 'value', value };
}

/** A stats cell is a label then a value: `.ai-row-info-value`, else the cell's second element. */
function readCellValue(cell: HtmlElement): string {
  const value = findFirst(cell, byClass('ai-row-info-value')) ?? childElements(cell)[1] ?? null;
  return value === null ? '' : cleanText(rawText(value));
}

/** Slug class → label, for a reason element with no text ("ai-sr-telephone-seller" → "Telephone seller"). */
function labelFromSlug(element: HtmlElement): string {
  for (const className of element.classes) {
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

function readComments(root: HtmlElement): SignalsComment[] {
  const comments: SignalsComment[] = [];
  const seen = new Set<string>();
  for (const body of findAll(root, byClass('ai-assessment-body'))) {
    if (comments.length >= MAX_COMMENTS) break;
    const textElement = findFirst(body, byClass('ai-comment-text'));
    const text = textElement === null ? '' : cleanText(rawText(textElement)).replace(COMMENT_TRAILER, '');
    const dateElement = findFirst(body, byClass('ai-assessment-date'));
    const date = dateElement === null ? '' : parseDate(cleanText(rawText(dateElement)));
    const reason = findFirst(body, byClass('ai-spam-reason'));
    const reasonText = reason === null ? '' : cleanText(rawText(reason));
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

/** Which of the markers the parser relies on are present (for the live canary). */
export function describeTelguarderPage(html: string): TelguarderMarkers {
  const root = parseHtml(html);
  const panel = findFirst(root, byClass('ai-number-stats-panel'));
  return {
    statsPanel: panel !== null,
    statsCells: panel === null ? 0 : findAll(panel, byClass('ai-row-1-cell')).length,
    securityLevel: readSecurityLevel(root).kind !== 'absent',
    assessments: findAll(root, byClass('ai-assessment-body')).length,
    assessmentDates: findAll(root, byClass('ai-assessment-date')).filter((element) => parseDate(cleanText(rawText(element))) !== '').length,
    spamReasons: findAll(root, byClass('ai-spam-reason')).length,
  };
}

export function parseTelguarderPage(html: string): TelguarderPageResult {
  const root = parseHtml(html);
  const panel = findFirst(root, byClass('ai-number-stats-panel'));
  if (panel === null) return { kind: 'challenge' };

  const cells = findAll(panel, byClass('ai-row-1-cell'));
  const reportsCell = cells[1];
  const reportsCount = reportsCell === undefined ? null : parseCount(readCellValue(reportsCell));

  const level = readSecurityLevel(root);
  if (level.kind === 'malformed') return { kind: 'invalid', reason: 'security level malformed' };
  const spamScore = securityLevelToSpamScore(level.kind === 'value' ? level.value : null);

  const ownComments = readComments(root);
  const callerType = mostFrequentLabel(ownComments.map((comment) => ({ label: comment.callerType, date: comment.date })));

  // Unknown number (unverified): nothing reported, no level, no assessment. The search count
  // is ignored on purpose: looking a number up may itself count as a search.
  if ((reportsCount === null || reportsCount === 0) && spamScore === null && ownComments.length === 0) {
    return { kind: 'not_found' };
  }

  // A comment without its own caller type takes the number's main caller type.
  const commentList = ownComments.map((comment) => (comment.callerType === '' ? { ...comment, callerType } : comment));
  return { kind: 'ok', data: { spamScore, reportsCount, callerType, commentList } };
}
