// `phone-rep backup [FILE]` and `phone-rep restore FILE`: everything of record the service holds
// (the operator's lists, the reporters' tokens with their hashes, the reporters' votes, and the
// operator's dismissals of reported numbers) in one versioned file, and back (docs/operations.md,
// "Back up").
// All work on the stores the configuration names, as the service does: the files beside the
// lists file, or Redis with REDIS_URL. A restore replaces: each section the file holds becomes
// exactly the file's, in one change of its store (the file stores: one atomic write under the
// file's lock; Redis: one script and one change every instance follows, or for the dismissals,
// which every instance reads on each request, one MULTI), lists first, then tokens, then votes,
// then dismissals. Votes and dismissals past REPORT_RETENTION_DAYS at restore time are left out.
// A file of version 1 (lists only) restores the lists and leaves the tokens, votes and
// dismissals as they are; one of version 2 leaves the dismissals. A file of another format or
// version, or with one bad entry, is refused whole (exit 2) before any store is touched.
// Exit codes: 0 done, 2 bad input (nothing changed), 1 a store could not be read or written.
import { listsLocationOf, loadConfig } from '../../config/config.js';
import { reportSettingsOf } from '../../composition.js';
import { BackupFileError, formatBackupLines, readBackup } from '../../domain/backup/backup-file.js';
import { writeFileAtomically } from '../../infra/lists/file-list-store.js';
import { MAX_RULES } from '../../infra/lists/list-store.js';
import { openOnRedis } from '../../infra/lists/open-list-store.js';
import type { RedisClient } from '../../infra/redis/redis-client.js';
import { openReportDismissals, type ReportDismissals } from '../../infra/reports/report-dismissals.js';
import { openReportStore, type ReportStore } from '../../infra/reports/report-store.js';
import { openTokenStore, type TokenStore } from '../../infra/reports/token-store.js';
import { defineCommand, readInput, UsageError, type CliIo } from '../command.js';
import { stripControls } from '../sanitize.js';
import { withListStore } from './list.js';

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;
const whereOf = (store: { kind: 'file' | 'redis'; location: string }): string =>
  `${store.kind === 'redis' ? 'Redis' : 'file'} ${store.location}`;

interface ReportingStores {
  tokens: TokenStore;
  reports: ReportStore;
  dismissals: ReportDismissals;
}

/**
 * Opens the tokens', the votes' and the dismissals' stores beside the lists (as the service
 * does), runs `use`, closes them.
 */
