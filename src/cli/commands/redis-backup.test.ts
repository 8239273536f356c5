// `phone-rep backup` and `phone-rep restore` in-process with REDIS_URL, on the real Redis under a
// key prefix of this file's own, with a running instance's stores following the same prefix:
// the scenarios of backup.test.ts (round-trip of tokens, votes and dismissals, expired votes and
// dismissals left out, files of version 1 and 2 restored, a bad dismissal refused) on the Redis
// stores. After the restore, Redis holds no vote key and no dismissal but the restored ones.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expectBadDismissalRefused,
  expectExpiredVotesDropped,
  expectRoundTrip,
  expectVersionOneRestores,
  expectVersionTwoRestores,
} from '../../../test/support/backup-scenario.js';
import { listKeys, TEST_REDIS_URL, useRedisTestClients } from '../../../test/support/redis.js';

const { prefix, admin } = useRedisTestClients('backup-cli');
const dir = mkdtempSync(join(tmpdir(), 'phone-rep-backup-redis-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, HASH_SECRET: 'test-secret-0123456789' };
const backupFile = join(dir, 'backup.json');

describe('phone-rep backup and restore of the reporters’ tokens and votes and the operator’s dismissals, on Redis', () => {
  it('round-trips the tokens with their hashes, the votes and the dismissals, replacing what changed since, a running instance following', async () => {
    await expectRoundTrip(env, backupFile);
    // The numbers voted on since the backup are gone from Redis, not only from memory.
    const numbers = (await listKeys(admin, `${prefix}{reports}:n:`)).map((key) => key.slice(prefix.length)).sort();
    expect(numbers).toEqual(['{reports}:n:+33162000001', '{reports}:n:+33612345678']);
    expect(await admin.zcard(`${prefix}{reports}:expiry`)).toBe(3);
    // The dismissal made since the backup is gone from Redis too, the one backed up is back at its time.
    const { dismissals } = JSON.parse(readFileSync(backupFile, 'utf8')) as { dismissals: Array<{ at: string }> };
    expect(await admin.zrange(`${prefix}{reports}:dismissed`, 0, -1, 'WITHSCORES')).toEqual([
      '+33612345678',
      String(Date.parse(dismissals[0]?.at ?? '')),
    ]);
  });

  it('leaves out the votes and dismissals past REPORT_RETENTION_DAYS at restore time', async () => {
    await expectExpiredVotesDropped(env, backupFile);
    expect(await admin.exists(`${prefix}{reports}:n:+33612999999`)).toBe(0);
    expect(await admin.zscore(`${prefix}{reports}:dismissed`, '+33612999999')).toBeNull();
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
