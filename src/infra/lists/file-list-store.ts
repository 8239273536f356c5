// The embedded store: the lists in one CSV file (LISTS_FILE), which an operator can read, edit
// by hand and keep under version control (docs/lists.md).
//
// - Writes are atomic: the whole file is written to a temporary file in the same directory,
//   fsynced, renamed over the old one, and the directory fsynced. A crash leaves the old file or
//   the new one, never a torn one. A LISTS_FILE that is a symbolic link stays one: the write
//   goes to its target (the temporary file and the rename in the target's directory).
// - Writers (the service, the CLI, any other process, in this container or another sharing the
//   folder) serialise through one lock file, `<target>.lock`, created exclusively (O_EXCL) and
//   holding its owner: a random token, the host name, the pid and the pid namespace. The owner
//   refreshes its mtime every LOCK_LEASE_MS / 4 while it holds it (its lease). A lock is taken
//   over when its lease has run out (an owner that died, on any host), or at once when its owner
//   is on this host and in this pid namespace and is gone, or holds this process's own pid
//   without being one of its locks (left by an earlier process that had the same pid, as pid 1
//   of a restarted container). A write that cannot get the lock within LOCK_WAIT_MS fails (503).
// - Under the lock a writer reads the file again when it changed since it was read (another
//   writer, a hand edit) and applies its change to that: nothing written by someone else is
//   lost. A file changed again while the change was made (an editor does not take the lock) is
//   read again and the change made on it anew; a file that does not parse refuses the write
//   (503 naming the line), never overwritten.
// - In this process, writes and reloads run one at a time: a reload never swaps in a file read
//   before a write it did not see, so a write once acknowledged stays in force.
// - A change by anyone else is seen by fs.watch on the directory (the file is replaced by a
//   rename, so its own inode cannot be watched) and, where fs.watch says nothing (network file
//   systems, some containers), by a stat poll every POLL_MS. A file that does not parse is
//   refused with a log line naming the file and the line (a refused rule as its keyed hash: it
//   may be a number); the rules in force stay.
import { oneAtATime } from '../one-at-a-time.js';
import { constants } from 'node:fs';
import { mkdir, open, readFile, readlink, realpath, rename, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createHash, randomBytes } from 'node:crypto';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import { FILE_COLUMNS, formatRuleLine, ListCsvError } from '../../domain/lists/list-csv.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import { createKeyedHasher } from '../hash.js';
import { watchFileWithPoll } from '../watch-file.js';
import {
  buildIndexInSlices,
  createLiveIndex,
  createSerialReloader,
  forEachInSlices,
  formatCsvChunksInSlices,
  mapRulesInSlices,
  ListStoreUnavailable,
  ListsTooLarge,
  MAX_RULES,
  readListCsvInSlices,
  type ListStore,
  type ListStoreLogger,
} from './list-store.js';

export const POLL_MS = 1000;
/** How long a lock stays its owner's without a refresh: an owner that died (on any host) loses it after this. */
export const LOCK_LEASE_MS = 10_000;
/** How long a write waits for the lock before it fails: a dead owner's lease, and a large write by a live one. */
export const LOCK_WAIT_MS = LOCK_LEASE_MS + 10_000;
/** Times a write starts again on a file changed under it (a hand edit made while it was written) before it fails. */
const WRITE_ATTEMPTS = 5;

export interface FileListStoreOptions {
  path: string;
  context: RuleContext;
  logger?: ListStoreLogger;
  /** Hashes a refused rule for the logs (it may be a number); default a keyed hash with a secret of this process's. */
  hashKey?: KeyedHasher;
  /** Watch the file for changes made by others (the service); the CLI reads it once. Default true. */
  watch?: boolean;
  /** Called after the rules in force changed (a write or a reload). */
  onChange?: () => void;
  /** The lock's lease and wait, in ms (tests). */
  lockLeaseMs?: number;
  lockWaitMs?: number;
  /** Called after a write made its change and before it checks the file and renames (tests: a hand edit at that moment). */
  beforeCommit?: () => Promise<void> | void;
}