async function withReportingStores(
  env: Record<string, string | undefined>,
  io: CliIo,
  use: (stores: ReportingStores) => Promise<number>,
): Promise<number> {
  const config = loadConfig(env);
  const location = listsLocationOf(config);
  let tokens: TokenStore | undefined;
  let reports: ReportStore | undefined;
  // openReportDismissals opens no Redis client (the service gives it its own) and, given none, takes the file.
  let dismissalsClient: RedisClient | undefined;
  try {
    tokens = await openTokenStore(location, { watch: false });
    reports = await openReportStore(location, { settings: reportSettingsOf(config), watch: false });
    if (location.redis !== undefined)
      dismissalsClient = await openOnRedis(location.redis, location, undefined, (client) => Promise.resolve(client));
  } catch (error) {
    await reports?.close();
    await tokens?.close();
    io.err(
      stripControls(
        `the reporters' ${tokens === undefined ? 'tokens' : reports === undefined ? 'reports' : 'dismissals'} cannot be opened: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
    return 1;
  }
  const dismissals = openReportDismissals(location, {
    retentionDays: config.REPORT_RETENTION_DAYS,
    ...(dismissalsClient === undefined ? {} : { redisClient: dismissalsClient }),
  });
  try {
    return await use({ tokens, reports, dismissals });
  } finally {
    await dismissalsClient?.quit();
    await reports.close();
    await tokens.close();
  }
}

export const backupCommand = defineCommand({
  name: 'backup',
  usage: 'phone-rep backup [FILE]',
  summary: ['everything of record (lists, tokens, votes, dismissals) in one file or on stdout'],
  options: {},
  run({ positionals }, { io, env }) {
    const [file, ...extra] = positionals;
    if (extra.length > 0 || file === '') throw new UsageError();
    return withListStore('backup', env, io, async ({ store, where }) =>
      withReportingStores(env, io, async ({ tokens, reports, dismissals }) => {
        const rules = store.storedRules().sort((a, b) => (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
        const storedTokens = tokens
          .storedTokens()
          .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
        const votes = reports
          .allVotes()
          .sort((a, b) => (a.e164 === b.e164 ? (a.tokenId < b.tokenId ? -1 : 1) : a.e164 < b.e164 ? -1 : 1));
        const now = Date.now();
        const dismissed = [...(await dismissals.read(now))]
          .map(([e164, at]) => ({ e164, at }))
          .sort((a, b) => (a.e164 < b.e164 ? -1 : 1));
        const lines = formatBackupLines({
          createdAt: new Date(now).toISOString(),
          lists: { rules },
          tokens: storedTokens,
          reports: votes,
          dismissals: dismissed,
        });
        if (file === undefined || file === '-') {
          for (const line of lines) io.out(line);
        } else {
          // Labels are often people's names, votes are numbers of people who called: the owner's alone.
          await writeFileAtomically(
            file,
            lines.map((line) => `${line}\n`),
            { mode: 0o600 },
          );
        }
        io.err(
          `backed up ${plural(rules.length, 'rule')} (${where}), ${plural(storedTokens.length, 'token')} (${whereOf(tokens)}), ${plural(votes.length, 'vote')} (${whereOf(reports)}), ${plural(dismissed.length, 'dismissal')} (${whereOf(dismissals)})${file === undefined || file === '-' ? '' : ` to ${file}`}`,
        );
        return 0;
      }),
    );
  },
});

export const restoreCommand = defineCommand({
  name: 'restore',
  usage: 'phone-rep restore FILE|-',
  summary: ["puts a backup back: lists, tokens, votes and dismissals become exactly the file's"],
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
    const { tokens: backedTokens, reports: backedVotes, dismissals: backedDismissals } = backup;
    return withListStore('restore', env, io, async ({ store, where }) =>
      withReportingStores(env, io, async ({ tokens, reports, dismissals }) => {
        const { before } = await store.replaceRules(rules);
        io.out(
          `restored ${plural(rules.length, 'rule')} from the backup of ${backup.createdAt}, replacing the ${before} held (${where})`,
        );
        // A file of version 1 (made before the reporters' sections existed) leaves them as they are.
        if (backedTokens === undefined)
          io.out(`the backup holds no tokens (a file of version 1): the tokens held are left as they are`);
        if (backedVotes === undefined)
          io.out(`the backup holds no votes (a file of version 1): the votes held are left as they are`);
        if (backedTokens !== undefined) {
          const replaced = await tokens.replaceAll(backedTokens);
          io.out(
            `restored ${plural(backedTokens.length, 'token')}, replacing the ${replaced.before} held (${whereOf(tokens)})`,
          );
        }
        if (backedVotes !== undefined) {
          const replaced = await reports.replaceAll(backedVotes);
          io.out(
            `restored ${plural(backedVotes.length - replaced.dropped, 'vote')}, replacing the ${replaced.before} held; ${replaced.dropped} past REPORT_RETENTION_DAYS left out (${whereOf(reports)})`,
          );
        }
        // A file of version 1 or 2 (made before the dismissals were backed up) leaves them as they are.
        if (backedDismissals === undefined) {
          io.out(`the backup holds no dismissals (a file of version 1 or 2): the dismissals held are left as they are`);
        } else {
          const replaced = await dismissals.replaceAll(
            new Map(backedDismissals.map(({ e164, at }) => [e164, at])),
            Date.now(),
          );
          io.out(
            `restored ${plural(backedDismissals.length - replaced.dropped, 'dismissal')}, replacing the ${replaced.before} held; ${replaced.dropped} past REPORT_RETENTION_DAYS left out (${whereOf(dismissals)})`,
          );
        }
        return 0;
      }),
    );
  },
});
