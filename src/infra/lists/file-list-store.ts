// The embedded store: the lists in one CSV file (LISTS_FILE), which an operator can read, edit
// by hand and keep under version control (docs/lists.md).
//
// - Writes are atomic: the whole file is written to a temporary file in the same directory,
//   fsynced, renamed over the old one, and the directory fsynced. A crash leaves the old file or
//   the new one, never a torn one.
// - Writers take a lock file (`<file>.lock`, created exclusively, holding the writer's pid) and
//   read the file again under it before changing it, so two processes (two CLI runs, the
//   service and the CLI, several WORKERS) lose none of each other's rules. A lock whose process
//   is gone, or older than LOCK_STALE_MS, is taken over.
// - A change by anyone else (a hand edit, another process) is seen by fs.watch on the directory
//   (the file is replaced by a rename, so its own inode cannot be watched) and, where fs.watch
//   says nothing (network file systems, some containers), by a stat poll every POLL_MS. A file
//   that does not parse is refused with a log line naming the line; the rules in force stay.
import { constants, watch, type FSWatcher } from 'node:fs';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import { FILE_COLUMNS, formatRuleLine, ListCsvError } from '../../domain/lists/list-csv.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import { buildIndexInSlices, createLiveIndex, createSerialReloader, forEachInSlices, formatCsvChunksInSlices, mapRulesInSlices, ListStoreUnavailable, readListCsvInSlices, type ListStore, type ListStoreLogger } from './list-store.js';

export const POLL_MS = 1000;
export const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 30_000;

export interface FileListStoreOptions {
  path: string;
  context: RuleContext;
  logger?: ListStoreLogger;
  /** Watch the file for changes made by others (the service); the CLI reads it once. Default true. */
  watch?: boolean;
  /** Called after the rules in force changed (a write or a reload). */
  onChange?: () => void;
}

/** What identifies one state of the file without reading it. */
function signatureOf(info: { ino: number; size: number; mtimeMs: number } | undefined): string {
  return info === undefined ? 'absent' : `${info.ino}:${info.size}:${info.mtimeMs}`;
}

