// The lists as CSV: the import and export format (`rule,list,label,note,expiresAt,labelPublic`) and the
// file the embedded store keeps (the same columns and `createdAt`). One rule per line; fields
// holding a comma or a quote are double-quoted with `""` for a quote (RFC 4180). No field may
// hold a line break (labels and notes refuse control characters), so a line is a record, and an
// error names its line. Blank lines and lines starting with `#` are comments, so an operator can
// annotate a file kept under version control. The lines are framed here (csvLines) and their
// fields split by csv-parse (docs/adr/0011). Pure; the chunked reading is in infra/lists.
//
// - A line is at most MAX_LINE_CHARS characters: a longer one is refused, naming it, before any
//   field of it is split (a 20 MB line would hold the event loop for seconds).
// - Labels and notes that a spreadsheet would run as a formula (starting with = + - @, a tab or
//   a carriage return) are written with a single quote before them (OWASP's CSV injection
//   advice), and read back without it: `'=SUM(A1)` in a file is the label `=SUM(A1)`. A value that
//   is already a quote followed by one of those gets one more quote, so every value reads back
//   as it was written.
import { parse } from 'csv-parse/sync';
import type { ListRule } from '../ports/operator-lists.js';
import { checkRule, checkRuleFields, type RuleContext, type RuleProblem } from './rules.js';
import { isRuleSpelling } from './rule-key.js';

// `labelPublic` (`true`, or empty for false) came last, after the rest: files and imports
// written before it, without the column, read as before (every label private).
export const EXPORT_COLUMNS = ['rule', 'list', 'label', 'note', 'expiresAt', 'labelPublic'] as const;
export const FILE_COLUMNS = ['rule', 'list', 'label', 'note', 'expiresAt', 'createdAt', 'labelPublic'] as const;
type Column = (typeof FILE_COLUMNS)[number];

/** The longest line read, in characters (UTF-16 code units): a rule's fields fit in far fewer (a note is at most 500 characters, a label 60). */
export const MAX_LINE_CHARS = 4096;

/** What a spreadsheet reads as the start of a formula (OWASP, CSV injection). */
const FORMULA_START = /^'*[=+\-@\t\r]/;

/** A label or note as written to CSV: a quote before what a spreadsheet would run. */
export function escapeFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** The inverse of escapeFormula. */
export function unescapeFormula(value: string): string {
  return value.startsWith("'") && FORMULA_START.test(value) ? value.slice(1) : value;
}

const ESCAPED_COLUMNS = new Set<string>(['label', 'note']);

