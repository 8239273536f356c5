import { describe, expect, it } from 'vitest';
import { expectCountKeptThroughOutage, listKeys, useRedisTestClients, waitFor } from '../../../test/support/redis.js';
import { startTcpProxy } from '../../../harness/loopback.js';
import { createRedisPolitenessStore } from './redis-politeness-store.js';
import { createUpstreamFetcher } from './upstream-fetcher.js';
import type { HttpClient, HttpRequest, HttpResult } from './types.js';

const { prefix, admin, readyClient } = useRedisTestClients('politeness');

function countingClient(status: () => number): HttpClient & { calls: number } {
  const client = {
    calls: 0,
    async request(request: HttpRequest): Promise<HttpResult> {
      client.calls += 1;
      return {
        kind: 'response',
        response: { status: status(), headers: { 'retry-after': '120' }, body: '', url: request.url },
      };
    },
  };
  return client;
}

const request = (): HttpRequest => ({ url: 'http://127.0.0.1:9/x', signal: AbortSignal.timeout(2000) });

describe('Redis politeness store', () => {
  it('a 429 seen by one instance pauses the upstream for the other instance too', async () => {
    const upstream = 'shared-pause';
    let status = 429;
    const httpA = countingClient(() => status);
    const httpB = countingClient(() => 200);
    const fetcherA = createUpstreamFetcher({
      upstream,
      client: httpA,
      requestsPerMinute: 100,
      maxConcurrency: 4,
      politeness: createRedisPolitenessStore({ client: await readyClient() }),
    });
    const fetcherB = createUpstreamFetcher({
      upstream,
      client: httpB,
      requestsPerMinute: 100,
      maxConcurrency: 4,
      politeness: createRedisPolitenessStore({ client: await readyClient() }),
    });

    const blockedOnA = await fetcherA.fetch(request());
    expect(blockedOnA).toMatchObject({ kind: 'failure', failure: { kind: 'blocked', reason: 'http_429' } });
    status = 200;
    const onB = await fetcherB.fetch(request());
    expect(onB).toMatchObject({ kind: 'failure', failure: { kind: 'blocked', reason: 'paused' } });
    expect(httpB.calls).toBe(0);
    expect(fetcherB.pausedUntil()).toBeGreaterThan(Date.now() + 100_000);
  });

  it('never shortens a longer pause another instance stored', async () => {
    const store = createRedisPolitenessStore({ client: await readyClient() });
    const other = createRedisPolitenessStore({ client: await readyClient() });
    const later = Date.now() + 600_000;
    await store.writePause('longest', { untilMs: later, consecutiveBlocks: 2 });
    await other.writePause('longest', { untilMs: Date.now() + 1000, consecutiveBlocks: 3 });
    expect(await store.readPause('longest')).toEqual({ untilMs: later, consecutiveBlocks: 3 });
  });

  it('counts every instance against one per-minute budget', async () => {
    const first = createRedisPolitenessStore({ client: await readyClient() });
    const second = createRedisPolitenessStore({ client: await readyClient() });
    const decisions = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? first : second).takeBudgetSlot('budget', 4, Date.now())),
    );
    expect(decisions.filter((d) => d.granted)).toHaveLength(4);
    const refused = decisions.find((d) => !d.granted);
    expect(refused).toMatchObject({ granted: false });
    if (refused?.granted === false) expect(refused.retryInMs).toBeGreaterThan(59_000);
  });

  it('keeps per-instance politeness when Redis is unreachable', async () => {
    const store = createRedisPolitenessStore({ client: await readyClient('redis://127.0.0.1:1') });
    const decisions = [];
    for (let i = 0; i < 3; i += 1) decisions.push(await store.takeBudgetSlot('down', 2, Date.now()));
    expect(decisions.map((d) => d.granted)).toEqual([true, true, false]);
    await store.writePause('down', { untilMs: Date.now() + 5000, consecutiveBlocks: 1 });
    expect((await store.readPause('down')).consecutiveBlocks).toBe(1);
  });

  it('writes only per-upstream keys under its prefix', async () => {
    const keys = await listKeys(admin, prefix);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(/^test:politeness:[0-9a-f]+:\{polite:[a-z-]+\}:(pause|budget)$/);
  });

  it('across a Redis outage mid-minute, one instance never sends more than its budget: memory starts from the count Redis last reported, and counts on after Redis returns', async () => {
    const proxy = await startTcpProxy(6379);
    try {
      const client = await readyClient(proxy.url);
      await waitFor(() => client.isReady());
      const store = createRedisPolitenessStore({ client });
      // Redis holds 20, memory 30 once it is back: the minute's budget is spent either way.
      await expectCountKeptThroughOutage(
        proxy,
        client,
        async () => (await store.takeBudgetSlot('outage-budget', 30, Date.now())).granted,
      );
    } finally {
      await proxy.close();
    }
  });
});

describe('Redis politeness store: a client share across instances', () => {
  it('counts a client against its share on every instance, and charges a search of 2 at once', async () => {
    const first = createRedisPolitenessStore({ client: await readyClient() });
    const second = createRedisPolitenessStore({ client: await readyClient() });
    const greedy = { client: 'a1b2c3', clientLimit: 3 };
    const granted = [];
    for (let i = 0; i < 4; i += 1)
      granted.push(
        (await (i % 2 === 0 ? first : second).takeBudgetSlot('shared-share', 6, Date.now(), greedy)).granted,
      );
    expect(granted).toEqual([true, true, true, false]);
    const refused = await second.takeBudgetSlot('shared-share', 6, Date.now(), greedy);
    expect(refused).toMatchObject({ granted: false, by: 'share' });
    // The others still have the rest of the budget: 3 left, so a search of 2 fits once.
    expect(
      await first.takeBudgetSlot('shared-share', 6, Date.now(), { cost: 2, client: 'd4e5f6', clientLimit: 3 }),
    ).toEqual({ granted: true });
    expect(await second.takeBudgetSlot('shared-share', 6, Date.now(), { cost: 2 })).toMatchObject({
      granted: false,
      by: 'budget',
    });
    expect(await second.takeBudgetSlot('shared-share', 6, Date.now())).toEqual({ granted: true });
    const keys = await listKeys(admin, prefix);
    // The client's log is keyed by its hash, as given: never an address.
    expect(keys.filter((key) => key.includes(':{polite:shared-share}:share:')).sort()).toEqual(
      [`${prefix}{polite:shared-share}:share:a1b2c3`, `${prefix}{polite:shared-share}:share:d4e5f6`].sort(),
    );
  });
});
