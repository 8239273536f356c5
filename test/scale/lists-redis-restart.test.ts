// The operator's lists through restarts of a real Redis and of the instances (issue 44, finding
// 1): two service instances on a Redis of the test's own (a child redis-server, never the
// shared one), LISTS_FILE beside REDIS_URL as compose.yaml sets it. The orders: Redis alone;
// Redis, then each instance in turn; Redis and both instances at once. After each, every
// change the admin API acknowledged (201, 200, 204) is in force on every instance, and Redis
// holds the lists again. Run once with Redis persisting (append-only file, as compose runs it)
// and once with a Redis that comes back empty.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.js';
import { waitFor } from '../support/redis.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const BEARER = { authorization: `Bearer ${TOKEN}` };
const JSON_BODY = { ...BEARER, 'content-type': 'application/json' };
const PREFIX = 'phonerep:';
/** The household's boss: allowed by the operator, blocked on its score without the rule. */
const BOSS = '+33612000001';

type Expected = Map<string, 'allow' | 'block'>;

describe.each([
  { persistent: true, label: 'persists (append-only file)' },
  { persistent: false, label: 'comes back empty' },
])('lists on a Redis that $label, through restarts', ({ persistent }) => {
  let redis: OwnRedis;
  let admin: Redis;
  let env: Record<string, string>;
  const instances: TestServer[] = [];
  const expected: Expected = new Map();
  let serial = 0;

  const startInstance = (): Promise<TestServer> =>
    startTestServer({ env, overrides: { sources: healthyFakeSources() } });

  beforeAll(async () => {
    redis = await startOwnRedis({ persistent });
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-restart-')), 'lists.csv');
    env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: PREFIX, ADMIN_TOKEN: TOKEN, LISTS_FILE: file, RATE_LIMIT_MAX: '0' };
    instances.push(...(await Promise.all([startInstance(), startInstance()])));
    await put(0, BOSS, 'allow');
    await changeSome();
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    admin.disconnect();
    await redis.close();
  });

  /** A change through the admin API, sent again until acknowledged (a 503 while Redis comes back is a refusal, not an acknowledgement). */
  async function send(at: number, method: 'PUT' | 'DELETE', rule: string, list?: 'allow' | 'block'): Promise<number> {
    let status = 0;
    await waitFor(async () => {
      const instance = instances[at];
      if (instance === undefined) throw new Error('no such instance');
      const response = await fetch(`${instance.baseUrl}/admin/lists/rules/${encodeURIComponent(rule)}`, {
        method,
        headers: method === 'PUT' ? JSON_BODY : BEARER,
        ...(method === 'PUT' ? { body: JSON.stringify({ list }) } : {}),
      });
      await response.arrayBuffer();
      status = response.status;
      return status !== 503;
    }, 15_000);
    return status;
  }

  async function put(at: number, rule: string, list: 'allow' | 'block'): Promise<void> {
    expect([200, 201]).toContain(await send(at, 'PUT', rule, list));
    expected.set(rule, list);
  }

  async function remove(at: number, rule: string): Promise<void> {
    expect(await send(at, 'DELETE', rule)).toBe(204);
    expected.delete(rule);
  }

  /** A few changes on each instance: new rules on both, one replaced, one removed. */
  async function changeSome(): Promise<void> {
    const first = `+3316300${String((serial += 1)).padStart(4, '0')}`;
    const second = `+3316400${String((serial += 1)).padStart(4, '0')}`;
    const third = `+3316500${String((serial += 1)).padStart(4, '0')}`;
    await put(0, first, 'block');
    await put(1, second, 'block');
    await put(1, third, 'allow');
    await put(0, second, 'allow');
    await remove(0, third);
  }

  async function rulesOn(instance: TestServer): Promise<Expected> {
    const response = await fetch(`${instance.baseUrl}/admin/lists/rules`, { headers: BEARER });
    const rules = (await response.json()) as Array<{ rule: string; list: 'allow' | 'block' }>;
    return new Map(rules.map((rule) => [rule.rule, rule.list]));
  }

  /** Every acknowledged change in force on every instance, the boss allowed, and Redis holding them all. */
  async function expectEveryChangeKept(): Promise<void> {
    const want = new Map([...expected].sort());
    const redisHolds = async (): Promise<Expected> => {
      const flat = await admin.hgetall(`${PREFIX}{lists}:rules`).catch(() => ({}));
      return new Map(
        Object.entries(flat).map(([rule, json]) => [rule, (JSON.parse(json) as { list: 'allow' | 'block' }).list]),
      );
    };
    const sorted = (map: Expected): Expected => new Map([...map].sort());
    await waitFor(
      async () => JSON.stringify([...sorted(await redisHolds())]) === JSON.stringify([...want]),
      15_000,
    ).catch(() => undefined);
    expect(sorted(await redisHolds())).toEqual(want);
    for (const instance of instances) {
      await waitFor(
        async () => JSON.stringify([...sorted(await rulesOn(instance))]) === JSON.stringify([...want]),
        15_000,
      ).catch(() => undefined);
      expect(sorted(await rulesOn(instance))).toEqual(want);
      expect(await (await fetch(`${instance.baseUrl}/api/phone/${encodeURIComponent(BOSS)}/verdict`)).text()).toBe(
        'allow\n',
      );
    }
  }

  async function restartInstance(at: number): Promise<void> {
    await instances[at]?.close();
    instances[at] = await startInstance();
  }

  it('Redis restarted alone', { timeout: 60_000 }, async () => {
    await redis.restart();
    await expectEveryChangeKept();
    await changeSome();
    await expectEveryChangeKept();
  });

  it('Redis restarted, then each instance in turn', { timeout: 60_000 }, async () => {
    await redis.restart();
    await changeSome();
    await restartInstance(0);
    await expectEveryChangeKept();
    await changeSome();
    await restartInstance(1);
    await expectEveryChangeKept();
    await changeSome();
    await expectEveryChangeKept();
  });

  it('Redis and both instances restarted at once', { timeout: 60_000 }, async () => {
    await Promise.all([redis.kill(), ...instances.map((instance) => instance.close())]);
    const [, one, two] = await Promise.all([redis.start(), startInstance(), startInstance()]);
    instances.splice(0, 2, one, two);
    await expectEveryChangeKept();
    await changeSome();
    await expectEveryChangeKept();
  });
});
