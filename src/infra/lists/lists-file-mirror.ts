// The lists file as the mirror of the lists in Redis (REDIS_URL with LISTS_FILE set): every
// change Redis took is in the file before its writer hears "done", so Redis and every instance
// may restart, in any order, and the rules come back (redis-list-store.ts, docs/lists.md).
//
// The file is the file store's CSV (FILE_COLUMNS), written atomically (writeFileAtomically), after
// one comment line naming the Redis state it holds:
//   # phone-reputation lists mirror: version=<n> stream=<id>
// `version` is {lists}:version and `stream` the id of the last change in {lists}:changes that the
// state includes. A writer takes the lists file's lock (`<target>.lock`, the file store's) and
// writes only a state newer than the file's, so two instances mirroring at once never put an older state over a newer one. A file
// without that line (written by hand, or by the file store) is version 0.
import type { ListRule } from '../../domain/ports/operator-lists.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import { FILE_COLUMNS, formatRuleLine, ListCsvError } from '../../domain/lists/list-csv.js';
import { ListsFileError, readListsFile, resolveListsPath, takeLock, writeFileAtomically } from './file-list-store.js';
import { formatCsvChunksInSlices, readListCsvInSlices } from './list-store.js';

const HEADER_PREFIX = '# phone-reputation lists mirror:';

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
  return parseMirrorHeader((await readListsFile(path, 256)).text).version;
}

/** The whole file as a state (no rule, version 0 when absent); throws ListsFileError, naming the file, on a bad line. */
export async function readMirror(path: string, context: RuleContext): Promise<MirroredState> {
  const { text, signature } = await readListsFile(path);
  if (signature === 'absent') return { version: 0, streamId: '0-0', rules: [] };
  const header = parseMirrorHeader(text);
  // An empty file (or one holding only comments) is no rule, not a missing CSV header.
  if (!/^[^#\s]/m.test(text.replace(/^\ufeff/, ''))) return { ...header, rules: [] };
  try {
    return { ...header, rules: await readListCsvInSlices(text, { context, trustNormalForm: true }) };
  } catch (error) {
    if (error instanceof ListCsvError) throw new ListsFileError(path, error.line, error.reason);
    throw error;
  }
}

/**
 * This process's own mirror writes, one at a time; processes and containers are ordered by the
 * lists file's one lock (`<target>.lock`, file-list-store.ts's takeLock: an owner token with a
 * lease), the same lock the file store's writers take.
 */
let processQueue: Promise<unknown> = Promise.resolve();

/**
 * Writes `state` to the file unless the file already holds this version or a newer one (another
 * instance's state, which includes this one's changes). Returns the version the file holds after.
 */
export function writeMirror(
  path: string,
  state: { version: number; streamId: string; rules: Iterable<ListRule> },
): Promise<number> {
  const run = processQueue.then(async () => {
    const target = await resolveListsPath(path);
    const lock = await takeLock(`${target}.lock`);
    try {
      const held = await readMirrorVersion(target);
      if (held >= state.version) return held;
      const header = `${HEADER_PREFIX} version=${state.version} stream=${state.streamId}\n${FILE_COLUMNS.join(',')}`;
      const chunks = await formatCsvChunksInSlices(state.rules, (rule) => formatRuleLine(rule, FILE_COLUMNS), header);
      await writeFileAtomically(target, chunks);
      return state.version;
    } finally {
      await lock.release();
    }
  });
  processQueue = run.catch(() => undefined);
  return run;
}
