// Following a file that other processes replace (the lists', the reports' and the tokens' files):
// its directory is watched, since a watch on the file itself, or on a link's own directory, does
// not see the file replaced by a rename, and a poll reads it every so often anyway, for the file
// systems whose watch says nothing (network file systems, some containers). A directory that does
// not exist yet (created on the first write) or cannot be watched is left to the poll.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface FileWatch {
  close(): void;
}

/** Calls `reload` when the directory says the file changed, and every `pollMs` in any case. */
export function watchFileWithPoll(path: string, reload: () => unknown, pollMs: number): FileWatch {
  let watcher: FSWatcher | undefined;
  const name = basename(path);
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
      if (filename === null || filename === name) void reload();
    });
    watcher.on('error', () => {
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    watcher = undefined; // no directory yet, or not watchable: the poll sees the file
  }
  const poll = setInterval(() => void reload(), pollMs);
  poll.unref();
  return {
    close() {
      watcher?.close();
      clearInterval(poll);
    },
  };
}
