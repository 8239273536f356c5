import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisClient, DEFAULT_COMMAND_TIMEOUT_MS, type RedisClient } from '../redis/redis-client.js';
import {
  connectAdmin,
  deleteKeys,
  expectCountKeptThroughOutage,
  listKeys,
  recordCommands,
  TEST_REDIS_URL,
  uniqueKeyPrefix,
  waitFor,
} from '../../../test/support/redis.js';
import { startTcpProxy, type TcpProxy } from '../../../harness/loopback.js';
import { createRedisRateLimitStore } from './redis-rate-limit-store.js';
import { createMemoryRateLimitStore } from './rate-limit-store.js';

const prefix = uniqueKeyPrefix('ratelimit');
const admin = connectAdmin();
const clients: RedisClient[] = [];

function newClient(url = TEST_REDIS_URL): RedisClient {
  const client = createRedisClient(url, { keyPrefix: prefix });
  clients.push(client);
  return client;
}

async function readyClient(url = TEST_REDIS_URL): Promise<RedisClient> {
  const client = newClient(url);
  await waitFor(() => client.isReady());
  return client;
}

afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

describe('Redis sliding-log rate limit', () => {
  it('lets exactly `limit` requests through in one window and refuses the next, with the same decision shape as memory', async () => {
    const store = createRedisRateLimitStore({ client: await readyClient() });
    const decisions = [];
    for (let i = 0; i < 6; i += 1) decisions.push(await store.hit('exact', 5, 60_000));
    expect(decisions.slice(0, 5).map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    const refused = decisions[5];
    expect(refused).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
    expect(refused?.resetMs).toBeGreaterThan(59_000);
    expect(refused?.resetMs).toBeLessThanOrEqual(60_000);
  });

  // The log holds accept times from Redis's own clock (TIME): rather than wait for real time to
  // pass, the test moves the accepts already logged back in time, as if they had been made earlier.
  async function ageLog(key: string, ms: number): Promise<void> {
    const entries = await admin.zrange(`${prefix}rl:${key}`, 0, -1, 'WITHSCORES');
    for (let index = 0; index < entries.length; index += 2) {
      await admin.zadd(`${prefix}rl:${key}`, Number(entries[index + 1]) - ms, entries[index] ?? '');
    }
  }

  it('frees a slot only when the oldest accepted request leaves the window, never 2× across a boundary', async () => {
    const store = createRedisRateLimitStore({ client: await readyClient() });
    expect((await store.hit('slide', 2, 60_000)).allowed).toBe(true);
    await ageLog('slide', 30_000);
    expect((await store.hit('slide', 2, 60_000)).allowed).toBe(true);
    const refused = await store.hit('slide', 2, 60_000);
    expect(refused.allowed).toBe(false);
    // The first accept, made 30 s ago, leaves the window in 30 s.
    expect(refused.resetMs).toBeGreaterThan(25_000);
    expect(refused.resetMs).toBeLessThanOrEqual(30_000);
    // Past the boundary for the first accept only: one slot is free, not two.
    await ageLog('slide', 30_001);
    expect((await store.hit('slide', 2, 60_000)).allowed).toBe(true);
    expect((await store.hit('slide', 2, 60_000)).allowed).toBe(false);
  });

  it('does not log refused requests, so a client hammering while refused recovers after one window', async () => {
    const store = createRedisRateLimitStore({ client: await readyClient() });
    expect((await store.hit('hammer', 1, 60_000)).allowed).toBe(true);
    for (let i = 0; i < 10; i += 1) expect((await store.hit('hammer', 1, 60_000)).allowed).toBe(false);
    // One window after the accept; the refusals, made just now, would still be in it had they been logged.
    await ageLog('hammer', 60_001);
    expect((await store.hit('hammer', 1, 60_000)).allowed).toBe(true);
    expect((await store.hit('hammer', 1, 60_000)).allowed).toBe(false);
  });

  it('shares one budget between two instances with their own connections', async () => {
    const first = createRedisRateLimitStore({ client: await readyClient() });
    const second = createRedisRateLimitStore({ client: await readyClient() });
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? first : second).hit('shared', 10, 60_000)),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });

  it('stores only the hashed key it is given, under the prefix, with an expiry of one window', async () => {
    const store = createRedisRateLimitStore({ client: await readyClient() });
    await store.hit('hashed-bucket', 3, 5000);
    const keys = await listKeys(admin, `${prefix}rl:hashed-bucket`);
    expect(keys).toEqual([`${prefix}rl:hashed-bucket`]);
    const ttl = await admin.pttl(`${prefix}rl:hashed-bucket`);
    expect(ttl).toBeGreaterThan(4000);
    expect(ttl).toBeLessThanOrEqual(5000);
  });
});

