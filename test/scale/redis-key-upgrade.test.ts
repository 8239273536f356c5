// An upgrade from the key layout before the hash tags, through the service itself: two instances
// start at once on a Redis holding the lists under their former names (written here as that
// version wrote them), with a lists file beside. Both apply the rule Redis held, so the move came
// before their first read: had they read first, they would have found no lists in Redis and
// imported the file instead.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { connectAdmin, deleteKeys, listKeys, TEST_REDIS_URL, uniqueKeyPrefix } from '../support/redis.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const HEADER = 'rule,list,label,note,expiresAt,createdAt';

describe('an upgrade from the untagged Redis keys', () => {
  const prefix = uniqueKeyPrefix('key-upgrade');
  const admin = connectAdmin();
  let servers: TestServer[] = [];

  beforeAll(async () => {
    // The lists as the previous version left them: one block rule, version 1, one change.
    const value = JSON.stringify({ list: 'block', label: 'Kept', createdAt: '2026-01-01T00:00:00.000Z' });
    await admin.hset(`${prefix}lists:rules`, '+33163*', value);
    await admin.set(`${prefix}lists:version`, '1');
    await admin.set(`${prefix}lists:epoch`, 'a1b2c3');
    await admin.xadd(
      `${prefix}lists:changes`,
      '*',
      'v',
      '1',
      'e',
      'a1b2c3',
      'op',
      'put',
      'rule',
      '+33163*',
      'value',
      value,
    );
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-key-upgrade-')), 'lists.csv');
    writeFileSync(file, `${HEADER}\n+33164*,block,Only in the file,,,2026-01-01T00:00:00.000Z\n`);
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, LISTS_FILE: file, RATE_LIMIT_MAX: '0' };
    servers = await Promise.all([
      startTestServer({ env, overrides: { sources: healthyFakeSources() } }),
      startTestServer({ env, overrides: { sources: healthyFakeSources() } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  /** The list rule deciding for `number` (`meta.list`), null when none. */
  const listRule = async (server: TestServer, number: string): Promise<unknown> =>
    ((await (await fetch(`${server.baseUrl}/api/phone/${number}`)).json()) as { meta: { list: unknown } }).meta.list;

  it('moves the lists before either instance reads them: both apply the rule Redis held, not the file’s', async () => {
    for (const server of servers) {
      expect(await listRule(server, '0163001234')).toMatchObject({ list: 'block', rule: '+33163*' });
      expect(await listRule(server, '0164001234')).toBeNull();
    }
    const names = (await listKeys(admin, prefix)).map((key) => key.slice(prefix.length)).sort();
    expect(names.filter((name) => name.startsWith('lists:'))).toEqual([]);
    expect(names).toEqual(
      expect.arrayContaining(['{lists}:rules', '{lists}:version', '{lists}:changes', '{lists}:epoch']),
    );
    expect(await admin.get(`${prefix}{lists}:version`)).toBe('1');
  });
});
