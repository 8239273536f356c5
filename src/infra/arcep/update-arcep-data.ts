// Refreshes the ARCEP data: downloads the three files into the state directory (never over the
// snapshot shipped in the package, which stays the fallback), checks they are what ARCEP publishes
// (whole: under the size cap counted as bytes arrive and with a complete last row; exact
// header; a sane number of rows, not much fewer than the data in use; no date in the future;
// Latin-1 text that the plan parser accepts), then swaps them in with renames. A failure on
// MAJNUM or identifiants_CE leaves the files in place untouched. MAJRIO has no confirmed
// published address and only backs up identifiants_CE for operator names, so a MAJRIO that
// cannot be fetched or is not valid does not stop the others:
// the previous MAJRIO.csv is kept (or, when there is none, a header-only one is written so the
// plan still loads; operator names then come from identifiants_CE, else the code itself).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readCappedBody } from '../http/read-capped-body.js';
import {
  ARCEP_FILE_NAMES,
  IDENTIFIANTS_HEADER,
  MAJNUM_HEADER,
  MAJRIO_HEADER,
  parseNumberingPlan,
  type NumberingPlanFiles,
} from '../../domain/numbering/numbering-plan.js';

type ArcepFile = keyof NumberingPlanFiles;
const FILES: readonly ArcepFile[] = ['majnum', 'majrio', 'identifiants'];

/** Data rows (header excluded) a genuine file has; outside this, the download is suspicious. */
export const ROW_COUNT_RANGES: Readonly<Record<ArcepFile, { min: number; max: number }>> = {
  majnum: { min: 10_000, max: 60_000 },
  majrio: { min: 100, max: 2_000 },
  identifiants: { min: 500, max: 10_000 },
};

/** The most a download may hold; counted as the bytes arrive, so a larger body is cut there. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
const DEFAULT_FETCH_TIMEOUT_MS = 60_000;
/**
 * The largest share by which MAJNUM may shrink against the data in use. ARCEP's file grows
 * with each allocation and loses a few rows when blocks are withdrawn; a drop larger than this
 * is a truncated download far more often than a real change, so it needs `force`.
 */
export const MAX_MAJNUM_ROW_DROP = 0.05;

const HEADERS: Readonly<Record<ArcepFile, readonly string[]>> = {
  majnum: MAJNUM_HEADER,
  majrio: MAJRIO_HEADER,
  identifiants: IDENTIFIANTS_HEADER,
};
/** Files whose last column is a DD/MM/YYYY date, so a last row without a line break can still be judged whole. */
const ENDS_WITH_DATE: Readonly<Record<ArcepFile, boolean>> = { majnum: true, majrio: false, identifiants: true };

export interface UpdateArcepDataOptions {
  /** Where the files are written (created when missing): the state directory's copy, or ARCEP_DATA_DIR. */
  dir: string;
  /**
   * The data in use, which the download is compared with and whose MAJRIO.csv is kept when
   * ARCEP's cannot be had (numberingDataInUse: the shipped snapshot until a first update wrote
   * `dir`). Default `dir`.
   */
  inUseDir?: string;
  urls: Record<ArcepFile, string>;
  fetchTimeoutMs?: number;
  /** Install a MAJNUM even when it has many fewer rows than the data in use (`data update --force`). */
  force?: boolean;
  /** The clock that says which dates are in the future (tests set it). */
  now?: () => Date;
  /** Size cap per file (tests lower it); default MAX_FILE_BYTES. */
  maxFileBytes?: number;
}

/** `updated`: MAJRIO.csv was replaced too; `kept`: the previous one stays; `empty`: none existed, a header-only one was written. */
export type MajrioUpdate = { status: 'updated' } | { status: 'kept' | 'empty'; reason: string };

export type UpdateArcepDataResult =
  { ok: true; dataDate: string; rows: Record<ArcepFile, number>; majrio: MajrioUpdate } | { ok: false; reason: string };

/**
 * Reads the body chunk by chunk and gives up as soon as it passes the cap: a body of any size,
 * announced or chunked, never costs more than the cap in memory.
 */
