// Refreshes the ARCEP snapshot: downloads the three files, checks they are what ARCEP publishes
// (exact header, a sane number of rows, Latin-1 text that the plan parser accepts), then swaps
// them in with renames. A failure on MAJNUM or identifiants_CE leaves the files in place
// untouched. MAJRIO has no confirmed published address and only backs up identifiants_CE for
// operator names, so a MAJRIO that cannot be fetched or is not valid does not stop the others:
// the previous MAJRIO.csv is kept (or, when there is none, a header-only one is written so the
// plan still loads; operator names then come from identifiants_CE, else the code itself).
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARCEP_FILE_NAMES, MAJRIO_HEADER, parseNumberingPlan, type NumberingPlanFiles } from '../../domain/numbering/numbering-plan.js';

type ArcepFile = keyof NumberingPlanFiles;
const FILES: readonly ArcepFile[] = ['majnum', 'majrio', 'identifiants'];

/** Data rows (header excluded) a genuine file has; outside this, the download is suspicious. */
export const ROW_COUNT_RANGES: Readonly<Record<ArcepFile, { min: number; max: number }>> = {
  majnum: { min: 10_000, max: 60_000 },
  majrio: { min: 100, max: 2_000 },
  identifiants: { min: 500, max: 10_000 },
};

const MAX_FILE_BYTES = 20 * 1024 * 1024;
const DEFAULT_FETCH_TIMEOUT_MS = 60_000;

export interface UpdateArcepDataOptions {
  dir: string;
  urls: Record<ArcepFile, string>;
  fetchTimeoutMs?: number;
}

/** `updated`: MAJRIO.csv was replaced too; `kept`: the previous one stays; `empty`: none existed, a header-only one was written. */
export type MajrioUpdate = { status: 'updated' } | { status: 'kept' | 'empty'; reason: string };

export type UpdateArcepDataResult =
  | { ok: true; dataDate: string; rows: Record<ArcepFile, number>; majrio: MajrioUpdate }
  | { ok: false; reason: string };

async function download(url: string, timeoutMs: number): Promise<{ ok: true; bytes: Buffer } | { ok: false; reason: string }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, reason: `HTTP ${response.status}` };
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > MAX_FILE_BYTES) {
      await response.body?.cancel();
      return { ok: false, reason: 'file too large' };
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > MAX_FILE_BYTES) return { ok: false, reason: 'file too large' };
    return { ok: true, bytes };
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    return { ok: false, reason: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network error' };
  }
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
  return rows < range.min || rows > range.max ? `${ARCEP_FILE_NAMES[file]}: ${rows} rows, expected ${range.min}–${range.max}` : undefined;
}

/** Downloads, validates and atomically installs fresh ARCEP files into `options.dir`. */
export async function updateArcepData(options: UpdateArcepDataOptions): Promise<UpdateArcepDataResult> {
  const timeoutMs = options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const downloads = await Promise.all(FILES.map(async (file) => [file, await download(options.urls[file], timeoutMs)] as const));

  const bytesByFile: Partial<Record<ArcepFile, Buffer>> = {};
  let majrioProblem: string | undefined;
  for (const [file, result] of downloads) {
    const fileName = ARCEP_FILE_NAMES[file];
    const problem = result.ok ? checkLatin1(result.bytes) : `download failed (${result.reason})`;
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
    const installed = await installedMajrio(options.dir);
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

  // Temp files in the same directory so that rename() is atomic (same file system).
  const suffix = `.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const written: string[] = [];
  try {
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
