// Two instances sharing one real Redis keep sharing through a burst that keeps their process
// busy. A reply that waited in its socket while the process was busy is not a slow Redis: it is
// used, it is no slow strike, and the instance stays on Redis, so a number one instance fetched
// is a shared-cache hit on the other and each upstream is asked once per number.
//
// The busy process is made on purpose, where the issue saw it happen by itself: the reply to a
// cache read goes out at the end of one long turn of the event loop and is read at the end of
// another (a synchronous block after the command is written, and one in the socket's own 'data'
// handler, before the client parses the replies). The event-loop delay, which the client once
// took off a reply's time, is one turn: it left the other, longer than half the command timeout,
// and three such replies in a row turned sharing off for SLOW_DEGRADED_MS.
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type * as RedisClientModule from '../../src/infra/redis/redis-client.js';
import type { RedisClient, RedisClientOptions } from '../../src/infra/redis/redis-client.js';
import { fakeSource, SAMPLE_DATA, type FakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { connectAdmin, deleteKeys, listKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { SOURCE_SLOTS } from '../../src/domain/report.js';

// Each instance's Redis client, as the composition root creates it (kept, not replaced).
const created = vi.hoisted(() => ({ clients: [] as RedisClient[] }));
vi.mock('../../src/infra/redis/redis-client.js', async (importOriginal) => {
  const original = await importOriginal<typeof RedisClientModule>();
  return {
    ...original,
    createRedisClient: (url: string, options: RedisClientOptions): RedisClient => {
      const client = original.createRedisClient(url, options);
      created.clients.push(client);
      return client;
    },
  };
});

/** Half of it is the reply time the client judges slow; each block is longer than that. */
const COMMAND_TIMEOUT_MS = 1000;
const BLOCK_MS = 700;
const NUMBERS = 100;

const prefix = uniqueKeyPrefix('burst-sharing');
const admin = connectAdmin();
/** Requests the upstreams received, per slot and E.164 number. */
const upstreamRequests = new Map<string, number>();
const instances: TestServer[] = [];
const clients: RedisClient[] = [];

/** Keeps the event loop busy: the process does nothing else meanwhile, as in a long turn. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

/** The three upstreams, answering at once and counting each request by slot and number (one set per instance, one count). */
function countingSources(): FakeSources {
  const answer = (slot: string, e164: string) => {
    const key = `${slot} ${e164}`;
    upstreamRequests.set(key, (upstreamRequests.get(key) ?? 0) + 1);
  };
  return {
    primary: fakeSource(
      'primary',
      (number) => (
        answer('primary', number.e164),
        { status: 'ok' as const, data: structuredClone(SAMPLE_DATA.primary) }
      ),
    ),
    community: fakeSource(
      'community',
      (number) => (
        answer('community', number.e164),
        { status: 'ok' as const, data: structuredClone(SAMPLE_DATA.community) }
      ),
    ),
    signals: fakeSource(
      'signals',
      (number) => (
        answer('signals', number.e164),
        { status: 'ok' as const, data: structuredClone(SAMPLE_DATA.signals) }
      ),
    ),
  };
}

async function startInstance(): Promise<{ instance: TestServer; client: RedisClient }> {
  const before = created.clients.length;
  const instance = await startTestServer({
    // Load shedding on event-loop delay is off and the lookup deadlines are long: the blocks
    // below, or a loaded machine, must not turn lookups into 503s or timeouts.
    env: {
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      RATE_LIMIT_MAX: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      SOURCE_TIMEOUT_MS: '15000',
      LOOKUP_TIMEOUT_MS: '20000',
    },
    overrides: { sources: countingSources() },
  });
  instances.push(instance);
  const own = created.clients.slice(before);
  expect(own).toHaveLength(1);
  const [client] = own;
  if (client === undefined) throw new Error('no Redis client');
  clients.push(client);
  return { instance, client };
}

/**
 * Once armed, the third cache read this client sends is followed by a block (the rest of that
 * turn), and the next data its socket delivers is read after another (the next turn): those
 * reads' replies are read two blocks after they went out, with no idle time between.
 */
function busyWhileRepliesInFlight(client: RedisClient): { fired: () => boolean } {
  let reads = 0;
  let fired = false;
  const send = client.redis.sendCommand.bind(client.redis);
  client.redis.sendCommand = (command, stream) => {
    const sent = send(command, stream);
    if (
      !fired &&
      command.name.toLowerCase() === 'get' &&
      String(command.args[0]).startsWith(`${prefix}cache:`) &&
      ++reads === 3
    ) {
      fired = true;
      blockEventLoop(BLOCK_MS);
      client.redis.stream.prependOnceListener('data', () => blockEventLoop(BLOCK_MS));
    }
    return sent;
  };
  return { fired: () => fired };
}

interface Answer {
  status: number;
  sources: Record<string, { status: string; cache: string }>;
}

async function lookup(instance: TestServer, number: string): Promise<Answer> {
  const response = await fetch(`${instance.baseUrl}/api/phone/${number}`);
  const body = (await response.json()) as { meta?: { sources?: Answer['sources'] } };
  return { status: response.status, sources: body.meta?.sources ?? {} };
}

afterAll(async () => {
  for (const instance of instances) await instance.close();
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

describe('two instances sharing one Redis through a burst', () => {
  it(`${NUMBERS} concurrent cold lookups while one process is busy: sharing stays on, each upstream asked once per number`, async () => {
    const first = await startInstance();
    const second = await startInstance();
    await waitFor(() => first.client.health() === 'ok' && second.client.health() === 'ok');

    // Distinct numbers, a random block of them so a rerun finds nothing cached.
    const base = 100_000 + Math.floor(Math.random() * 800_000);
    const numbers = Array.from({ length: NUMBERS }, (_, i) => `0612${String(base + i)}`);
    const e164 = (national: string) => `+33${national.slice(1)}`;

    const busy = busyWhileRepliesInFlight(first.client);
    const cold = await Promise.all(
      numbers.map((number, i) => lookup(i % 2 === 0 ? first.instance : second.instance, number)),
    );
    expect(busy.fired()).toBe(true);
    for (const answer of cold) {
      expect(answer.status).toBe(200);
      expect(Object.values(answer.sources).map((slot) => slot.status)).toEqual(['ok', 'ok', 'ok']);
    }

    // Every result reaches the shared cache (the writes are not awaited by the answers), unless
    // an instance left Redis meanwhile.
    const cacheKeys = async () => (await listKeys(admin, `${prefix}cache:`)).length;
    await waitFor(
      async () =>
        clients.some((client) => client.health() !== 'ok') || (await cacheKeys()) >= NUMBERS * SOURCE_SLOTS.length,
    );
    expect(clients.map((client) => client.slowFallbacks())).toEqual([0, 0]);
    expect(clients.map((client) => client.health())).toEqual(['ok', 'ok']);
    expect(await cacheKeys()).toBe(NUMBERS * SOURCE_SLOTS.length);

    // Each number asked again on the other instance: from the shared cache, no upstream request.
    const warm = await Promise.all(
      numbers.map((number, i) => lookup(i % 2 === 0 ? second.instance : first.instance, number)),
    );
    for (const answer of warm) {
      expect(answer.status).toBe(200);
      expect(Object.values(answer.sources).map((slot) => slot.cache)).toEqual(['hit', 'hit', 'hit']);
    }
    const expected = new Map(
      SOURCE_SLOTS.flatMap((slot) => numbers.map((number): [string, number] => [`${slot} ${e164(number)}`, 1])),
    );
    expect(upstreamRequests).toEqual(expected);
    expect(clients.map((client) => client.slowFallbacks())).toEqual([0, 0]);
    expect(clients.map((client) => client.health())).toEqual(['ok', 'ok']);
  }, 60_000);
});
