// Refreshes the ARCEP snapshot: downloads the three files, checks they are what ARCEP publishes
// (exact header, a sane number of rows, Latin-1 text that the plan parser accepts), then swaps
// them in with renames. Any failure leaves the files in place untouched.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARCEP_FILE_NAMES, parseNumberingPlan, type NumberingPlanFiles } from './numbering-plan.js';

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

export type UpdateArcepDataResult =
  | { ok: true; dataDate: string; rows: Record<ArcepFile, number> }
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

/** Downloads, validates and atomically installs fresh ARCEP files into `options.dir`. */
export async function updateArcepData(options: UpdateArcepDataOptions): Promise<UpdateArcepDataResult> {
  const timeoutMs = options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const downloads = await Promise.all(FILES.map(async (file) => [file, await download(options.urls[file], timeoutMs)] as const));

  const texts: Partial<Record<ArcepFile, string>> = {};
  const bytesByFile: Partial<Record<ArcepFile, Buffer>> = {};
  for (const [file, result] of downloads) {
    const fileName = ARCEP_FILE_NAMES[file];
    if (!result.ok) return { ok: false, reason: `${fileName}: download failed (${result.reason})` };
    const encodingProblem = checkLatin1(result.bytes);
    if (encodingProblem) return { ok: false, reason: `${fileName}: ${encodingProblem}` };
    texts[file] = result.bytes.toString('latin1');
    bytesByFile[file] = result.bytes;
  }
  const files: NumberingPlanFiles = { majnum: texts.majnum ?? '', majrio: texts.majrio ?? '', identifiants: texts.identifiants ?? '' };

  const parsed = parseNumberingPlan(files);
  if (!parsed.ok) return { ok: false, reason: parsed.reason };
  const rows = parsed.plan.rowCounts;
  for (const file of FILES) {
    const range = ROW_COUNT_RANGES[file];
    if (rows[file] < range.min || rows[file] > range.max) {
      return { ok: false, reason: `${ARCEP_FILE_NAMES[file]}: ${rows[file]} rows, expected ${range.min}–${range.max}` };
    }
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
  return { ok: true, dataDate: parsed.plan.dataDate, rows };
}
