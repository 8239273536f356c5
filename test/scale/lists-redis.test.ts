// The operator's lists on real Redis (REDIS_URL), two service instances sharing them: a change
// made on one is served by the other within a second; both adding 1,000 distinct rules at the
// same time lose none; the lists file is imported once, on start, only when Redis never held lists.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedisListStore } from '../../src/infra/lists/redis-list-store.js';
import { createRedisClient } from '../../src/infra/redis/redis-client.js';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';

import { healthyFakeSources } from '../../harness/lookup.js';
import { startTcpProxy } from '../../harness/loopback.js';
import { connectAdmin, deleteKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { startTestServer, testNumberingPlan, type TestServer } from '../../harness/servers.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const BEARER = { authorization: `Bearer ${TOKEN}` };
// With a body only: a JSON content type on the bodiless DELETE is answered 400.
const AUTH = { ...BEARER, 'content-type': 'application/json' };
const HEADER = 'rule,list,label,note,expiresAt,createdAt';
const context = { parsePhoneNumber: createPhoneNumberParser(testNumberingPlan(), 'FR'), defaultRegion: 'FR' };

describe('lists shared through Redis by two instances', () => {
  const prefix = uniqueKeyPrefix('lists');
  const admin = connectAdmin();
  let one: TestServer;
  let two: TestServer;
  let file: string;

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    writeFileSync(file, `${HEADER}\n+33163*,block,From file,,,2026-01-01T00:00:00.000Z\n`);
    const env = {
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      ADMIN_TOKEN: TOKEN,
      LISTS_FILE: file,
      RATE_LIMIT_MAX: '0',
    };
    [one, two] = await Promise.all([
      startTestServer({ env, overrides: { sources: healthyFakeSources() } }),
      startTestServer({ env, overrides: { sources: healthyFakeSources() } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([one.close(), two.close()]);
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  const verdict = async (server: TestServer, number: string): Promise<string> =>
    (await fetch(`${server.baseUrl}/api/phone/${number}/verdict`)).text();

  it('imported the lists file once, when Redis held none', async () => {
    expect(await admin.hlen(`${prefix}{lists}:rules`)).toBe(1);
    expect(await verdict(one, '0163001234')).toBe('block\n');
    expect(await verdict(two, '0163001234')).toBe('block\n');
    // A later start does not import it again, even once Redis holds no rule. The rule is removed
    // through an instance (as an operator would): a bare HDEL bumps no version, so the instances
    // would keep it until some later full read, and the count below would depend on that timing.
    const removed = await fetch(`${one.baseUrl}/admin/lists/rules/${encodeURIComponent('+33163*')}`, {
      method: 'DELETE',
      headers: BEARER,
    });
    expect(removed.status).toBe(204);
    expect(await admin.hlen(`${prefix}{lists}:rules`)).toBe(0);
    const seedFile = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    writeFileSync(seedFile, `${HEADER}\n+33199*,block,,,,2026-01-01T00:00:00.000Z\n`);
    const again = await openRedisListStore({
      client: createRedisClient(TEST_REDIS_URL, { keyPrefix: prefix }),
      ownsClient: true,
      watch: false,
      file: { path: seedFile, context, mirror: false },
    });
    try {
      expect(again.storedRules()).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it('a change made on one instance is served by the other within 1 s', async () => {
    const number = '0612000001';
    expect(await verdict(two, number)).toBe('block\n');
    await verdict(two, number); // now from the front cache
    const put = await fetch(`${one.baseUrl}/admin/lists/rules/${encodeURIComponent('+33612000001')}`, {
      method: 'PUT',
      headers: AUTH,
      body: '{"list":"allow"}',
    });
    expect(put.status).toBe(201);
    const changedAt = performance.now();
    let answer = await verdict(two, number);
    while (answer !== 'allow\n' && performance.now() - changedAt < 1000) answer = await verdict(two, number);
    expect(answer).toBe('allow\n');
    expect(performance.now() - changedAt).toBeLessThan(1000);
  });

  it('both adding 1,000 distinct rules at the same time lose none', { timeout: 60_000 }, async () => {
    // Each instance gets its 1,000 rules from 16 clients at once.
    const add = async (server: TestServer, first: number): Promise<number[]> => {
      const statuses: number[] = [];
      let next = 0;
      const client = async (): Promise<void> => {
        while (next < 1000) {
          const at = next;
          next += 1;
          const response = await fetch(
            `${server.baseUrl}/admin/lists/rules/${encodeURIComponent(`+3364${String(first + at).padStart(7, '0')}`)}`,
            { method: 'PUT', headers: AUTH, body: '{"list":"block"}' },
          );
          statuses.push(response.status);
        }
      };
      await Promise.all(Array.from({ length: 16 }, client));
      return statuses;
    };
    const [a, b] = await Promise.all([add(one, 1_000_000), add(two, 2_000_000)]);
    expect([...a, ...b].every((status) => status === 201)).toBe(true);
    expect(await admin.hlen(`${prefix}{lists}:rules`)).toBe(2001);
    const counted = async (server: TestServer) =>
      ((await (await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: AUTH })).json()) as unknown[]).length;
    const deadline = performance.now() + 2000;
    while ((await counted(one)) !== 2001 || (await counted(two)) !== 2001) {
      if (performance.now() > deadline) break;
    }
    expect(await counted(one)).toBe(2001);
    expect(await counted(two)).toBe(2001);
  });
});

describe('lists on a Redis that is down when the instance starts', () => {
  const prefix = uniqueKeyPrefix('lists-late');
  const admin = connectAdmin();
  afterAll(async () => {
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('starts with no rule instead of failing, then seeds and applies the lists once Redis answers', async () => {
    const proxy = await startTcpProxy(6379);
    proxy.setMode('cut');
    const seedFile = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    writeFileSync(seedFile, `${HEADER}\n+33199*,block,,,,2026-01-01T00:00:00.000Z\n`);
    const client = createRedisClient(proxy.url, { keyPrefix: prefix });
    const store = await openRedisListStore({
      client,
      ownsClient: true,
      file: { path: seedFile, context, mirror: false },
    });
    try {
      // Redis unreachable: the store opened, with nothing in force and nothing written.
      expect(store.match('+33199001234')).toBeNull();
      expect(await admin.exists(`${prefix}{lists}:rules`)).toBe(0);
      proxy.setMode('pass');
      // ioredis reconnects on its own; the file is then imported (Redis never held lists) and read.
      await waitFor(() => store.match('+33199001234') !== null, 15_000);
      expect(store.match('+33199001234')).toMatchObject({ list: 'block', rule: '+33199*' });
      expect(await admin.hlen(`${prefix}{lists}:rules`)).toBe(1);
    } finally {
      await store.close();
      await proxy.close();
    }
  });
});
