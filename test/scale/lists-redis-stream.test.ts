// The lists' store on Redis, part by part (issue 44, finding 1 and "the lists' store on Redis"):
// it uses the client it is given and opens one connection of its own, for the blocking XREAD;
// changes reach other instances through a stream trimmed to a bound; a gap in the versions
// makes a full read; when Redis comes back empty it writes back what it holds, and says so in a
// log line that holds no number.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';
import { createRedisClient, type RedisClient } from '../../src/infra/redis/redis-client.js';
import { openRedisListStore } from '../../src/infra/lists/redis-list-store.js';
import type { ListStore } from '../../src/infra/lists/list-store.js';
import { testNumberingPlan } from '../../harness/servers.js';
import { startOwnRedis } from '../support/redis-server.js';
import { connectAdmin, deleteKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';

const CREATED = '2026-01-01T00:00:00.000Z';

function recordingLogger(): {
  lines: Array<{ level: string; obj: object; msg: string }>;
  logger: {
    info: (obj: object, msg: string) => void;
    warn: (obj: object, msg: string) => void;
    error: (obj: object, msg: string) => void;
  };
} {
  const lines: Array<{ level: string; obj: object; msg: string }> = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('the lists store on the shared Redis', () => {
  const prefix = uniqueKeyPrefix('lists-stream');
  const admin = connectAdmin();
  const clients: RedisClient[] = [];
  const stores: ListStore[] = [];
  const client = async (): Promise<RedisClient> => {
    const created = createRedisClient(TEST_REDIS_URL, { keyPrefix: prefix });
    clients.push(created);
    await waitFor(() => created.isReady());
    return created;
  };
  const open = async (options: { streamMaxLength?: number } = {}): Promise<ListStore> => {
    const store = await openRedisListStore({ client: await client(), ...options });
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await Promise.all(clients.map((created) => created.quit()));
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('reaches another instance through the stream, which stays within its bound', { timeout: 30_000 }, async () => {
    const one = await open({ streamMaxLength: 100 });
    const two = await open({ streamMaxLength: 100 });
    for (let at = 0; at < 400; at += 1)
      await one.put({ rule: `+3316300${String(at).padStart(4, '0')}`, list: 'block', createdAt: CREATED });
    await waitFor(() => two.storedRules().length === 400);
    // MAXLEN ~ trims whole nodes (100 entries each by default): about the bound, never the 400.
    expect(await admin.xlen(`${prefix}{lists}:changes`)).toBeLessThanOrEqual(200);
    // Version 1 when the first instance set up the lists in an empty Redis, then one per change.
    expect(await admin.get(`${prefix}{lists}:version`)).toBe('401');
  });

  it('reads everything again when the next change is not the next version (a change it missed)', async () => {
    const store = await open();
    await waitFor(async () => store.storedRules().length === (await admin.hlen(`${prefix}{lists}:rules`)));
    // A change that reached Redis without its stream entry (as if trimmed away), then the next one.
    await admin.hset(`${prefix}{lists}:rules`, '+33499000001', JSON.stringify({ list: 'allow', createdAt: CREATED }));
    const version = await admin.incr(`${prefix}{lists}:version`);
    await admin.hset(`${prefix}{lists}:rules`, '+33499000002', JSON.stringify({ list: 'block', createdAt: CREATED }));
    await admin.incr(`${prefix}{lists}:version`);
    await admin.xadd(
      `${prefix}{lists}:changes`,
      '*',
      'v',
      String(version + 1),
      'op',
      'put',
      'rule',
      '+33499000002',
      'value',
      JSON.stringify({ list: 'block', createdAt: CREATED }),
    );
    await waitFor(() => store.match('+33499000001')?.list === 'allow');
    expect(store.match('+33499000002')).toMatchObject({ list: 'block' });
  });
});

describe('the lists store on a Redis of its own', () => {
  it('opens one connection besides the client it is given: the blocking reader', async () => {
    const redis = await startOwnRedis({ persistent: false });
    const admin = new Redis(redis.url);
    const shared = createRedisClient(redis.url, { keyPrefix: 'phonerep:' });
    try {
      await waitFor(() => shared.isReady());
      const before = (await admin.client('LIST')) as string;
      const store = await openRedisListStore({ client: shared });
      await store.put({ rule: '+33163000001', list: 'block', createdAt: CREATED });
      await waitFor(async () => ((await admin.client('LIST')) as string).includes('cmd=xread'));
      const after = (await admin.client('LIST')) as string;
      expect(after.trim().split('\n').length - before.trim().split('\n').length).toBe(1);
      await store.close();
    } finally {
      await shared.quit();
      admin.disconnect();
      await redis.close();
    }
  });

  it(
    'when Redis comes back empty, keeps its rules, writes them back, and logs it without a number',
    { timeout: 30_000 },
    async () => {
      const redis = await startOwnRedis({ persistent: false });
      const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      admin.on('error', () => undefined);
      const shared = createRedisClient(redis.url, { keyPrefix: 'phonerep:' });
      const { lines, logger } = recordingLogger();
      const context = { parsePhoneNumber: createPhoneNumberParser(testNumberingPlan(), 'FR'), defaultRegion: 'FR' };
      try {
        await waitFor(() => shared.isReady());
        const store = await openRedisListStore({
          client: shared,
          logger,
          file: { path: '/nonexistent/lists.csv', context, mirror: false },
        });
        await store.put({ rule: '+33612000001', list: 'allow', label: 'Boss', createdAt: CREATED });
        await store.put({ rule: '+33164*', list: 'block', createdAt: CREATED });
        await redis.restart();
        // In force all along, never swapped for the empty set Redis came back with.
        expect(store.match('+33612000001')).toMatchObject({ list: 'allow', label: 'Boss' });
        await waitFor(async () => (await admin.hlen('phonerep:{lists}:rules').catch(() => 0)) === 2, 15_000);
        expect(store.match('+33612000001')).toMatchObject({ list: 'allow', label: 'Boss' });
        expect(store.storedRules()).toHaveLength(2);
        const restored = lines.filter((line) => line.msg.includes('Redis had lost the lists'));
        expect(restored).toHaveLength(1);
        expect(restored[0]?.level).toBe('warn');
        for (const line of lines) expect(`${line.msg} ${JSON.stringify(line.obj)}`).not.toMatch(/612000001|33164|Boss/);
        await store.close();
      } finally {
        await shared.quit();
        admin.disconnect();
        await redis.close();
      }
    },
  );

  it(
    'loses no change acknowledged by writers busy on both instances while Redis restarts empty',
    { timeout: 60_000 },
    async () => {
      const redis = await startOwnRedis({ persistent: false });
      const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      admin.on('error', () => undefined);
      const context = { parsePhoneNumber: createPhoneNumberParser(testNumberingPlan(), 'FR'), defaultRegion: 'FR' };
      const path = join(mkdtempSync(join(tmpdir(), 'phone-rep-busy-')), 'lists.csv');
      const open = (): Promise<ListStore> =>
        openRedisListStore({
          client: createRedisClient(redis.url, { keyPrefix: 'phonerep:' }),
          ownsClient: true,
          file: { path, context, mirror: true },
        });
      const [one, two] = await Promise.all([open(), open()]);
      const acknowledged: string[] = [];
      let writing = true;
      const writer = async (store: ListStore, series: number): Promise<void> => {
        for (let at = 0; writing; at += 1) {
          const rule = `+331630${series}${String(at).padStart(4, '0')}`;
          try {
            await store.put({ rule, list: 'block', createdAt: CREATED });
            acknowledged.push(rule);
          } catch {
            // Refused (Redis restarting): not acknowledged, so it may or may not be kept.
            await nextTurn();
          }
        }
      };
      try {
        const writers = [writer(one, 1), writer(one, 2), writer(two, 3), writer(two, 4)];
        await waitFor(() => acknowledged.length >= 40, 15_000);
        await redis.restart();
        const before = acknowledged.length;
        await waitFor(() => acknowledged.length >= before + 40, 20_000);
        writing = false;
        await Promise.all(writers);
        const missingFrom = (rules: Iterable<string>): string[] => {
          const held = new Set(rules);
          return acknowledged.filter((rule) => !held.has(rule));
        };
        for (const store of [one, two]) {
          await waitFor(() => missingFrom(store.storedRules().map((rule) => rule.rule)).length === 0, 15_000).catch(
            () => undefined,
          );
          expect(missingFrom(store.storedRules().map((rule) => rule.rule))).toEqual([]);
        }
        expect(missingFrom(await admin.hkeys('phonerep:{lists}:rules'))).toEqual([]);
      } finally {
        writing = false;
        await Promise.all([one.close(), two.close()]);
        admin.disconnect();
        await redis.close();
      }
    },
  );
});
