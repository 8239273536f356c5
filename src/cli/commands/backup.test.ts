// `phone-rep backup` and `phone-rep restore` in-process on the file stores (lists.csv,
// tokens.json and reports.jsonl in a directory of the test's own), with a running instance's
// stores following the files: the round-trip of tokens and votes, expired votes left out at
// restore, a version 1 file (lists only) still restored. The shipped command on the lists is
// test/cli/backup-restore.test.ts; the same scenarios on Redis, redis-backup.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import {
  expectExpiredVotesDropped,
  expectRoundTrip,
  expectVersionOneRestores,
} from '../../../test/support/backup-scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'phone-rep-backup-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { LISTS_FILE: join(dir, 'lists.csv') };
const backupFile = join(dir, 'backup.json');

describe('phone-rep backup and restore of the reporters’ tokens and votes, on the file stores', () => {
  it('round-trips the tokens with their hashes and the votes, replacing what changed since, a running instance following', async () => {
    await expectRoundTrip(env, backupFile);
  });

  it('leaves out the votes past REPORT_RETENTION_DAYS at restore time', async () => {
    await expectExpiredVotesDropped(env, backupFile);
  });

  it('restores a backup of version 1 (lists only), leaving the tokens and votes as they are', async () => {
    await expectVersionOneRestores(env, dir);
  });
});
