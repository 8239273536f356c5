// Several instances of the app sharing one real Redis: the rate limit, the cache and the
// single-flight hold for the deployment as a whole, and a dead or hung Redis costs neither an
// error nor a slow answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createServiceDependencies, type ServiceDependencies } from '../../src/composition.js';
import { fakeSource, SAMPLE_DATA, type FakeSources } from '../../harness/lookup.js';
import { connectAdmin, deleteKeys, listKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../../harness/loopback.js';
import { testNumberingPlan } from '../../harness/servers.js';

/** The operator lists' own Redis traffic (its version poll), which no lookup sends. */
const LISTS_KEYS = /\{lists\}:/;

const prefix = uniqueKeyPrefix('scale');
const admin = connectAdmin();
const started: Instance[] = [];

/** Normal latency of a fake upstream: a cold lookup takes about this long. */
const UPSTREAM_LATENCY_MS = 120;

interface Instance {
  baseUrl: string;
  app: FastifyInstance;
  deps: ServiceDependencies;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Three sources answering the sample data after a delay, counting their calls. */
function slowFakeSources(): FakeSources {
  const delayed = <T>(value: T) => sleep(UPSTREAM_LATENCY_MS).then(() => value);
  return {
    primary: fakeSource('primary', () =>
      delayed({ status: 'ok' as const, data: structuredClone(SAMPLE_DATA.primary) }),
    ),
    community: fakeSource('community', () =>
      delayed({ status: 'ok' as const, data: structuredClone(SAMPLE_DATA.community) }),
    ),
    signals: fakeSource('signals', () =>
      delayed({ status: 'ok' as const, data: structuredClone(SAMPLE_DATA.signals) }),
    ),
  };
}

async function startInstance(sources: FakeSources, env: Record<string, string>): Promise<Instance> {
  // Load shedding on event-loop delay is off: a shared CI machine must not turn these into 503s.
  const config = loadConfig({
    HASH_SECRET: 'scale-test-secret-0123456789',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    RATE_LIMIT_MAX: '0',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...env,
  });
  const deps = await createServiceDependencies(config, undefined, { sources, numberingPlan: testNumberingPlan() });
  const app = await buildApp({ ...deps.app });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const instance = { baseUrl: `http://127.0.0.1:${address.port}`, app, deps };
  started.push(instance);
  if (config.REDIS_URL === TEST_REDIS_URL) await waitFor(() => deps.redis?.health() === 'ok');
  return instance;
}

/** Every number this file has looked up, for the check that none reaches Redis in clear. */
const lookedUp = new Set<string>();

async function lookup(
  instance: Instance,
  number: string,
): Promise<{ status: number; body: { meta?: { sources?: Record<string, { cache: string; status: string }> } } }> {
  lookedUp.add(number);
  const response = await fetch(`${instance.baseUrl}/api/phone/${number}`);
  const body = (await response.json()) as { meta?: { sources?: Record<string, { cache: string; status: string }> } };
  return { status: response.status, body };
}

const totalCalls = (sources: FakeSources) => sources.primary.calls + sources.community.calls + sources.signals.calls;

afterAll(async () => {
  for (const instance of started) {
    await instance.app.close();
    await instance.deps.close();
  }
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

describe('two instances sharing one Redis', () => {
  it('limit a client to RATE_LIMIT_MAX requests in total across both', async () => {
    const sources = slowFakeSources();
    const first = await startInstance(sources, { RATE_LIMIT_MAX: '10' });
    const second = await startInstance(sources, { RATE_LIMIT_MAX: '10' });
    const statuses: number[] = [];
    for (let i = 0; i < 24; i += 1) statuses.push((await lookup(i % 2 === 0 ? first : second, '0612345670')).status);
    expect(statuses.filter((status) => status !== 429)).toHaveLength(10);
    expect(statuses.slice(10).every((status) => status === 429)).toBe(true);
  });

  it('a number looked up on one is a cache hit on the other, without an upstream request', async () => {
    const sources = slowFakeSources();
    const first = await startInstance(sources, {});
    const second = await startInstance(sources, {});
    const cold = await lookup(first, '0612345671');
    expect(cold.status).toBe(200);
    expect(cold.body.meta?.sources?.primary?.cache).toBe('miss');
    await waitFor(async () => (await listKeys(admin, `${prefix}cache:`)).length >= 3);
    const callsAfterCold = totalCalls(sources);
    const warm = await lookup(second, '0612345671');
    expect(warm.status).toBe(200);
    expect(Object.values(warm.body.meta?.sources ?? {}).map((slot) => slot.cache)).toEqual(['hit', 'hit', 'hit']);
    expect(totalCalls(sources)).toBe(callsAfterCold);
  });

  it('100 concurrent cold lookups of one number spread over both cost each upstream one request', async () => {
    const sources = slowFakeSources();
    const first = await startInstance(sources, {});
    const second = await startInstance(sources, {});
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => lookup(i % 2 === 0 ? first : second, '0612345672')),
    );
    expect(results.every((result) => result.status === 200)).toBe(true);
    expect(
      results.every((result) => Object.values(result.body.meta?.sources ?? {}).every((slot) => slot.status === 'ok')),
    ).toBe(true);
    expect([sources.primary.calls, sources.community.calls, sources.signals.calls]).toEqual([1, 1, 1]);
  });

  it('keys in Redis hold no phone number in clear', async () => {
    const keys = await listKeys(admin, prefix);
    expect(keys.length).toBeGreaterThan(0);
    expect(lookedUp.size).toBeGreaterThan(0);
    // Each number in the forms a key could carry it: national, E.164 digits, national significant.
    // Matched exactly, not as "any long digit run": the random hex key prefix and the keyed hashes
    // contain digit runs by chance.
    const forms = [...lookedUp].flatMap((national) => [national, `33${national.slice(1)}`, national.slice(1)]);
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      for (const form of forms) expect(rest, `key ${key} holds ${form}`).not.toContain(form);
    }
  });
});

describe('Redis failing under two instances', () => {
  let proxy: TcpProxy;
  /**
   * Whether an answer was held up by Redis, told by what it says rather than by a stopwatch: a
   * Redis call without its own deadline would keep a slot waiting until the source or lookup
   * deadline, and that slot would answer `error` (timeout) instead of `ok`.
   */
  const notHeldUpByRedis = (result: Awaited<ReturnType<typeof lookup>>): void => {
    if (result.status !== 200) return;
    expect(Object.values(result.body.meta?.sources ?? {}).map((slot) => slot.status)).toEqual(['ok', 'ok', 'ok']);
  };

  beforeAll(async () => {
    proxy = await startTcpProxy(6379);
  });
  afterAll(async () => proxy.close());

  it('answers without 5xx and within the budget when Redis is on a closed port', async () => {
    const sources = slowFakeSources();
    const instance = await startInstance(sources, { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_MAX: '5' });
    expect(instance.deps.redis?.health()).toBe('degraded');
    const results = [];
    for (let i = 0; i < 7; i += 1) results.push(await lookup(instance, '0612345673'));
    for (const result of results) notHeldUpByRedis(result);
    // Per-instance memory limits take over.
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(results[1]?.body.meta?.sources?.primary?.cache).toBe('hit');
    // Readiness names Redis degraded but the service stays ready.
    const ready = await fetch(`${instance.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(JSON.stringify(await ready.json())).toMatch(/"redis":\{"status":"degraded"\}/);
  });

  it('keeps answering when Redis hangs or is cut mid-run, and shares state again once it is back', async () => {
    const sources = slowFakeSources();
    const env = { REDIS_URL: proxy.url, RATE_LIMIT_MAX: '1000' };
    const first = await startInstance(sources, env);
    const second = await startInstance(sources, env);
    await waitFor(() => first.deps.redis?.health() === 'ok' && second.deps.redis?.health() === 'ok');
    const burst = (numbers: string[]) =>
      Promise.all(
        numbers.flatMap((number, i) => [lookup(first, number), lookup(i % 2 === 0 ? second : first, number)]),
      );
    // The same burst of cold and warm lookups with Redis healthy first.
    for (const result of await burst(['0612345660', '0612345661', '0612345662', '0612345661']))
      notHeldUpByRedis(result);
    expect((await lookup(first, '0612345674')).status).toBe(200);

    for (const [mode, numbers] of [
      ['stall', ['0612345674', '0612345675', '0612345676', '0612345675']],
      ['cut', ['0612345674', '0612345665', '0612345666', '0612345665']],
    ] as const) {
      proxy.setMode(mode);
      const during = await burst([...numbers]);
      for (const result of during) {
        expect(result.status).toBe(200);
        notHeldUpByRedis(result);
      }
      expect(first.deps.redis?.health()).toBe('degraded');
      // Degraded now: requests skip Redis instead of waiting on it.
      await waitFor(() => second.deps.redis?.health() === 'degraded');
      proxy.takeCommands({ exceptKeys: LISTS_KEYS });
      const next = await lookup(second, '0612345677');
      expect(next.status).toBe(200);
      expect(proxy.takeCommands({ exceptKeys: LISTS_KEYS })).toEqual([]);
      proxy.setMode('pass');
      await waitFor(() => first.deps.redis?.health() === 'ok' && second.deps.redis?.health() === 'ok', 10_000);
    }

    const ready = await fetch(`${first.baseUrl}/health/ready`);
    expect(JSON.stringify(await ready.json())).toMatch(/"redis":\{"status":"ok"\}/);

    // Recovered: a number looked up on one is shared with the other again.
    const number = '0612345678';
    const cachedBefore = (await listKeys(admin, `${prefix}cache:`)).length;
    expect((await lookup(first, number)).body.meta?.sources?.primary?.cache).toBe('miss');
    // The first instance's three slot results are in Redis.
    await waitFor(async () => (await listKeys(admin, `${prefix}cache:`)).length >= cachedBefore + 3);
    expect((await lookup(second, number)).body.meta?.sources?.primary?.cache).toBe('hit');
  });
});
