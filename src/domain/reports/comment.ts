// A reporter's comment as it is kept (docs/reports.md): the operator reviews it and the feed may
// show it, so it holds nothing a display, a dialplan or a log could read as syntax. Pure.
import { DISPLAY_UNSAFE } from '../display-line.js';

/** The longest comment kept, in code points (Unicode characters). */
export const COMMENT_MAX_LENGTH = 200;

// The characters refused on `/cid` (display-line.ts: controls, invisibles and dialplan syntax), every one.
const REFUSED = new RegExp(DISPLAY_UNSAFE.source, 'gu');
const WHITE_SPACE = /\p{White_Space}+/gu;

/**
 * The comment cleaned: white space folded into single spaces first (a newline keeps words
 * apart), then the characters refused on `/cid` removed, then cut to COMMENT_MAX_LENGTH code
 * points (never half a surrogate pair). Undefined when nothing is left, or when it is no string.
 */
export function cleanComment(comment: unknown): string | undefined {
  if (typeof comment !== 'string') return undefined;
  const clean = comment.replace(WHITE_SPACE, ' ').replace(REFUSED, '').replace(/ {2,}/g, ' ').trim();
  // Spread by code point, so a surrogate pair is one element, never split. 200 code points take
  // at most 400 UTF-16 units: a half pair left at that first cut lies past the kept part.
  const cut = [...clean.slice(0, 2 * COMMENT_MAX_LENGTH)].slice(0, COMMENT_MAX_LENGTH).join('').trimEnd();
  return cut === '' ? undefined : cut;
}