async function download(
  url: string,
  timeoutMs: number,
  maxBytes: number,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; reason: string }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, reason: `HTTP ${response.status}` };
    }
    const tooLarge = `file too large (over ${maxBytes} bytes)`;
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > maxBytes) {
      await response.body?.cancel();
      return { ok: false, reason: tooLarge };
    }
    const bytes = await readCappedBody(response, maxBytes);
    return bytes === undefined ? { ok: false, reason: tooLarge } : { ok: true, bytes };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    return { ok: false, reason: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network error' };
  }
}

/** Cells of one CSV line, counted outside double quotes. */
function cellsOfLine(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (const character of line) {
    if (character === '"') quoted = !quoted;
    else if (character === ';' && !quoted) {
      cells.push(cell);
      cell = '';
    } else cell += character;
  }
  cells.push(cell);
  return cells;
}

/**
 * A download cut short mid-row ends in part of a row. ARCEP's files end with a line break; a
 * last row without one is accepted only when it can be seen to be whole: every column, and a
 * complete date in the last column (MAJNUM, identifiants_CE).
 */
function lastRowProblem(file: ArcepFile, bytes: Buffer): string | undefined {
  if (bytes.length === 0) return 'empty file';
  const last = bytes[bytes.length - 1];
  if (last === 0x0a || last === 0x0d) return undefined;
  const line = bytes.subarray(Math.max(bytes.lastIndexOf(0x0a), bytes.lastIndexOf(0x0d)) + 1).toString('latin1');
  const cells = cellsOfLine(line);
  // A free-text last column (MAJRIO's decision number) cut short still looks like a value: only a line break proves that row whole.
  const whole =
    ENDS_WITH_DATE[file] &&
    cells.length >= HEADERS[file].length &&
    /^\d{2}\/\d{2}\/\d{4}$/.test(cells.at(-1)?.trim() ?? '');
  return whole ? undefined : 'incomplete last row (the download was cut short)';
}

/** Rows of the MAJNUM in use, read the way the plan reads them; undefined when there is none or it is unusable. */
async function installedMajnumRows(dir: string): Promise<number | undefined> {
  let majnum: string;
  try {
    majnum = await readFile(join(dir, ARCEP_FILE_NAMES.majnum), 'latin1');
  } catch {
    return undefined;
  }
  const parsed = parseNumberingPlan({
    majnum,
    majrio: `${MAJRIO_HEADER.join(';')}\n`,
    identifiants: `${IDENTIFIANTS_HEADER.join(';')}\n`,
  });
  return parsed.ok ? parsed.plan.rowCounts.majnum : undefined;
}

/** Today as YYYY-MM-DD in France, where ARCEP dates its allocations. */
function todayInFrance(now: Date): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: 'Europe/Paris',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

/**
 * The files are Latin-1; a download that is valid UTF-8 with non-ASCII characters (or holds
 * NUL bytes) has been re-encoded or is not a CSV at all.
 */
function checkLatin1(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return 'binary content';
  const hasNonAscii = bytes.some((byte) => byte >= 0x80);
  if (!hasNonAscii) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return 'UTF-8 content where Latin-1 was expected';
  } catch {
    return undefined;
  }
}

/** The MAJRIO.csv already installed, or a header-only one when there is none. */
async function installedMajrio(dir: string): Promise<{ bytes: Buffer; status: 'kept' | 'empty' }> {
  try {
    return { bytes: await readFile(join(dir, ARCEP_FILE_NAMES.majrio)), status: 'kept' };
  } catch {
    return { bytes: Buffer.from(`${MAJRIO_HEADER.join(';')}\n`, 'latin1'), status: 'empty' };
  }
}

function rowCountProblem(file: ArcepFile, rows: number): string | undefined {
  const range = ROW_COUNT_RANGES[file];
  return rows < range.min || rows > range.max
    ? `${ARCEP_FILE_NAMES[file]}: ${rows} rows, expected ${range.min}–${range.max}`
    : undefined;
}

