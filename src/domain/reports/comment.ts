// A reporter's comment as it is kept (docs/reports.md). Minimal version written by the report
// routes' branch (issue 47, part C) so that it builds alone; the evidence part's own file replaces
// it at the merge. Pure.
import { DISPLAY_UNSAFE } from '../display-line.js';

/** The longest comment kept, in Unicode characters. */
export const COMMENT_MAX_LENGTH = 200;

// Every character refused on `/cid` (display-line.ts): controls, invisibles and dialplan syntax.
const REFUSED = new RegExp(DISPLAY_UNSAFE.source, 'gu');

/** The comment with white space folded, the refused characters removed, cut to COMMENT_MAX_LENGTH; undefined when nothing is left. */
export function cleanComment(text: string): string | undefined {
  const folded = text
    .replace(/\p{White_Space}+/gu, ' ')
    .replace(REFUSED, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  const cut = [...folded].slice(0, COMMENT_MAX_LENGTH).join('').trimEnd();
  return cut === '' ? undefined : cut;
}
