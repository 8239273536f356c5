// The one sanitiser for text a phone system shows or a dialplan handles: the `/cid` line and the
// upstream category inside it. Pure. Which character is removed for which product is listed in
// docs/integrations/README.md ("What the line never holds"); the bounds in docs/api.md.

/**
 * Removed outright (after white space was folded, below):
 * - what no display shows and a hostile upstream can smuggle: control and format characters
 *   (C0, C1, bidi overrides, zero-width characters), lone surrogates (which UTF-8 would turn
 *   into U+FFFD), U+FFFD itself, private-use and unassigned code points, noncharacters
 *   (U+FDD0-FDEF and every xFFFE/xFFFF), and the default-ignorable invisible fillers (U+034F,
 *   U+115F, U+1160, U+3164, U+FFA0, variation selectors, tags...) plus the braille blank U+2800;
 * - what a dialplan, an AGI command or a SIP display name can read as syntax: `"` `'` `` ` ``
 *   (quoting), `;` `|` `,` (argument separators and comments), `\` (escapes), `$` `{` `}` `[` `]`
 *   (variables, expressions, FreeSWITCH per-leg variable blocks), `<` `>` (SIP display-name
 *   delimiters, HTML tags for Superfecta), `%` (FreeSWITCH prints a name looked up by
 *   mod_cidlookup as a printf format string).
 */
const REMOVED =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Noncharacter_Code_Point}\p{Default_Ignorable_Code_Point}\u2800\uFFFD"'`;|,\\${}[\]<>%]/gu;

/** The same characters, for text the operator writes to be shown (a list rule's label): refused there rather than removed, so it shows as written. */
export const DISPLAY_UNSAFE = new RegExp(REMOVED.source, 'u');

/** What DISPLAY_UNSAFE holds besides control and invisible characters, as a person reads it. */
export const DISPLAY_UNSAFE_SYNTAX = '" \' ` ; | , \\ $ { } [ ] < > %';

/** Line breaks, tabs, no-break and other spaces: each run becomes one plain space first, so the words either side stay apart. */
const WHITE_SPACE = /\p{White_Space}+/gu;

/**
 * Superfecta's html2text() runs PHP's wordwrap() on the name, which breaks a line longer than 75
 * bytes at a space; the break ends the caller name early (FreePBX/superfecta
 * includes/superfecta_base.php). So the line stays within 75 bytes unless the operator asked
 * for more characters than that.
 */
export const DISPLAY_LINE_MIN_BYTE_BOUND = 75;

/** The most UTF-8 bytes a line cut to `maxLength` grapheme clusters may take: max(75, maxLength). */
export function displayLineMaxBytes(maxLength: number): number {
  return Math.max(DISPLAY_LINE_MIN_BYTE_BOUND, maxLength);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function utf8Length(text: string): number {
  let bytes = 0;
  for (const character of text) {
    const codePoint = character.codePointAt(0) ?? 0;
    bytes += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * One line a dialplan can put in a display name as it is: the characters above removed, white
 * space folded, NFC, cut to `maxLength` grapheme clusters (what a phone shows as one character:
 * a flag, a letter with its accents) and to `displayLineMaxBytes(maxLength)` UTF-8 bytes, never
 * inside a cluster, with no space at either end.
 */
export function safeDisplayLine(text: string, maxLength: number): string {
  const clean = text
    .replace(/\p{Cs}/gu, '')
    .replace(WHITE_SPACE, ' ')
    .replace(REMOVED, '')
    // After the removal, which can bring a letter and its accent together.
    .normalize('NFC')
    .replace(/ {2,}/g, ' ')
    .trim();
  const maxBytes = displayLineMaxBytes(maxLength);
  let line = '';
  let count = 0;
  let bytes = 0;
  for (const { segment } of graphemes.segment(clean)) {
    const size = utf8Length(segment);
    if (count === maxLength || bytes + size > maxBytes) break;
    line += segment;
    count += 1;
    bytes += size;
  }
  return line.trimEnd();
}
