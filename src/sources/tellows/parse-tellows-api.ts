// Pure parser of the tellows partner API answer (`/basic/num/{n}?json=1`), with the markers the
// canary checks. The body is JSON served as text/html, possibly with a "Partner Data not
// correct" line before or after it; every scalar is a string; each list may collapse to one
// object, a bare string, or vanish.
import type { PrimaryComment, PrimaryData } from '../../domain/report.js';
import { MAX_PAGE_NODES, plainText } from '../common/html.js';
import { MAX_COMMENTS, cleanText, parseCount, parseDate, readCount } from '../common/text.js';
import type { MarkerReport, ParseResult } from '../markers.js';
import { WITHIN_PARSE_BOUND_MARKER } from '../common/outcomes.js';
import { failed, notFound, ok } from '../../domain/ports/source.js';

/** The answer's outcome (`error(auth)` for a refused key), its markers, and the number's most frequent caller type. */
export type TellowsApiParse = ParseResult<PrimaryData> & { mainCallerType: string };

const INVALID_KEY_TEXT = /NOT AUTHORIZED REQUEST|API Key not valid/i;
/** How many `{` the extractor tries before giving up: the JSON sits at or near the start. */
const MAX_OBJECT_STARTS = 20;

/**
 * The first complete JSON object in `text` (brace matching that skips strings and escapes),
 * parsed; undefined when none parses. Text around it (the tellows trailer) is ignored.
 */
export function extractFirstJsonObject(text: string): unknown {
  let from = 0;
  for (let attempt = 0; attempt < MAX_OBJECT_STARTS; attempt += 1) {
    const start = text.indexOf('{', from);
    if (start < 0) return undefined;
    const end = findObjectEnd(text, start);
    if (end > start) {
      try {
        return JSON.parse(text.slice(start, end + 1)) as unknown;
      } catch {
        // Braces balanced but not JSON (e.g. a `{` in the trailer): try the next start.
      }
    }
    from = start + 1;
  }
  return undefined;
}

function findObjectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === '{') depth += 1;
    else if (character === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A scalar as text: tellows sends strings, but a number would do as well. */
function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/**
 * `{"caller": [...]}`, `{"caller": {...}}`, `{"caller": "x"}` or nothing, as a list. A bare
 * string becomes `{name: string}` so that callers read one shape.
 */
export function collapseList(container: unknown, key: string): JsonObject[] {
  if (!isObject(container)) return [];
  const value = container[key];
  const items = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return items.flatMap((item): JsonObject[] => {
    if (isObject(item)) return [item];
    if (typeof item === 'string' && item.trim() !== '') return [{ name: item }];
    return [];
  });
}

function parseScore(value: unknown): number | null {
  const match = /^\s*(\d{1,2})(?:[.,]0+)?\s*$/.exec(scalar(value));
  if (!match) return null;
  const score = Number(match[1]);
  return score >= 1 && score <= 9 ? score : null;
}

function mapComment(comment: JsonObject, mainCallerType: string): PrimaryComment | undefined {
  // Users' texts may carry entities or markup: read them as the pages are read.
  const text = plainText(scalar(comment.text));
  const subject = plainText(scalar(comment.subject));
  const combined =
    subject !== '' && text !== '' && subject !== text ? cleanText(`${subject} – ${text}`) : text || subject;
  if (combined === '') return undefined;
  return {
    author: plainText(scalar(comment.userName)),
    text: combined,
    date: parseDate(scalar(comment.created)),
    callerType: plainText(scalar(comment.callerType)) || mainCallerType,
  };
}

/** `callerTypes.caller` most frequent first (tellows' order is not known to be sorted); ties keep its order. */
function sortedCallerTypes(tellows: JsonObject): string[] {
  return collapseList(tellows.callerTypes, 'caller')
    .map((caller) => ({ name: plainText(scalar(caller.name)), count: parseCount(scalar(caller.count)) ?? 0 }))
    .filter((caller) => caller.name !== '')
    .sort((left, right) => right.count - left.count)
    .map((caller) => caller.name);
}

/**
 * Unknown numbers: tellows answers 200 with a neutral score 5, no comment and no search.
 * We call that `not_found`; a number searched but never rated is `ok` with a null score,
 * because its searches count is real information.
 */
/** Tags in the answer, counted up to the bound: markup is read field by field, so the bound is on the whole body. */
function tagsOverBound(body: string): boolean {
  let tags = 0;
  for (let index = body.indexOf('<'); index >= 0; index = body.indexOf('<', index + 1)) {
    tags += 1;
    if (tags > MAX_PAGE_NODES) return true;
  }
  return false;
}

export function parseTellowsApi(body: string): TellowsApiParse {
  // The same parse-work bound as a page: a body of tens of thousands of tags in its fields
  // would cost each field a full HTML parse. A real answer carries a handful.
  if (tagsOverBound(body)) {
    return {
      outcome: failed('invalid_json'),
      markers: [{ marker: WITHIN_PARSE_BOUND_MARKER, found: false }],
      mainCallerType: '',
    };
  }
  const invalidKey = INVALID_KEY_TEXT.test(body);
  const root = extractFirstJsonObject(body);
  const tellows = isObject(root) && isObject(root.tellows) ? root.tellows : undefined;
  const fields: JsonObject = tellows ?? {};
  const rawScore = parseScore(fields.score);
  const commentsReading = readCount(scalar(fields.comments));
  const searchesReading = readCount(scalar(fields.searches));
  const commentsCount = commentsReading.kind === 'value' ? commentsReading.value : null;
  const searchesField = searchesReading.kind === 'value' ? searchesReading.value : null;
  const callerTypes = sortedCallerTypes(fields);
  const rawComments = collapseList(fields.commentList, 'comment');
  const markers: MarkerReport[] = [
    { marker: 'no invalid-key text', found: !invalidKey },
    { marker: 'json: tellows object', found: tellows !== undefined },
    { marker: 'json: tellows.score (1-9)', found: rawScore !== null },
    { marker: 'json: tellows.comments', found: commentsCount !== null },
    { marker: 'json: tellows.searches', found: searchesField !== null, required: false },
    { marker: 'json: tellows.callerTypes.caller', found: callerTypes.length > 0, required: false },
    { marker: 'json: tellows.commentList.comment', found: rawComments.length > 0, required: false },
    {
      marker: 'json: comment.created is a readable date',
      found: rawComments.some((comment) => parseDate(scalar(comment.created)) !== ''),
      required: false,
    },
  ];
  const mainCallerType = callerTypes[0] ?? '';
  const result = (outcome: TellowsApiParse['outcome']): TellowsApiParse => ({ outcome, markers, mainCallerType });
  if (invalidKey) return result(failed('auth'));
  // A count out of its range ("-7", "1e3", 20 digits) is not the JSON expected, as a score of 99 is not.
  if (tellows === undefined || rawScore === null || commentsCount === null || searchesReading.kind === 'invalid')
    return result(failed('invalid_json'));
  const searches = searchesField ?? 0;
  if (commentsCount === 0 && searches === 0) return result(notFound());

  const commentList: PrimaryComment[] = [];
  for (const comment of rawComments) {
    if (commentList.length >= MAX_COMMENTS) break;
    const mapped = mapComment(comment, mainCallerType);
    if (mapped) commentList.push(mapped);
  }
  // A neutral 5 with no rating behind it is no data, not a verdict.
  return result(ok({ score: commentsCount === 0 ? null : rawScore, searches, commentsCount, commentList }));
}

/** The markers of an API answer, for the live canary. */
export function markersOfTellowsApi(body: string): MarkerReport[] {
  return parseTellowsApi(body).markers;
}