async function statOrUndefined(path: string): Promise<{ ino: number; size: number; mtimeMs: number } | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock file; resolves to its release. */
async function takeLock(lockPath: string): Promise<() => Promise<void>> {
  await mkdir(dirname(lockPath), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  let wait = 2;
  for (;;) {
    try {
      const handle = await open(lockPath, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return async () => {
        await unlink(lockPath).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // Held: by a live process, wait; by a dead one (SIGKILL mid-write), or for too long, take it over.
    const [text, info] = await Promise.all([readFile(lockPath, 'utf8').catch(() => ''), statOrUndefined(lockPath)]);
    const pid = Number.parseInt(text, 10);
    const stale = info !== undefined && Date.now() - info.mtimeMs > LOCK_STALE_MS;
    if (info !== undefined && ((Number.isInteger(pid) && pid > 0 && !isAlive(pid)) || stale)) {
      await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) throw new ListStoreUnavailable(`the lists file is locked by another process (${lockPath}, pid ${text.trim() || '?'})`);
    await delay(wait);
    wait = Math.min(50, wait * 2);
  }
}

/**
 * Writes `text` to `path` atomically: temp file, fsync, rename, fsync of the directory. Chunks
 * are written one at a time (each encoded on its own: a large file never holds the loop whole).
 */
export async function writeFileAtomically(path: string, text: string | readonly string[]): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temporary, 'w', 0o644);
  try {
    // Each writeFile goes on from the handle's current position (Node's documented behaviour).
    for (const chunk of typeof text === 'string' ? [text] : text) await handle.writeFile(chunk, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  await rename(temporary, path);
  const dir = await open(directory, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

export async function openFileListStore(options: FileListStoreOptions): Promise<ListStore> {
  const { path, context, logger } = options;
  const lockPath = `${path}.lock`;
  const live = createLiveIndex();
  // The file's state the rules in force were read from; a bad state already reported.
  let loadedSignature = 'absent';
  let refusedSignature: string | undefined;
  let closed = false;

  /** Reads and parses the file (in slices); throws ListCsvError on a bad line. */
  async function readRules(): Promise<{ rules: ListRule[]; signature: string }> {
    const before = await statOrUndefined(path);
    if (before === undefined) return { rules: [], signature: 'absent' };
    const text = await readFile(path, 'utf8');
    const rules = await readListCsvInSlices(text, { context, trustNormalForm: true });
    return { rules, signature: signatureOf(before) };
  }

  async function loadIfChanged(): Promise<void> {
    const signature = signatureOf(await statOrUndefined(path));
    if (signature === loadedSignature || signature === refusedSignature) return;
    let read: { rules: ListRule[]; signature: string };
    try {
      read = await readRules();
    } catch (error) {
      refusedSignature = signature;
      if (error instanceof ListCsvError) {
        logger?.error({ file: path, line: error.line, reason: error.reason }, `lists file refused, the rules in force stay: ${path} line ${error.line}: ${error.reason}`);
        return;
      }
      logger?.error({ file: path, err: error }, `lists file could not be read, the rules in force stay: ${(error as Error).message}`);
      return;
    }
    const { index } = await buildIndexInSlices(read.rules);
    live.swap(index);
    loadedSignature = read.signature;
    refusedSignature = undefined;
    logger?.info({ file: path, rules: index.size() }, 'lists file read');
    options.onChange?.();
  }

  /** One reload at a time; a change seen during one runs another after it. */
  const reloader = createSerialReloader(() => loadIfChanged().catch((error: unknown) => logger?.error({ err: error }, 'lists file reload failed')), () => closed);
  const scheduleReload = (): Promise<void> => reloader.reload();

  // The first read: a file that does not parse stops the start (its rules would silently vanish).
  const first = await readRules();
  live.swap((await buildIndexInSlices(first.rules)).index);
  loadedSignature = first.signature;

  /** Runs a change under the lock, on the file as it is now; writes what `change` returns. */
  async function write<T>(change: (rules: Map<string, ListRule>) => Promise<{ result: T; changed: boolean }> | { result: T; changed: boolean }): Promise<T> {
    let release: () => Promise<void>;
    try {
      release = await takeLock(lockPath);
    } catch (error) {
      throw error instanceof ListStoreUnavailable ? error : new ListStoreUnavailable(`the lists file cannot be locked: ${(error as Error).message}`);
    }
    try {
      // Someone else may have written since we last read: start from the file as it is.
      const signature = signatureOf(await statOrUndefined(path));
      // Walked in slices, never copied whole in one go: 100,000 rules would hold the loop (docs/lists.md).
      let rules: Iterable<ListRule>;
      if (signature === loadedSignature) rules = live.current().rules();
      else {
        try {
          rules = (await readRules()).rules;
        } catch (error) {
          if (error instanceof ListCsvError) throw new ListStoreUnavailable(`the lists file does not parse (line ${error.line}: ${error.reason}); fix it before changing the lists`);
          throw error;
        }
      }
      const byRule = await mapRulesInSlices(rules);
      const { result, changed } = await change(byRule);
      if (!changed) return result;
      const text = await formatCsvChunksInSlices(byRule.values(), (rule) => formatRuleLine(rule, FILE_COLUMNS), FILE_COLUMNS.join(','));
      try {
        await writeFileAtomically(path, text);
      } catch (error) {
        throw new ListStoreUnavailable(`the lists file cannot be written (${path}): ${(error as Error).message}`);
      }
      const { index } = await buildIndexInSlices(byRule.values());
      live.swap(index);
      loadedSignature = signatureOf(await statOrUndefined(path));
      refusedSignature = undefined;
      options.onChange?.();
      return result;
    } finally {
      await release();
    }
  }

  let watcher: FSWatcher | undefined;
  let poll: NodeJS.Timeout | undefined;
  if (options.watch !== false) {
    const name = basename(path);
    try {
      watcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
        if (filename === null || filename === name) void scheduleReload();
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // The directory does not exist yet (created on first write) or cannot be watched: the poll sees it.
      watcher = undefined;
    }
    poll = setInterval(() => void scheduleReload(), POLL_MS);
    poll.unref();
  }

  return {
    kind: 'file',
    location: path,
    match: (e164, now) => live.match(e164, now),
    activeRules: (now) => live.activeRules(now),
    version: (now) => live.version(now),
    put: (rule) =>
      write((rules) => {
        const replaced = rules.has(rule.rule);
        rules.set(rule.rule, rule);
        return { result: { replaced }, changed: true };
      }),
    remove: (rule) =>
      write((rules) => {
        const removed = rules.delete(rule);
        return { result: removed, changed: removed };
      }),
    importRules: (imported) =>
      write(async (rules) => {
        let replaced = 0;
        await forEachInSlices(imported, (rule) => {
          if (rules.has(rule.rule)) replaced += 1;
          rules.set(rule.rule, rule);
        });
        return { result: { added: imported.length - replaced, replaced }, changed: imported.length > 0 };
      }),
    storedRules: () => live.current().allRules(),
    index: () => live.current(),
    countByList: (now) => live.current().countByList(now),
    refresh: () => scheduleReload(),
    async close() {
      closed = true;
      watcher?.close();
      if (poll !== undefined) clearInterval(poll);
      await reloader.running();
    },
  };
}