/** Downloads, validates and atomically installs fresh ARCEP files into `options.dir`. */
export async function updateArcepData(options: UpdateArcepDataOptions): Promise<UpdateArcepDataResult> {
  const timeoutMs = options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const maxBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
  const downloads = await Promise.all(
    FILES.map(async (file) => [file, await download(options.urls[file], timeoutMs, maxBytes)] as const),
  );

  const bytesByFile: Partial<Record<ArcepFile, Buffer>> = {};
  let majrioProblem: string | undefined;
  for (const [file, result] of downloads) {
    const fileName = ARCEP_FILE_NAMES[file];
    const problem = result.ok
      ? (lastRowProblem(file, result.bytes) ?? checkLatin1(result.bytes))
      : `download failed (${result.reason})`;
    if (problem !== undefined && file === 'majrio') majrioProblem = `${fileName}: ${problem}`;
    else if (problem !== undefined) return { ok: false, reason: `${fileName}: ${problem}` };
    else if (result.ok) bytesByFile[file] = result.bytes;
  }

  const texts = (majrio: Buffer | undefined): NumberingPlanFiles => ({
    majnum: bytesByFile.majnum?.toString('latin1') ?? '',
    majrio: majrio?.toString('latin1') ?? '',
    identifiants: bytesByFile.identifiants?.toString('latin1') ?? '',
  });
  let parsed = majrioProblem === undefined ? parseNumberingPlan(texts(bytesByFile.majrio)) : undefined;
  if (parsed !== undefined && majrioProblem === undefined) {
    const reason = parsed.ok ? rowCountProblem('majrio', parsed.plan.rowCounts.majrio) : parsed.reason;
    if (reason?.startsWith(ARCEP_FILE_NAMES.majrio) === true) majrioProblem = reason;
  }
  let majrio: MajrioUpdate = { status: 'updated' };
  if (majrioProblem !== undefined) {
    const installed = await installedMajrio(options.inUseDir ?? options.dir);
    bytesByFile.majrio = installed.bytes;
    majrio = { status: installed.status, reason: majrioProblem };
    parsed = parseNumberingPlan(texts(installed.bytes));
  }
  if (parsed === undefined) return { ok: false, reason: 'no data to validate' };
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const rows = parsed.plan.rowCounts;
  for (const file of FILES) {
    // A kept or header-only MAJRIO was not downloaded now: its size says nothing of this download.
    if (file === 'majrio' && majrio.status !== 'updated') continue;
    const problem = rowCountProblem(file, rows[file]);
    if (problem !== undefined) return { ok: false, reason: problem };
  }
  // The newest allocation date becomes the data date; one in the future would hide the data's
  // age from the readiness check for good, and no genuine file has one.
  const today = todayInFrance((options.now ?? (() => new Date()))());
  if (parsed.plan.dataDate > today) {
    return {
      ok: false,
      reason: `${ARCEP_FILE_NAMES.majnum}: a row is dated ${parsed.plan.dataDate}, after today (${today})`,
    };
  }
  if (options.force !== true) {
    const inUseRows = await installedMajnumRows(options.inUseDir ?? options.dir);
    if (inUseRows !== undefined && rows.majnum < inUseRows * (1 - MAX_MAJNUM_ROW_DROP)) {
      const drop = Math.round((1 - rows.majnum / inUseRows) * 100);
      return {
        ok: false,
        reason:
          `${ARCEP_FILE_NAMES.majnum}: ${rows.majnum} rows, ${drop} % fewer than the ${inUseRows} in use ` +
          `(a drop of more than ${MAX_MAJNUM_ROW_DROP * 100} % is refused; data update --force installs it anyway)`,
      };
    }
  }

  // Temp files in the same directory so that rename() is atomic (same file system).
  const suffix = `.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const written: string[] = [];
  try {
    await mkdir(options.dir, { recursive: true });
    for (const file of FILES) {
      const temporary = join(options.dir, `${ARCEP_FILE_NAMES[file]}${suffix}`);
      await writeFile(temporary, bytesByFile[file] ?? Buffer.alloc(0));
      written.push(temporary);
    }
  } catch {
    await Promise.all(written.map((path) => rm(path, { force: true })));
    return { ok: false, reason: `cannot write into ${options.dir}` };
  }
  // Each rename is atomic; the three together are not, but every file is validated before the
  // first rename, so a reader sees old or new files, each one whole.
  try {
    for (const file of FILES) {
      await rename(join(options.dir, `${ARCEP_FILE_NAMES[file]}${suffix}`), join(options.dir, ARCEP_FILE_NAMES[file]));
    }
  } catch {
    await Promise.all(written.map((path) => rm(path, { force: true })));
    return { ok: false, reason: `cannot replace the files in ${options.dir}` };
  }
  return { ok: true, dataDate: parsed.plan.dataDate, rows, majrio };
}
