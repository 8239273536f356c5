// The lists file as the mirror of the lists in Redis (REDIS_URL with LISTS_FILE set): every
// change Redis took is in the file before its writer hears "done", so Redis and every instance
// may restart, in any order, and the rules come back (redis-list-store.ts, docs/lists.md).
//
// The file is the file store's CSV (FILE_COLUMNS), written atomically (writeFileAtomically), after
// one comment line naming the Redis state it holds:
//   # phone-reputation lists mirror: version=<n> stream=<id>
// `version` is lists:version and `stream` the id of the last change in lists:changes that the
// state includes. A writer takes `<file>.mirror.lock` and writes only a state newer than the
// file's, so two instances mirroring at once never put an older state over a newer one. A file
// without that line (written by hand, or by the file store) is version 0.
import { hostname } from 'node:os';
import { constants } from 'node:fs';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import { FILE_COLUMNS, formatRuleLine } from '../../domain/lists/list-csv.js';
import { writeFileAtomically } from './file-list-store.js';
import { formatCsvChunksInSlices, ListStoreUnavailable, readListCsvInSlices } from './list-store.js';

const HEADER_PREFIX = '# phone-reputation lists mirror:';
/** A lock older than this is a dead writer's: a mirror write takes well under a second. */
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 15_000;

/** A state of the lists in Redis: its version, the last change it includes, its rules. */
export interface MirroredState {
  version: number;
  streamId: string;
  rules: ListRule[];
}

/** The state named by the file's first line, or version 0 (and stream 0-0) without one. */
export function parseMirrorHeader(text: string): { version: number; streamId: string } {
  const end = text.indexOf('\n');
  const first = (end === -1 ? text : text.slice(0, end)).replace(/^\ufeff/, '').trim();
  const found = first.startsWith(HEADER_PREFIX) ? /version=(\d+) stream=(\d+-\d+)/.exec(first) : null;
  if (found === null) return { version: 0, streamId: '0-0' };
  return { version: Number(found[1]), streamId: found[2] as string };
}

/** The version the file holds (0 when absent or without the mirror's line); reads only its start. */
export async function readMirrorVersion(path: string): Promise<number> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return parseMirrorHeader(buffer.subarray(0, bytesRead).toString('utf8')).version;
  } finally {
    await handle.close();
  }
}

/** The whole file as a state (no rule, version 0 when absent); throws ListCsvError on a bad line. */
export async function readMirror(path: string, context: RuleContext): Promise<MirroredState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 0, streamId: '0-0', rules: [] };
    throw error;
  }
  const header = parseMirrorHeader(text);
  // An empty file (or one holding only comments) is no rule, not a missing CSV header.
  if (!/^[^#\s]/m.test(text.replace(/^\ufeff/, ''))) return { ...header, rules: [] };
  return { ...header, rules: await readListCsvInSlices(text, { context, trustNormalForm: true }) };
}

const owner = `${hostname()}:${process.pid}`;
/**
 * This process's own mirror writes, one at a time (the lock file orders processes). Module-wide on
 * purpose, whatever the number of stores: a lock file naming this pid is then always a leftover.
 */
let processQueue: Promise<unknown> = Promise.resolve();

/**
 * Takes `<file>.mirror.lock`. The lock names its host and pid: one left by this very process (a
 * container restarted after SIGKILL gets the same pid) or by a dead pid of this host is taken
 * over at once; any other after LOCK_STALE_MS.
 */
async function takeMirrorLock(lockPath: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let wait = 2;
  for (;;) {
    try {
      const handle = await open(lockPath, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644);
      await handle.writeFile(`${owner}\n`);
      await handle.close();
      return async () => {
        await unlink(lockPath).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [text, info] = await Promise.all([readFile(lockPath, 'utf8').catch(() => ''), stat(lockPath).catch(() => undefined)]);
    const [host, pidText] = text.trim().split(':');
    const pid = Number(pidText);
    const leftHere = host === hostname() && Number.isInteger(pid) && (pid === process.pid || !isAlive(pid));
    if (info !== undefined && (leftHere || Date.now() - info.mtimeMs > LOCK_STALE_MS)) {
      await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) throw new ListStoreUnavailable(`the lists file's mirror lock is held (${lockPath})`);
    await delay(wait);
    wait = Math.min(50, wait * 2);
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

/**
 * Writes `state` to the file unless the file already holds this version or a newer one (another
 * instance's state, which includes this one's changes). Returns the version the file holds after.
 */
export function writeMirror(path: string, state: { version: number; streamId: string; rules: Iterable<ListRule> }): Promise<number> {
  const run = processQueue.then(async () => {
    const release = await takeMirrorLock(`${path}.mirror.lock`);
    try {
      const held = await readMirrorVersion(path);
      if (held >= state.version) return held;
      const header = `${HEADER_PREFIX} version=${state.version} stream=${state.streamId}\n${FILE_COLUMNS.join(',')}`;
      const chunks = await formatCsvChunksInSlices(state.rules, (rule) => formatRuleLine(rule, FILE_COLUMNS), header);
      await writeFileAtomically(path, chunks);
      return state.version;
    } finally {
      await release();
    }
  });
  processQueue = run.catch(() => undefined);
  return run;
}
