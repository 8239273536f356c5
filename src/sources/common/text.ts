// Turning scraped upstream text into safe plain values. Everything an upstream sends is
// untrusted: tags, control and bidi characters go, whitespace collapses, text is NFC and capped.

export const MAX_TEXT_LENGTH = 1000;
export const MAX_COMMENTS = 50;
/**
 * The most list items (comment blocks) a parser examines on one page. Items that turn out to
 * be notices or empty are skipped, so without this a page of thousands of hostile items would
 * have each of them searched; real pages list far fewer than this.
 */
export const MAX_LIST_ITEMS = 4 * MAX_COMMENTS;

// C0/C1 controls, zero-width and bidi formatting characters (Trojan-source style tricks).
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]/g;

/**
 * Safe plain text from text already decoded by the HTML parser (or a JSON string): unsafe
 * characters removed, whitespace collapsed, NFC, capped at `maxLength` characters (code
 * points, never splitting a pair). Markup in an API field goes through `plainText` (html.ts).
 */
export function cleanText(input: string, maxLength = MAX_TEXT_LENGTH): string {
  // Angle brackets in decoded text stay text for us (we output JSON, clients escape): only the
  // unsafe characters go.
  let text = input
    .replace(UNSAFE_CHARACTERS, ' ')
    .replace(/[\s\u00a0\u202f]+/g, ' ')
    .trim()
    .normalize('NFC');
  const codePoints = Array.from(text);
  if (codePoints.length > maxLength) text = codePoints.slice(0, maxLength).join('').trimEnd();
  return text;
}

/** The most digits a count may have: any more and it is no longer a safe integer, nor a count an upstream shows. */
const MAX_COUNT_DIGITS = 15;

/**
 * A count read from upstream text: its value, no count at all, or a number that is there but is
 * not a count (signed, decimal, exponent, over 15 digits). An invalid count is a parse error
 * for the caller, never a smaller number: "-7" is not 7, "1e3" is not 1.
 */
export type CountReading = { kind: 'value'; value: number } | { kind: 'absent' } | { kind: 'invalid' };

const ABSENT: CountReading = { kind: 'absent' };
const INVALID: CountReading = { kind: 'invalid' };

/**
 * A count as written by upstreams: "2 535×", "1.234", "1,234", "12x", "1 234" (U+00A0,
 * U+202F), the first number in the text.
 */
export function readCount(input: string | null | undefined): CountReading {
  if (input === null || input === undefined) return ABSENT;
  const text = input.replace(/[×xX]\s*$/, '').trim();
  const match = /\d{1,3}(?:[ \u00a0\u202f.,'’]\d{3})+(?!\d)|\d+/.exec(text);
  if (!match) return ABSENT;
  const before = text.slice(0, match.index);
  const after = text.slice(match.index + match[0].length);
  // A sign right before it, or a decimal part or exponent right after it.
  if (/[-+\u2212]$/.test(before) || /^(?:[.,]\d|[eE][-+]?\d)/.test(after)) return INVALID;
  const digits = match[0].replace(/[^\d]/g, '');
  if (digits.length > MAX_COUNT_DIGITS) return INVALID;
  return { kind: 'value', value: Number(digits) };
}

/** `readCount`'s value, or null when there is none or it is invalid: only where a bad count is harmless (a tie-break order). */
export function parseCount(input: string | null | undefined): number | null {
  const reading = readCount(input);
  return reading.kind === 'value' ? reading.value : null;
}

/**
 * A percentage as written by upstreams: "84", "84%", "84 %", "84,5 %" → 84 (rounded); no
 * number → absent; a number outside 0–100 (or signed, or with an exponent) → invalid. The
 * whole number is read: "1000" is not "100".
 */
export function readPercent(input: string | null | undefined): CountReading {
  if (input === null || input === undefined) return ABSENT;
  const match = /\d+(?:[.,]\d+)?/.exec(input);
  if (!match) return ABSENT;
  const before = input.slice(0, match.index);
  const after = input.slice(match.index + match[0].length);
  if (/[-+\u2212]$/.test(before) || /^[eE][-+]?\d/.test(after)) return INVALID;
  const value = Math.round(Number(match[0].replace(',', '.')));
  return Number.isFinite(value) && value >= 0 && value <= 100 ? { kind: 'value', value } : INVALID;
}

const FRENCH_MONTHS: Record<string, number> = {
  janvier: 1,
  janv: 1,
  fevrier: 2,
  fevr: 2,
  fev: 2,
  mars: 3,
  avril: 4,
  avr: 4,
  mai: 5,
  juin: 6,
  juillet: 7,
  juil: 7,
  aout: 8,
  septembre: 9,
  sept: 9,
  sep: 9,
  octobre: 10,
  oct: 10,
  novembre: 11,
  nov: 11,
  decembre: 12,
  dec: 12,
};

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

function formatDate(day: number, month: number, year: number): string {
  if (month < 1 || month > 12 || day < 1) return '';
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth || year < 1990 || year > 2100) return '';
  return `${pad(day)}/${pad(month)}/${year}`;
}

function expandYear(year: number, digits: number): number {
  return digits === 2 ? 2000 + year : year;
}

/**
 * Any date form the upstreams use, as DD/MM/YYYY; "" when the text holds no valid date.
 * Accepted, each with or without a time: YYYY-MM-DD, YYYY.MM.DD, YYYY/MM/DD (and ISO 8601),
 * DD/MM/YYYY, DD.MM.YY, DD.MM.YYYY, D. M. YYYY, "12 mars 2024", "1er mars 2024". A number never
 * starts mid-digits, so a year-first date is never read day-first ("2025.10.26" is not
 * "25.10.26"), and a date-like text that fits no form, or names no real day, gives "".
 */
export function parseDate(input: string | null | undefined): string {
  if (input === null || input === undefined) return '';
  const text = input.replace(/[\u00a0\u202f]/g, ' ').trim();
  let match = /(?<!\d)(\d{4})\s*([./-])\s*(\d{1,2})\s*\2\s*(\d{1,2})(?!\d)/.exec(text);
  if (match) return formatDate(Number(match[4]), Number(match[3]), Number(match[1]));
  match = /(?<!\d)(\d{1,2})\s*([./-])\s*(\d{1,2})\s*\2\s*(\d{4}|\d{2})(?!\d)/.exec(text);
  if (match) return formatDate(Number(match[1]), Number(match[3]), expandYear(Number(match[4]), match[4]?.length ?? 4));
  const folded = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  match = /(?<!\d)(\d{1,2})(?:er)?\s+([a-z]+)\.?\s+(\d{4})(?!\d)/.exec(folded);
  if (match) {
    const name = match[2] ?? '';
    const month = Object.hasOwn(FRENCH_MONTHS, name) ? FRENCH_MONTHS[name] : undefined;
    if (month !== undefined) return formatDate(Number(match[1]), month, Number(match[3]));
  }
  return '';
}

/** Sorts DD/MM/YYYY strings; "" sorts first. */
export function dateSortKey(date: string): string {
  const match = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(date);
  return match ? `${match[3]}${match[2]}${match[1]}` : '';
}
