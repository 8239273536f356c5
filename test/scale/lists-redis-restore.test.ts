// The lists written back after Redis lost them stay: the write-back moves a staged hash (which
// expires after two minutes if left behind) in place of the rules, and RENAME keeps a key's
// expiry, so the rules must have none afterwards, or Redis would lose them again two minutes on.
// The same for a restore, which is also written to the mirror file (LISTS_FILE beside REDIS_URL).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';
import { readMirror } from '../../src/infra/lists/lists-file-mirror.js';
import { openRedisListStore } from '../../src/infra/lists/redis-list-store.js';
import { testNumberingPlan } from '../../harness/servers.js';
import { deleteKeys, useRedisTestClients } from '../support/redis.js';

describe('the lists written back after a Redis loss', () => {
  const { prefix, admin, readyClient } = useRedisTestClients('lists-writeback');
  const stores: Array<{ close(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it("have no expiry: the staged copy's is taken off", async () => {
    const store = await openRedisListStore({ client: await readyClient(), watch: false });
    stores.push(store);
    await store.put({ rule: '+33162*', list: 'block', createdAt: '2026-11-28T00:00:00.000Z' });
    await store.put({ rule: '+33163*', list: 'block', createdAt: '2026-11-28T00:00:00.000Z' });
    await deleteKeys(admin, prefix);
    // The next full read finds Redis without the lists, and writes back the rules this instance holds.
    await store.refresh();
    expect(await admin.hlen(`${prefix}{lists}:rules`)).toBe(2);
    expect(await admin.pttl(`${prefix}{lists}:rules`)).toBe(-1);
  });

  it('after a restore (a replace) have no expiry either', async () => {
    const store = await openRedisListStore({ client: await readyClient(), watch: false });
    stores.push(store);
    const { before } = await store.replaceRules([
      { rule: '+33199*', list: 'allow', createdAt: '2026-11-28T00:00:00.000Z' },
    ]);
    expect(before).toBe(2);
    expect(await admin.hkeys(`${prefix}{lists}:rules`)).toEqual(['+33199*']);
    expect(await admin.pttl(`${prefix}{lists}:rules`)).toBe(-1);
    expect((await store.replaceRules([])).before).toBe(1);
    expect(await admin.exists(`${prefix}{lists}:rules`)).toBe(0);
  });

  it('after a restore with LISTS_FILE set, are in the mirror file before the restore returns', async () => {
    const context = { parsePhoneNumber: createPhoneNumberParser(testNumberingPlan(), 'FR'), defaultRegion: 'FR' };
    const path = join(mkdtempSync(join(tmpdir(), 'phone-rep-restore-mirror-')), 'lists.csv');
    const store = await openRedisListStore({
      client: await readyClient(),
      watch: false,
      file: { path, context, mirror: true },
    });
    stores.push(store);
    await store.put({ rule: '+33170*', list: 'block', createdAt: '2026-11-28T00:00:00.000Z' });
    const restored = [
      { rule: '+33171*', list: 'block' as const, label: 'A', createdAt: '2026-11-28T00:00:00.000Z' },
      {
        rule: '+33612345678',
        list: 'allow' as const,
        note: 'n',
        createdAt: '2026-11-28T00:00:00.000Z',
        expiresAt: '2020-01-01T00:00:00.000Z',
      },
    ];
    await store.replaceRules(restored);
    const mirror = await readMirror(path, context);
    expect(mirror.version).toBe(Number(await admin.get(`${prefix}{lists}:version`)));
    expect(mirror.rules.sort((a, b) => (a.rule < b.rule ? -1 : 1))).toEqual(restored);
  });
});
