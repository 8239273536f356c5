// The Redis client's "slow Redis" rule against real Redis: a reply counts as slow for the time
// the process waited idle for it, not for time the process spent busy while the reply sat in
// its socket (docs/reliability.md, "Slow Redis = degraded").
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisClient, SLOW_STRIKES, type RedisClient } from './redis-client.js';
import { startTcpProxy, type TcpProxy } from '../../../harness/loopback.js';
import { connectAdmin, deleteKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../../../test/support/redis.js';

/** Half of it (500 ms) is the wait the client judges slow. */
const COMMAND_TIMEOUT_MS = 1000;
/** Longer than half the command timeout, shorter than the timeout itself. */
const BLOCK_MS = 700;

const prefix = uniqueKeyPrefix('redis-client');
const admin = connectAdmin();
const clients: RedisClient[] = [];
let proxy: TcpProxy;

beforeAll(async () => {
  proxy = await startTcpProxy(6379);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await proxy.close();
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

async function readyClient(url: string): Promise<RedisClient> {
  const client = createRedisClient(url, { keyPrefix: prefix, commandTimeoutMs: COMMAND_TIMEOUT_MS });
  clients.push(client);
  await waitFor(() => client.isReady());
  return client;
}

function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

/** SLOW_STRIKES reads of distinct keys at once, each answered with its value or `fallback`. */
function readsAtOnce(client: RedisClient): Promise<string[]> {
  return Promise.all(
    Array.from({ length: SLOW_STRIKES }, (_, i) =>
      client.attempt(
        async (redis) => (await redis.get(`key:${i}`)) ?? 'missing',
        () => 'fallback',
      ),
    ),
  );
}

describe('redis client: slow replies', () => {
  beforeAll(async () => {
    for (let i = 0; i < SLOW_STRIKES; i += 1) await admin.set(`${prefix}key:${i}`, `value ${i}`);
  });

  it('replies read late because the process was busy across two turns of its loop are used, and Redis is not called slow', async () => {
    const client = await readyClient(TEST_REDIS_URL);
    // The reads go out, the rest of this turn keeps the loop busy (the replies arrive meanwhile),
    // and the next turn is busy again before the client parses them.
    const reads = readsAtOnce(client);
    blockEventLoop(BLOCK_MS);
    client.redis.stream.prependOnceListener('data', () => blockEventLoop(BLOCK_MS));
    expect(await reads).toEqual(['value 0', 'value 1', 'value 2']);
    expect(client.slowFallbacks()).toBe(0);
    expect(client.health()).toBe('ok');
  });

  it('replies Redis itself was slow to send, while the process waited, still make it degraded', async () => {
    const client = await readyClient(proxy.url);
    proxy.setLatencyMs(BLOCK_MS);
    try {
      // Used all the same: each beat its command timeout.
      expect(await readsAtOnce(client)).toEqual(['value 0', 'value 1', 'value 2']);
      expect(client.slowFallbacks()).toBe(1);
      expect(client.health()).toBe('degraded');
    } finally {
      proxy.setLatencyMs(0);
    }
  });
});
