// `phone-rep backup` and `phone-rep restore` in-process on the file stores (lists.csv,
// tokens.json, reports.jsonl and reports-dismissed.json in a directory of the test's own), with a
// running instance's stores following the files: the round-trip of tokens, votes and dismissals,
// expired votes and dismissals left out at restore, files of version 1 (lists only) and 2 (no
// dismissals) still restored, a bad dismissal refusing the whole file. The shipped command on the lists is
// test/cli/backup-restore.test.ts; the same scenarios on Redis, redis-backup.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import {
  expectBadDismissalRefused,
  expectExpiredVotesDropped,
  expectRoundTrip,
  expectVersionOneRestores,
  expectVersionTwoRestores,
} from '../../../test/support/backup-scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'phone-rep-backup-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { LISTS_FILE: join(dir, 'lists.csv') };
const backupFile = join(dir, 'backup.json');

describe('phone-rep backup and restore of the reporters’ tokens and votes and the operator’s dismissals, on the file stores', () => {
  it('round-trips the tokens with their hashes, the votes and the dismissals, replacing what changed since, a running instance following', async () => {
    await expectRoundTrip(env, backupFile);
  });

  it('leaves out the votes and dismissals past REPORT_RETENTION_DAYS at restore time', async () => {
    await expectExpiredVotesDropped(env, backupFile);
  });

  it('restores a backup of version 1 (lists only), leaving the tokens, votes and dismissals as they are', async () => {
    await expectVersionOneRestores(env, dir);
  });

  it('restores a backup of version 2 (before the dismissals), leaving the dismissals as they are', async () => {
    await expectVersionTwoRestores(env, backupFile);
  });

  it('refuses a file with one bad dismissal whole, changing nothing', async () => {
    await expectBadDismissalRefused(env, backupFile);
  });
});