describe('Redis rate limit when Redis fails', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy(6379);
  });
  afterEach(() => proxy.setMode('pass'));
  afterAll(async () => proxy.close());

  it('answers from memory without sending Redis a command when it is on a closed port, and still limits per instance', async () => {
    const client = newClient('redis://127.0.0.1:1');
    const commands = recordCommands(client);
    const store = createRedisRateLimitStore({ client });
    const decisions = [];
    for (let i = 0; i < 4; i += 1) decisions.push(await store.hit('down', 3, 60_000));
    expect(commands.names()).toEqual([]);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(client.health()).toBe('degraded');
  });

  it('falls back within the command timeout when Redis stalls, and returns to Redis when it answers again', async () => {
    const client = await readyClient(proxy.url);
    const fallback = createMemoryRateLimitStore();
    const store = createRedisRateLimitStore({ client, fallback });
    expect((await store.hit('stall', 100, 60_000)).remaining).toBe(99);

    proxy.setMode('stall');
    const startedAt = performance.now();
    const during = await store.hit('stall', 100, 60_000);
    // The command deadline is the behaviour here (250 ms): generous slack for a loaded machine,
    // still far below what an unbounded wait on a stalled socket would cost.
    expect(performance.now() - startedAt).toBeLessThan(DEFAULT_COMMAND_TIMEOUT_MS + 2_000);
    expect(during.allowed).toBe(true);
    expect(client.health()).toBe('degraded');
    // Degraded: further requests skip Redis instead of paying the timeout again.
    const commands = recordCommands(client);
    expect((await store.hit('stall', 100, 60_000)).allowed).toBe(true);
    expect(commands.names()).toEqual([]);

    proxy.setMode('pass');
    await waitFor(() => client.isReady(), 8000);
    // Back on Redis: its log holds the one accepted request from before, plus this one.
    expect((await store.hit('stall', 100, 60_000)).remaining).toBeLessThanOrEqual(98);
    expect(await admin.zcard(`${prefix}rl:stall`)).toBeGreaterThanOrEqual(2);
  });

  it('reconnects by itself after the connection is cut', async () => {
    const client = await readyClient(proxy.url);
    const store = createRedisRateLimitStore({ client });
    proxy.setMode('cut');
    await waitFor(() => client.health() === 'degraded');
    const commands = recordCommands(client);
    expect((await store.hit('cut', 5, 60_000)).allowed).toBe(true);
    expect(commands.names()).toEqual([]);
    proxy.setMode('pass');
    await waitFor(() => client.isReady(), 8000);
    await store.hit('cut', 5, 60_000);
    expect(await admin.zcard(`${prefix}rl:cut`)).toBe(1);
  });

  it('across an outage mid-window lets a client through at most the limit in the window: memory starts from the count Redis last reported, and its accepts still count after Redis returns', async () => {
    const client = await readyClient(proxy.url);
    const store = createRedisRateLimitStore({ client });
    await expectCountKeptThroughOutage(proxy, client, async () => (await store.hit('outage', 30, 60_000)).allowed);
  });
});