/** A file that does not parse, named: the start stops with it (docs/lists.md). */
export class ListsFileError extends Error {
  override name = 'ListsFileError';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`the lists file ${file} does not parse: line ${line}: ${reason}`);
  }
}

type FileInfo = { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint };

/** What identifies one state of the file without reading it (nanosecond times: a rename and a touch within one ms differ). */
function signatureOf(info: FileInfo | undefined): string {
  return info === undefined ? 'absent' : `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

async function statOrUndefined(path: string): Promise<FileInfo | undefined> {
  try {
    return await stat(path, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The digest of a text given in chunks (what a touch leaves the same). */
function digestOf(chunks: readonly string[]): string {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(chunk, 'utf8');
  return hash.digest('base64url');
}

/** One state of the lists file as read: its text, the state it was read in (`signatureOf`) and the text's digest. */
export interface ListsFileText {
  /** The text, or its first bytes when asked for them alone; '' when the file is absent. */
  text: string;
  /** 'absent' when there is no file. */
  signature: string;
  digest: string;
}

const ABSENT_FILE: ListsFileText = { text: '', signature: 'absent', digest: 'absent' };

/**
 * The lists file as it is now (absent: no text, signature 'absent'): the one reader of the file,
 * for the file store's reloads and writes and for the Redis mirror (lists-file-mirror.ts).
 * Opened once, so its state and its text are the same file's (a rename over it in between
 * changes neither). With `maxBytes`, only the file's start is read (the mirror's header line).
 */
export async function readListsFile(path: string, maxBytes?: number): Promise<ListsFileText> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT_FILE;
    throw error;
  }
  try {
    const info = await handle.stat({ bigint: true });
    let text: string;
    if (maxBytes === undefined) {
      text = await handle.readFile('utf8');
    } else {
      const buffer = Buffer.alloc(maxBytes);
      const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
      text = buffer.subarray(0, bytesRead).toString('utf8');
    }
    return { text, signature: signatureOf(info), digest: digestOf([text]) };
  } finally {
    await handle.close();
  }
}

/**
 * The file a path names: a symbolic link's target (followed to the end, a dangling one
 * included), else the path itself.
 */
export async function resolveListsPath(path: string): Promise<string> {
  let current = resolve(path);
  for (let hops = 0; hops < 40; hops += 1) {
    try {
      return await realpath(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    // Missing, or a dangling link: follow the link by hand (the write creates its target).
    let target: string;
    try {
      target = await readlink(current);
    } catch {
      return current;
    }
    current = resolve(dirname(current), target);
  }
  return current;
}

/** The pid namespace of this process (Linux), so that a pid is compared only within its own namespace. */
async function pidNamespace(): Promise<string> {
  return readlink('/proc/self/ns/pid').catch(() => '');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface LockOwner {
  token: string;
  host: string;
  pid: number;
  pidNs: string;
}

function readOwner(text: string, me: LockOwner): LockOwner | undefined {
  // The earlier format, a pid alone (written on this host, as that version assumed).
  if (/^\d+\n?$/.test(text)) return { token: '', host: me.host, pid: Number.parseInt(text, 10), pidNs: me.pidNs };
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (
      typeof value.token === 'string' &&
      typeof value.host === 'string' &&
      typeof value.pid === 'number' &&
      typeof value.pidNs === 'string'
    )
      return { token: value.token, host: value.host, pid: value.pid, pidNs: value.pidNs };
  } catch {
    // Being written by its owner (created, not yet filled), or not ours: its lease decides.
  }
  return undefined;
}

/** The tokens of the locks this process holds now (several stores of one process may share a file). */
const heldTokens = new Set<string>();

export interface HeldLock {
  /** Whether the lock file still holds this lock (not taken over after a lost lease). */
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

/** Takes the lock file; resolves once held, refreshing its lease until released. */
export async function takeLock(lockPath: string, leaseMs = LOCK_LEASE_MS, waitMs = LOCK_WAIT_MS): Promise<HeldLock> {
  await mkdir(dirname(lockPath), { recursive: true });
  const me: LockOwner = {
    token: randomBytes(12).toString('hex'),
    host: hostname(),
    pid: process.pid,
    pidNs: await pidNamespace(),
  };
  const mine = JSON.stringify(me);
  const deadline = Date.now() + waitMs;
  let wait = 2;
  for (;;) {
    try {
      const handle = await open(lockPath, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644);
      heldTokens.add(me.token);
      try {
        await handle.writeFile(`${mine}\n`);
      } finally {
        await handle.close();
      }
      return holdLock(lockPath, me, leaseMs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [text, info] = await Promise.all([readFile(lockPath, 'utf8').catch(() => ''), statOrUndefined(lockPath)]);
    if (info !== undefined && lockIsStale(readOwner(text, me), info, me, leaseMs)) {
      // Taken over only if it is still the lock judged stale (another writer may have taken it over first).
      const again = await readFile(lockPath, 'utf8').catch(() => undefined);
      if (again === text && signatureOf(await statOrUndefined(lockPath)) === signatureOf(info))
        await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      const owner = readOwner(text, me);
      throw new ListStoreUnavailable(
        `the lists file is locked by another writer (${lockPath}${owner === undefined ? '' : `, pid ${owner.pid} on ${owner.host}`}); try again`,
      );
    }
    await delay(wait);
    wait = Math.min(50, wait * 2);
  }
}

function lockIsStale(owner: LockOwner | undefined, info: FileInfo, me: LockOwner, leaseMs: number): boolean {
  if (Date.now() - Number(info.mtimeNs / 1_000_000n) > leaseMs) return true;
  if (owner === undefined || owner.host !== me.host || owner.pidNs !== me.pidNs) return false;
  // This host and pid namespace: a pid is this process's own or another's, alive or not.
  if (owner.pid === process.pid) return !heldTokens.has(owner.token);
  return !isAlive(owner.pid);
}

function holdLock(lockPath: string, me: LockOwner, leaseMs: number): HeldLock {
  const token = me.token;
  const stillHeld = async (): Promise<boolean> =>
    readOwner(await readFile(lockPath, 'utf8').catch(() => ''), me)?.token === token;
  let refreshing: Promise<void> = Promise.resolve();
  const refresh = setInterval(
    () => {
      refreshing = (async () => {
        if (await stillHeld()) {
          const now = new Date();
          await utimes(lockPath, now, now).catch(() => undefined);
        }
      })();
    },
    Math.max(1, Math.floor(leaseMs / 4)),
  );
  refresh.unref();
  return {
    stillHeld,
    async release() {
      clearInterval(refresh);
      await refreshing;
      if (await stillHeld()) await unlink(lockPath).catch(() => undefined);
      heldTokens.delete(token);
    },
  };
}

/**
 * Writes `text` to `path` atomically: temp file, fsync, rename, fsync of the directory. Chunks
 * are written one at a time (each encoded on its own: a large file never holds the loop whole).
 * `mode`: the new file's permissions (default 0644, less the umask).
 */
export async function writeFileAtomically(
  path: string,
  text: string | readonly string[],
  options: { mode?: number } = {},
): Promise<void> {
  const directory = dirname(path);
  await mkdir(directory, { recursive: true });
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temporary, 'w', options.mode ?? 0o644);
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
  const { context, logger } = options;
  // The file written: a symbolic link's target, so that the link stays one.
  const path = await resolveListsPath(options.path);
  const lockPath = `${path}.lock`;
  const hashKey = options.hashKey ?? createKeyedHasher();
  const live = createLiveIndex();
  // The file's state the rules in force were read from; a bad state already reported.
  let loadedSignature = 'absent';
  // The digest of the text the rules in force were read from (or written as).
  let loadedDigest = 'absent';
  let refusedSignature: string | undefined;
  let closed = false;

  /** In this process, one write or reload at a time, in the order asked. */
  const exclusive = oneAtATime();

  /** A refused line's reason, with the rule it names (it may be a number) as its keyed hash. */
  function safeReason(error: ListCsvError): string {
    if (error.rule === undefined || error.rule === '') return error.reason;
    const hashed = `rule hashed ${hashKey(error.rule)}`;
    return error.reason.split(JSON.stringify(error.rule)).join(hashed).split(error.rule).join(hashed);
  }

  /** Reads and parses the file (in slices); throws ListCsvError on a bad line. */
  async function readRules(): Promise<{ rules: ListRule[]; signature: string; digest: string }> {
    const { text, signature, digest } = await readListsFile(path);
    if (signature === 'absent') return { rules: [], signature, digest };
    const rules = await readListCsvInSlices(text, { context, trustNormalForm: true, maxRules: MAX_RULES });
    return { rules, signature, digest };
  }

  async function loadIfChanged(): Promise<void> {
    const signature = signatureOf(await statOrUndefined(path));
    if (signature === loadedSignature || signature === refusedSignature) return;
    let read: { rules: ListRule[]; signature: string; digest: string };
    try {
      // Touched but not changed: nothing to read again.
      const current = await readListsFile(path);
      if (current.digest === loadedDigest) {
        loadedSignature = current.signature;
        return;
      }
      read =
        current.signature === 'absent'
          ? { rules: [], ...current }
          : {
              rules: await readListCsvInSlices(current.text, { context, trustNormalForm: true, maxRules: MAX_RULES }),
              signature: current.signature,
              digest: current.digest,
            };
    } catch (error) {
      refusedSignature = signature;
      if (error instanceof ListCsvError) {
        const reason = safeReason(error);
        logger?.error(
          { file: path, line: error.line, reason },
          `lists file refused, the rules in force stay: ${path} line ${error.line}: ${reason}`,
        );
        return;
      }
      logger?.error(
        { file: path, err: error },
        `lists file could not be read, the rules in force stay: ${(error as Error).message}`,
      );
      return;
    }
    const { index } = await buildIndexInSlices(read.rules);
    live.swap(index);
    loadedSignature = read.signature;
    loadedDigest = read.digest;
    refusedSignature = undefined;
    logger?.info({ file: path, rules: index.size() }, 'lists file read');
    options.onChange?.();
  }

  /** One reload at a time, never beside a write; a change seen during one runs another after it. */
  const reloader = createSerialReloader(
    () => exclusive(loadIfChanged).catch((error: unknown) => logger?.error({ err: error }, 'lists file reload failed')),
    () => closed,
  );
  const scheduleReload = (): Promise<void> => reloader.reload();

  // The first read: a file that does not parse stops the start (its rules would silently vanish).
  let first: { rules: ListRule[]; signature: string; digest: string };
  try {
    first = await readRules();
  } catch (error) {
    if (error instanceof ListCsvError)
      throw new ListsFileError(
        path === resolve(options.path) ? path : `${options.path} (${path})`,
        error.line,
        safeReason(error),
      );
    throw new Error(`the lists file ${options.path} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  live.swap((await buildIndexInSlices(first.rules)).index);
  loadedSignature = first.signature;
  loadedDigest = first.digest;

  /**
   * Runs a change under the lock, on the file as it is now; writes what `change` returns. A file
   * changed while the change was made (a hand edit: editors take no lock) is read again and the
   * change made anew on it, so it is never overwritten unseen.
   */
  function write<T>(
    change: (
      rules: Map<string, ListRule>,
    ) => Promise<{ result: T; changed: boolean }> | { result: T; changed: boolean },
  ): Promise<T> {
    return exclusive(async () => {
      for (let attempt = 1; ; attempt += 1) {
        let lock: HeldLock;
        try {
          lock = await takeLock(lockPath, options.lockLeaseMs, options.lockWaitMs);
        } catch (error) {
          throw error instanceof ListStoreUnavailable
            ? error
            : new ListStoreUnavailable(`the lists file cannot be locked: ${(error as Error).message}`);
        }
        try {
          // Someone else may have written since we last read: start from the file as it is.
          let signature = signatureOf(await statOrUndefined(path));
          let digest = loadedDigest;
          // Walked in slices, never copied whole in one go: 100,000 rules would hold the loop (docs/lists.md).
          let rules: Iterable<ListRule> = live.current().rules();
          if (signature !== loadedSignature) {
            const current = await readListsFile(path);
            signature = current.signature;
            digest = current.digest;
            if (current.digest !== loadedDigest && current.signature !== 'absent') {
              try {
                rules = await readListCsvInSlices(current.text, {
                  context,
                  trustNormalForm: true,
                  maxRules: MAX_RULES,
                });
              } catch (error) {
                if (error instanceof ListCsvError)
                  throw new ListStoreUnavailable(
                    `the lists file ${path} does not parse (line ${error.line}: ${safeReason(error)}); fix it before changing the lists`,
                  );
                throw error;
              }
            } else if (current.signature === 'absent') rules = [];
          }
          const byRule = await mapRulesInSlices(rules);
          const { result, changed } = await change(byRule);
          if (!changed) return result;
          const text = await formatCsvChunksInSlices(
            byRule.values(),
            (rule) => formatRuleLine(rule, FILE_COLUMNS),
            FILE_COLUMNS.join(','),
          );
          await options.beforeCommit?.();
          // Changed by hand meanwhile (touched only is no change), or the lock lost (a lease run out): start again from the file.
          const changedMeanwhile =
            signatureOf(await statOrUndefined(path)) !== signature && (await readListsFile(path)).digest !== digest;
          if (changedMeanwhile || !(await lock.stillHeld())) {
            if (attempt < WRITE_ATTEMPTS) continue;
            throw new ListStoreUnavailable(
              `the lists file ${path} kept changing while it was written (edited by hand?); nothing was changed, try again`,
            );
          }
          try {
            await writeFileAtomically(path, text);
          } catch (error) {
            throw new ListStoreUnavailable(`the lists file cannot be written (${path}): ${(error as Error).message}`);
          }
          const { index } = await buildIndexInSlices(byRule.values());
          live.swap(index);
          loadedSignature = signatureOf(await statOrUndefined(path));
          loadedDigest = digestOf(text);
          refusedSignature = undefined;
          options.onChange?.();
          return result;
        } finally {
          await lock.release();
        }
      }
    });
  }

  // The target's directory: a link's own directory does not see its target replaced.
  const watching = options.watch === false ? undefined : watchFileWithPoll(path, scheduleReload, POLL_MS);

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
        if (rules.size > MAX_RULES)
          throw new ListsTooLarge(
            `the import would make the lists ${rules.size} rules; they hold at most ${MAX_RULES}`,
          );
        return { result: { added: imported.length - replaced, replaced }, changed: imported.length > 0 };
      }),
    replaceRules: (restored) =>
      write(async (rules) => {
        if (restored.length > MAX_RULES)
          throw new ListsTooLarge(`the restore holds ${restored.length} rules; the lists hold at most ${MAX_RULES}`);
        const before = rules.size;
        rules.clear();
        await forEachInSlices(restored, (rule) => rules.set(rule.rule, rule));
        return { result: { before }, changed: true };
      }),
    storedRules: () => live.current().allRules(),
    index: () => live.current(),
    countByList: (now) => live.current().countByList(now),
    refresh: () => scheduleReload(),
    async close() {
      closed = true;
      watching?.close();
      await reloader.running();
    },
  };
}
