// `phone-rep backup` and `phone-rep restore` in-process with REDIS_URL, on the real Redis under a
// key prefix of this file's own, with a running instance's stores following the same prefix:
// the scenarios of backup.test.ts (round-trip of tokens and votes, expired votes left out, a
// version 1 file restored) on the Redis stores. After the restore, Redis holds no vote key but
// the restored ones.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expectExpiredVotesDropped,
  expectRoundTrip,
  expectVersionOneRestores,
} from '../../../test/support/backup-scenario.js';
import { listKeys, TEST_REDIS_URL, useRedisTestClients } from '../../../test/support/redis.js';

const { prefix, admin } = useRedisTestClients('backup-cli');
const dir = mkdtempSync(join(tmpdir(), 'phone-rep-backup-redis-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, HASH_SECRET: 'test-secret-0123456789' };
const backupFile = join(dir, 'backup.json');

describe('phone-rep backup and restore of the reporters’ tokens and votes, on Redis', () => {
  it('round-trips the tokens with their hashes and the votes, replacing what changed since, a running instance following', async () => {
    await expectRoundTrip(env, backupFile);
    // The numbers voted on since the backup are gone from Redis, not only from memory.
    const numbers = (await listKeys(admin, `${prefix}{reports}:n:`)).map((key) => key.slice(prefix.length)).sort();
    expect(numbers).toEqual(['{reports}:n:+33162000001', '{reports}:n:+33612345678']);
    expect(await admin.zcard(`${prefix}{reports}:expiry`)).toBe(3);
  });

  it('leaves out the votes past REPORT_RETENTION_DAYS at restore time', async () => {
    await expectExpiredVotesDropped(env, backupFile);
    expect(await admin.exists(`${prefix}{reports}:n:+33612999999`)).toBe(0);
  });

  it('restores a backup of version 1 (lists only), leaving the tokens and votes as they are', async () => {
    await expectVersionOneRestores(env, dir);
  });
});
