// `phone-rep backup [FILE]` and `phone-rep restore FILE`: everything of record the service holds
// (today the operator's lists) in one versioned file, and back (docs/operations.md, "Back up").
// Both work on the store the configuration names, as the service does: the lists file, or Redis
// with REDIS_URL. A restore replaces: the lists become exactly the file's, in one change
// (the file store: one atomic write under the file's lock; Redis: one script and one `reload`
// change that every instance follows). A file of another format or version, or with one bad
// rule, is refused whole (exit 2) before the store is touched.
// Exit codes: 0 done, 2 bad input (nothing changed), 1 the store could not be read or written.
import { BackupFileError, formatBackupLines, readBackup } from '../../domain/backup/backup-file.js';
import { writeFileAtomically } from '../../infra/lists/file-list-store.js';
import { MAX_RULES } from '../../infra/lists/list-store.js';
import { defineCommand, readInput, UsageError } from '../command.js';
import { withListStore } from './list.js';

export const backupCommand = defineCommand({
  name: 'backup',
  usage: 'phone-rep backup [FILE]',
  summary: ['everything of record (the lists) in one file or on stdout'],
  options: {},
  run({ positionals }, { io, env }) {
    const [file, ...extra] = positionals;
    if (extra.length > 0 || file === '') throw new UsageError();
    return withListStore('backup', env, io, async ({ store, where }) => {
      const rules = store.storedRules().sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
      const lines = formatBackupLines({ createdAt: new Date().toISOString(), lists: { rules } });
      if (file === undefined || file === '-') {
        for (const line of lines) io.out(line);
      } else {
        // The lists' labels are often people's names: the file is the owner's alone.
        await writeFileAtomically(
          file,
          lines.map((line) => `${line}\n`),
          { mode: 0o600 },
        );
      }
      io.err(
        `backed up ${rules.length} rule${rules.length === 1 ? '' : 's'} (${where})${file === undefined || file === '-' ? '' : ` to ${file}`}`,
      );
      return 0;
    });
  },
});

export const restoreCommand = defineCommand({
  name: 'restore',
  usage: 'phone-rep restore FILE|-',
  summary: ["puts a backup back: the lists become exactly the file's"],
  options: {},
  async run({ positionals }, { io, env }) {
    const [source, ...extra] = positionals;
    if (source === undefined || source === '' || extra.length > 0) throw new UsageError();
    const text = await readInput(source, io);
    let backup;
    try {
      backup = readBackup(text, { maxRules: MAX_RULES });
    } catch (error) {
      if (error instanceof BackupFileError)
        throw new UsageError(`${source === '-' ? 'stdin' : source}: ${error.message}; nothing was restored`, {
          showUsage: false,
        });
      throw error;
    }
    const { rules } = backup.lists;
    return withListStore('restore', env, io, async ({ store, where }) => {
      const { before } = await store.replaceRules(rules);
      io.out(
        `restored ${rules.length} rule${rules.length === 1 ? '' : 's'} from the backup of ${backup.createdAt}, replacing the ${before} held (${where})`,
      );
      return 0;
    });
  },
});
