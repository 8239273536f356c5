// A slow Redis on the cold path: the real service, its Redis behind a loopback proxy that adds
// 800 ms to every reply (under a 1 s command timeout, so never an error). The instance must
// notice that Redis answers near its timeout and go over to its memory fallbacks, instead of
// paying every round trip of a cold lookup. The instance does not judge a reply slow for time
// it spent busy itself (event-loop delay), so the latency is large enough that a loaded test
// machine's delays cannot hide it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { connectAdmin, deleteKeys, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { SLOW_DEGRADED_MS } from '../../src/infra/redis/redis-client.js';

/** The operator lists' own Redis traffic (its version poll), which no lookup sends. */
const LISTS_KEYS = /\{lists\}:/;

const COMMAND_TIMEOUT_MS = 1000;
const LATENCY_MS = 800;
const prefix = uniqueKeyPrefix('slow-redis');
const admin = connectAdmin();

let sites: FakeUpstreamSites;
let proxy: TcpProxy;
let service: TestServer | undefined;

beforeAll(async () => {
  sites = await startFakeUpstreamSites();
  proxy = await startTcpProxy(6379);
});
afterEach(async () => {
  await service?.close();
  service = undefined;
});
afterAll(async () => {
  await proxy.close();
  await sites.close();
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

async function redisReadiness(server: TestServer): Promise<string | undefined> {
  const body = (await (await fetch(`${server.baseUrl}/health/ready`)).json()) as {
    dependencies: { redis?: { status: string } };
  };
  return body.dependencies.redis?.status;
}

describe('reliability: Redis slow but answering', () => {
  it('a cold lookup pays one Redis round trip, not its serial ones, and the instance reports it fell back to memory', async () => {
    service = await startTestServer({
      env: {
        ...sites.env(),
        REDIS_URL: proxy.url,
        REDIS_KEY_PREFIX: prefix,
        REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
        RATE_LIMIT_MAX: '0',
      },
    });
    const server = service;
    await waitFor(async () => (await redisReadiness(server)) === 'ok');
    // A lookup at normal speed first warms the process up (its first lookup may be slow enough
    // for one Redis command to time out); Redis is then in use again.
    expect((await fetch(`${server.baseUrl}/api/phone/0612000001`)).status).toBe(200);
    await waitFor(async () => (await redisReadiness(server)) === 'ok');
    // While Redis is healthy a lookup reads and writes it (the proxy sees those commands).
    expect(proxy.takeCommands({ exceptKeys: LISTS_KEYS }).length).toBeGreaterThan(0);

    proxy.setLatencyMs(LATENCY_MS);
    const response = await fetch(`${server.baseUrl}/api/phone/0612000002`);
    expect(response.status).toBe(200);
    // Paying every round trip would show about seven serial commands:
    // the first round trip (the three slots' cache reads, in parallel) reveals the latency, and
    // memory answers the rest (health pings aside).
    expect(proxy.takeCommands({ exceptKeys: LISTS_KEYS }).filter((command) => command !== 'ping')).toEqual([
      'get',
      'get',
      'get',
    ]);
    expect(await redisReadiness(server)).toBe('degraded');

    // Later lookups do not pay the latency either: they do not ask Redis at all.
    proxy.takeCommands({ exceptKeys: LISTS_KEYS });
    expect((await fetch(`${server.baseUrl}/api/phone/0612000003`)).status).toBe(200);
    expect(proxy.takeCommands({ exceptKeys: LISTS_KEYS })).toEqual([]);

    // Once Redis answers fast again, the instance goes back to it after its minimum period.
    proxy.setLatencyMs(0);
    await waitFor(async () => (await redisReadiness(server)) === 'ok', SLOW_DEGRADED_MS + 5_000);
  }, 30_000);
});
