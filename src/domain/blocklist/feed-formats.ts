// The feed's cards written out: vCard 3.0 (RFC 2426) for CardDAV and the .vcf file, and the CSV
// that SpamBlocker's ParseCSV workflow action imports (columns `pattern,description,isBlacklist`,
// each pattern a regular expression matched against the number with `+` and leading zeros
// removed). Pure.
import { telOf, type FeedCard, type FeedEntry } from './feed-content.js';

const CRLF = '\r\n';
const MAX_LINE_OCTETS = 75;

/** A text value escaped as RFC 2426 §4 says: backslash, comma, semicolon, line breaks. */
export function escapeVcardText(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/,/g, '\\,')
    .replace(/;/g, '\\;')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/** Folds a content line at 75 octets (RFC 2426 §2.6), never inside a UTF-8 sequence. */
export function foldLine(line: string): string {
  if (Buffer.byteLength(line, 'utf8') <= MAX_LINE_OCTETS) return line;
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const character of line) {
    const size = Buffer.byteLength(character, 'utf8');
    // Continuation lines start with a space, which counts.
    const limit = parts.length === 0 ? MAX_LINE_OCTETS : MAX_LINE_OCTETS - 1;
    if (octets + size > limit) {
      parts.push(current);
      current = '';
      octets = 0;
    }
    current += character;
    octets += size;
  }
  parts.push(current);
  return parts.join(`${CRLF} `);
}

/** One card as a vCard 3.0 object, CRLF line endings. */
export function renderVcard(card: FeedCard, productId: string): string {
  const name = escapeVcardText(card.reason);
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `PRODID:${productId}`,
    `UID:${card.uid}`,
    `FN:${name}`,
    `N:${name};;;;`,
    'CATEGORIES:SPAM',
    ...card.entries.map((entry) => `TEL;TYPE=VOICE:${telOf(entry)}`),
    'END:VCARD',
  ];
  return lines.map(foldLine).join(CRLF) + CRLF;
}

/** The CSV row's pattern: SpamBlocker compares against the number without `+` and leading zeros. */
export function spamBlockerPattern(entry: FeedEntry): string {
  const digits = entry.digits.replace(/^0+/, '');
  return entry.wildcard ? `${digits}.*` : digits;
}

// SpamBlocker's CSV reader splits on commas and does not unquote: a description keeps no comma,
// quote or line break.
function csvText(text: string): string {
  return text
    .replace(/[,"\r\n]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export const CSV_HEADER = 'pattern,description,isBlacklist';

export function renderCsv(cards: readonly FeedCard[]): string {
  return `${CSV_HEADER}\n${cards.map(renderCsvRows).join('')}`;
}

/** One card's CSV rows, each ending with a line break (renderCsv is the header then these). */
export function renderCsvRows(card: FeedCard): string {
  const description = csvText(card.reason);
  let rows = '';
  for (const entry of card.entries) rows += `${spamBlockerPattern(entry)},${description},true\n`;
  return rows;
}
