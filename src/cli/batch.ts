// `phone-rep batch`: numbers one per line in, one row per distinct number out (CSV or NDJSON),
// in the order they first appear. Lines are de-duplicated by normalised number before any
// request; an invalid line gets its row and the run goes on. Requests run N at a time, paced by
// a sliding-window budget so a long list never exhausts the upstreams' per-minute budgets.
import { SOURCE_SLOTS, type SourceSlot } from '../domain/report.js';
import { figureValue, SLOT_DISPLAY, type FigureDisplay } from '../domain/slot-display.js';
import { readProblemTitle, readReportBody, type ApiAnswer } from './api-answer.js';
import { hintsOf, readHints, type NumberFacts } from './facts.js';
import { sanitizeForTerminal, verdictOf } from './format-report.js';
import { checkReportAnswer } from './answer-check.js';
import { terminalSafeJson } from './sanitize.js';

export interface BatchInputLine {
  /** 1-based line number in the input. */
  line: number;
  raw: string;
}

export interface BatchItem extends BatchInputLine {
  /** The de-duplication key: the normalised number, or the trimmed text when it does not parse. */
  key: string;
}

/** Non-empty lines, without `#` comments; a BOM and surrounding spaces are ignored. */
export function readBatchLines(text: string): BatchInputLine[] {
  const lines: BatchInputLine[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((content, index) => {
      const raw = content.trim();
      if (raw === '' || raw.startsWith('#')) return;
      lines.push({ line: index + 1, raw });
    });
  return lines;
}

/** Keeps the first line of each normalised number. */
export function deduplicate(
  lines: readonly BatchInputLine[],
  normalise: (raw: string) => string | undefined,
): { items: BatchItem[]; duplicates: number } {
  const seen = new Set<string>();
  const items: BatchItem[] = [];
  for (const line of lines) {
    const key = normalise(line.raw) ?? `raw:${line.raw}`;
    if (seen.has(key)) continue;
    seen.add(key);
    items.push({ ...line, key });
  }
  return { items, duplicates: lines.length - items.length };
}

export type RowStatus = 'found' | 'invalid' | 'failed' | 'error';

/** The columns every row has, before the slots' columns. */
interface BatchLeadingColumns {
  line: number;
  input: string;
  number: string | null;
  status: RowStatus;
  national: string | null;
  international: string | null;
  line_type: string | null;
  range: string | null;
  original_carrier: string | null;
  region: string | null;
  is_npv: boolean | null;
  /** `meta.hints`: an array in NDJSON, space-separated in CSV. */
  hints: string[] | null;
  verdict: string | null;
  score: number | null;
  risk: string | null;
  score_source: string | null;
  error: string | null;
}

/** A slot's columns: `<slot>_status`, then one per figure of the slot display table that names a column. */
export type SlotColumn = `${SourceSlot}_${string}`;

export type BatchRow = BatchLeadingColumns & { [column: SlotColumn]: string | number | null };

const LEADING_COLUMNS = [
  'line',
  'input',
  'number',
  'status',
  'national',
  'international',
  'line_type',
  'range',
  'original_carrier',
  'region',
  'is_npv',
  'hints',
  'verdict',
  'score',
  'risk',
  'score_source',
] as const satisfies ReadonlyArray<keyof BatchLeadingColumns>;

/** Each slot's columns, in slot order, from the slot display table. */
export const SLOT_COLUMNS: ReadonlyArray<{ slot: SourceSlot; column: SlotColumn; figure?: FigureDisplay }> =
  SOURCE_SLOTS.flatMap((slot) => [
    { slot, column: `${slot}_status` as const },
    ...(SLOT_DISPLAY[slot].figures as readonly FigureDisplay[]).flatMap((figure) =>
      figure.column === undefined ? [] : [{ slot, column: `${slot}_${figure.column}` as const, figure }],
    ),
  ]);

export const BATCH_COLUMNS: ReadonlyArray<keyof BatchLeadingColumns | SlotColumn> = [
  ...LEADING_COLUMNS,
  ...SLOT_COLUMNS.map(({ column }) => column),
  'error',
];

function emptyRow(item: BatchInputLine, status: RowStatus, error: string | null): BatchRow {
  const row: BatchRow = {
    line: item.line,
    input: item.raw,
    number: null,
    status,
    national: null,
    international: null,
    line_type: null,
    range: null,
    original_carrier: null,
    region: null,
    is_npv: null,
    hints: null,
    verdict: null,
    score: null,
    risk: null,
    score_source: null,
    error,
  };
  for (const { column } of SLOT_COLUMNS) row[column] = null;
  return row;
}

/** The facts columns, which need no source: filled for found rows and for rows whose sources all failed. */
function withFacts(row: BatchRow, facts: NumberFacts): BatchRow {
  const info = facts.phoneInfo;
  return {
    ...row,
    number: facts.number,
    national: info.national,
    international: info.e164,
    line_type: info.type,
    range: info.rangeLabel,
    original_carrier: info.originalCarrier,
    region: info.region,
    is_npv: info.isNPV,
    hints: facts.hints,
  };
}

/** `ok`, `not_found`, or `error:timeout` / `blocked:http_429`. */
function slotStatus(meta: { status: string; reason?: string }): string {
  return meta.reason === undefined || meta.status === 'ok' ? meta.status : `${meta.status}:${meta.reason}`;
}

/** One row from one API answer, checked against the published schema first: an answer that does not match is an `error` row saying so. */
export function toBatchRow(item: BatchInputLine, answer: ApiAnswer): BatchRow {
  const checked = checkReportAnswer(answer.status, answer.body);
  if (!checked.ok) return emptyRow(item, 'error', checked.problem);
  if (answer.status === 400) return emptyRow(item, 'invalid', 'Invalid phone number format');
  if (answer.status === 502) {
    const row =
      answer.facts === undefined
        ? emptyRow(item, 'failed', 'All data sources failed')
        : withFacts(emptyRow(item, 'failed', 'All data sources failed'), answer.facts);
    try {
      const parsed = JSON.parse(answer.body) as { sources?: Partial<Record<SourceSlot, unknown>> };
      const reasons = parsed.sources ?? {};
      const reasonOf = (slot: SourceSlot): string | null => {
        const reason = reasons[slot];
        return typeof reason === 'string' ? `error:${sanitizeForTerminal(reason)}` : null;
      };
      for (const slot of SOURCE_SLOTS) row[`${slot}_status`] = reasonOf(slot);
    } catch {
      // The row already says the lookup failed.
    }
    return row;
  }
  const body = answer.status === 200 ? readReportBody(answer.body) : undefined;
  if (body === undefined) {
    const title = readProblemTitle(answer.body);
    return emptyRow(
      item,
      'error',
      `HTTP ${answer.status}${title === undefined ? '' : ` ${sanitizeForTerminal(title)}`}`,
    );
  }
  const { data, meta } = body;
  const verdict = verdictOf(body);
  const facts: NumberFacts = {
    number: data.number,
    phoneInfo: data.phoneInfo,
    hints: readHints(meta) ?? hintsOf(data.phoneInfo),
  };
  const row: BatchRow = {
    ...withFacts(emptyRow(item, 'found', null), facts),
    verdict: verdict.verdict,
    score: verdict.score,
    risk: verdict.risk,
    score_source: verdict.scoreSource,
  };
  // A slot's figures only when it answered: the empty fields of one that did not (0 comments)
  // must not pass for a clean record.
  for (const { slot, column, figure } of SLOT_COLUMNS) {
    const answered = meta.sources[slot].status === 'ok';
    if (figure === undefined) row[column] = slotStatus(meta.sources[slot]);
    else row[column] = answered ? figureValue(data.sources[slot], figure) : null;
  }
  return row;
}

/**
 * RFC 4180 field: quoted when it holds a comma or a quote. Whatever the value's type, its text
 * has its control characters removed, and a text a spreadsheet would run as a formula (a
 * leading `=`, `+`, `-`, `@`, tab or CR) gets a leading `'`; only a plain signed number such
 * as `+33612345678` or `-7` is left as it is.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const raw = Array.isArray(value)
    ? value.map((member) => (typeof member === 'string' ? member : JSON.stringify(member))).join(' ')
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);
  // The formula test runs on the raw text too: a cell that starts with a tab or CR is guarded before cleaning removes it.
  const formula = /^[=+\-@\t\r]/.test(raw);
  let text = sanitizeForTerminal(raw);
  if ((formula || /^[=+\-@]/.test(text)) && !/^[+-]?\d[\d ]*$/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvHeader(): string {
  return `${BATCH_COLUMNS.join(',')}\n`;
}

export function formatRow(row: BatchRow, format: 'csv' | 'ndjson'): string {
  // Members in column order, as the CSV header lists them.
  if (format === 'ndjson')
    return `${terminalSafeJson(Object.fromEntries(BATCH_COLUMNS.map((column) => [column, row[column]])))}\n`;
  return `${BATCH_COLUMNS.map((column) => csvField(row[column])).join(',')}\n`;
}

/** `[#######-------]  12/40` for a terminal. */
export function renderProgress(done: number, total: number, width = 30): string {
  const ratio = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(done).padStart(String(total).length)}/${total}`;
}

/** At most `max` starts in any `windowMs` span (a sliding log, like the upstream budgets). */
export function createPacer(
  max: number,
  windowMs: number,
  sleep: (ms: number) => Promise<void>,
  now: () => number = Date.now,
): () => Promise<void> {
  const starts: number[] = [];
  let queue: Promise<void> = Promise.resolve();
  return () => {
    const turn = queue.then(async () => {
      for (;;) {
        const t = now();
        while (starts.length > 0 && (starts[0] ?? t) <= t - windowMs) starts.shift();
        if (starts.length < max) {
          starts.push(t);
          return;
        }
        await sleep((starts[0] ?? t) + windowMs - t);
      }
    });
    queue = turn;
    return turn;
  };
}

export interface BatchRunOptions {
  items: readonly BatchItem[];
  concurrency: number;
  lookup: (raw: string) => Promise<ApiAnswer>;
  /** Called before each request; resolves when the request may start. */
  pace?: () => Promise<void>;
  /** Called with each row as soon as it can be written in input order. */
  onRow: (row: BatchRow) => void;
  onProgress?: (done: number, total: number) => void;
}

/** Runs the lookups N at a time and emits rows in input order. */
export async function runBatch(options: BatchRunOptions): Promise<BatchRow[]> {
  const { items } = options;
  const rows: Array<BatchRow | undefined> = new Array<BatchRow | undefined>(items.length).fill(undefined);
  let nextToStart = 0;
  let nextToEmit = 0;
  let done = 0;
  const emitReady = (): void => {
    for (let row = rows[nextToEmit]; row !== undefined; row = rows[nextToEmit]) {
      options.onRow(row);
      nextToEmit += 1;
    }
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = nextToStart;
      const item = items[index];
      if (item === undefined) return;
      nextToStart += 1;
      let row: BatchRow;
      try {
        await options.pace?.();
        row = toBatchRow(item, await options.lookup(item.raw));
      } catch (error) {
        row = emptyRow(
          item,
          'error',
          sanitizeForTerminal(error instanceof Error ? error.message : String(error)).slice(0, 200),
        );
      }
      rows[index] = row;
      done += 1;
      options.onProgress?.(done, items.length);
      emitReady();
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(options.concurrency, items.length)) }, () => worker());
  await Promise.all(workers);
  return rows.filter((row): row is BatchRow => row !== undefined);
}