export class ListCsvError extends Error {
  override name = 'ListCsvError';
  constructor(
    /** 1-based line number in the text. */
    readonly line: number,
    readonly reason: string,
    readonly field?: RuleProblem['field'] | 'header',
    /** The rule as written on the refused line, when the rule itself was refused (a log hashes it: it may be a number). */
    readonly rule?: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** Lines given to one call of csv-parse: a call has a fixed cost (tens of lines' worth), so lines go in batches. */
const LINES_PER_PARSE = 256;
/** RFC 4180 as csv-parse reads it; a line is a record (csvLines frames them), the field count is checked here. */
const PARSE_OPTIONS = { record_delimiter: '\n', relax_column_count: true } as const;

/** csv-parse's refusals (its error codes), in the words an operator reads. */
const QUOTE_REASONS: Readonly<Record<string, string>> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed',
  CSV_INVALID_CLOSING_QUOTE: 'a closing quote must end its field',
  INVALID_OPENING_QUOTE: 'a quote may only open a field',
};

function refusalOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' ? QUOTE_REASONS[code] : undefined) ?? (error as Error).message;
}

/** The fields of one CSV line (csv-parse); throws a plain Error saying what is wrong. */
export function splitCsvLine(line: string): string[] {
  let records: string[][];
  try {
    records = parse(line, PARSE_OPTIONS);
  } catch (error) {
    throw new Error(refusalOf(error));
  }
  const [fields] = records;
  if (fields === undefined || records.length !== 1) throw new Error('a line is one record');
  return fields;
}

/** One record of a CSV text: its fields and its 1-based line number. */
export interface CsvRecord {
  fields: string[];
  number: number;
}

/**
 * The records of a CSV text, one per line (csvLines: comments, blank lines and overlong lines),
 * split by csv-parse a batch of lines at a time. A line it refuses throws ListCsvError naming
 * the line and why (the first record is the header: `the header is not CSV (…)`), once every
 * record before it has been given, so the first bad line of a text is the one named.
 */
export function* csvRecords(text: string): Generator<CsvRecord> {
  let given = 0;
  let batch: Array<{ line: string; number: number }> = [];
  function* parseBatch(): Generator<CsvRecord> {
    let records: string[][] | undefined;
    try {
      records = parse(batch.map((item) => item.line).join('\n'), PARSE_OPTIONS);
    } catch {
      records = undefined;
    }
    if (records !== undefined && records.length === batch.length) {
      for (const [at, fields] of records.entries()) {
        given += 1;
        yield { fields, number: batch[at]?.number ?? 0 };
      }
      return;
    }
    // A line csv-parse refuses, or a quote left open running into the next line: each line alone names it.
    for (const { line, number } of batch) {
      let fields: string[];
      try {
        fields = splitCsvLine(line);
      } catch (error) {
        const reason = (error as Error).message;
        throw given === 0
          ? new ListCsvError(number, `the header is not CSV (${reason})`, 'header')
          : new ListCsvError(number, `not a CSV line: ${reason}`);
      }
      given += 1;
      yield { fields, number };
    }
  }
  for (const item of csvLines(text)) {
    batch.push(item);
    if (batch.length === LINES_PER_PARSE) {
      yield* parseBatch();
      batch = [];
    }
  }
  if (batch.length > 0) yield* parseBatch();
}

function csvField(value: string | undefined): string {
  if (value === undefined) return '';
  return /[",]/.test(value) || value !== value.trim() ? `"${value.replace(/"/g, '""')}"` : value;
}

export function formatRuleLine(rule: ListRule, columns: readonly Column[]): string {
  return columns
    .map((column) => {
      if (column === 'labelPublic') return csvField(rule.labelPublic === true ? 'true' : undefined);
      const value = rule[column];
      return csvField(value !== undefined && ESCAPED_COLUMNS.has(column) ? escapeFormula(value) : value);
    })
    .join(',');
}

/** CSV text of `rules` with a header of `columns`, ending in a newline. */
export function formatListCsv(rules: Iterable<ListRule>, columns: readonly Column[] = EXPORT_COLUMNS): string {
  const lines = [columns.join(',')];
  for (const rule of rules) lines.push(formatRuleLine(rule, columns));
  return `${lines.join('\n')}\n`;
}

/** The column order a header's fields give (white space around the line ignored); throws ListCsvError on line `lineNumber`. */
export function readHeader(record: readonly string[], lineNumber: number): Column[] {
  const fields = record
    .map((name, at) => (at === 0 ? name.trimStart() : name))
    .map((name, at) => (at === record.length - 1 ? name.trimEnd() : name));
  const known = new Set<string>(FILE_COLUMNS);
  const seen = new Set<string>();
  for (const name of fields) {
    if (!known.has(name))
      throw new ListCsvError(
        lineNumber,
        `unknown column ${JSON.stringify(name)}: the header is ${EXPORT_COLUMNS.join(',')} (and createdAt, optional)`,
        'header',
      );
    if (seen.has(name)) throw new ListCsvError(lineNumber, `column ${name} appears twice`, 'header');
    seen.add(name);
  }
  if (!seen.has('rule') || !seen.has('list'))
    throw new ListCsvError(
      lineNumber,
      `the header must name at least rule and list (${EXPORT_COLUMNS.join(',')})`,
      'header',
    );
  return fields as Column[];
}

export interface RowOptions {
  context: RuleContext;
  /** Refuses an `expiresAt` in the past (an import); absent, an expired rule is read and does not apply (the store's own file). */
  nowMs?: number;
  /** Rules already in normal form (`+digits[*]`) are taken as written, without the parser (the store's own file). */
  trustNormalForm?: boolean;
}

/** One data record as a rule; throws ListCsvError naming the line and the field. */
export function readRuleRecord(
  fields: readonly string[],
  lineNumber: number,
  columns: readonly Column[],
  options: RowOptions,
): ListRule {
  if (fields.length !== columns.length)
    throw new ListCsvError(lineNumber, `${fields.length} fields where the header has ${columns.length}`);
  const row: Partial<Record<Column, string>> = {};
  columns.forEach((column, at) => {
    const value = fields[at];
    row[column] = value !== undefined && ESCAPED_COLUMNS.has(column) ? unescapeFormula(value) : value;
  });
  const rule = (row.rule ?? '').trim();
  if (options.trustNormalForm === true && isRuleSpelling(rule)) {
    // The store's own file: the rule is already E.164; every other field is checked all the same.
    const checked = checkRuleFields({ ...row, rule, list: row.list });
    if (!checked.ok)
      throw new ListCsvError(
        lineNumber,
        `${checked.problem.field}: ${checked.problem.reason}`,
        checked.problem.field,
        rule,
      );
    return checked.value;
  }
  const checked = checkRule(
    { ...row, rule, list: row.list },
    options.context,
    options.nowMs === undefined ? {} : { nowMs: options.nowMs },
  );
  if (!checked.ok)
    throw new ListCsvError(
      lineNumber,
      `${checked.problem.field}: ${checked.problem.reason}`,
      checked.problem.field,
      rule,
    );
  return checked.value;
}

/**
 * The lines of a CSV text, with their 1-based numbers, comments and blank lines left out. A line
 * over MAX_LINE_CHARS is refused (ListCsvError) before it is copied: finding its end is one
 * `indexOf`, so a 20 MB line costs one linear scan.
 */
export function* csvLines(text: string): Generator<{ line: string; number: number }> {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let number = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    number += 1;
    const length = end > start && text.charCodeAt(end - 1) === 13 ? end - start - 1 : end - start;
    if (length > MAX_LINE_CHARS)
      throw new ListCsvError(number, `the line is ${length} characters long; a line is at most ${MAX_LINE_CHARS}`);
    let line = text.slice(start, end);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    start = end + 1;
    if (line.trim() === '' || line.startsWith('#')) continue;
    yield { line, number };
  }
}

/** A whole CSV text as rules, all or nothing (synchronous: small texts and tests; infra/lists reads large ones in slices). */
export function readListCsv(text: string, options: RowOptions): ListRule[] {
  const rules: ListRule[] = [];
  let columns: Column[] | undefined;
  for (const { fields, number } of csvRecords(text)) {
    if (columns === undefined) {
      columns = readHeader(fields, number);
      continue;
    }
    rules.push(readRuleRecord(fields, number, columns, options));
  }
  if (columns === undefined)
    throw new ListCsvError(1, `no header: the first line is ${EXPORT_COLUMNS.join(',')}`, 'header');
  return rules;
}
