// A Redis outage in the middle of a rate-limit window, through the real service: Redis behind a
// loopback proxy that is cut after part of the window was spent. The per-instance memory
// fallback starts from the count Redis last reported and its accepts still count once Redis is
// back, so one client never gets more than RATE_LIMIT_MAX through in the window (the budget
// side is tested in src/infra/http/redis-politeness-store.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { connectAdmin, deleteKeys, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const RATE_LIMIT_MAX = 30;
const prefix = uniqueKeyPrefix('outage-limits');
const admin = connectAdmin();

let sites: FakeUpstreamSites;
let proxy: TcpProxy;
let service: TestServer;

beforeAll(async () => {
  sites = await startFakeUpstreamSites();
  proxy = await startTcpProxy(6379);
  service = await startTestServer({
    env: {
      ...sites.env(),
      REDIS_URL: proxy.url,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
      RATE_LIMIT_WINDOW_S: '60',
    },
  });
});
afterAll(async () => {
  await service.close();
  await proxy.close();
  await sites.close();
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

async function redisReadiness(): Promise<string | undefined> {
  const body = (await (await fetch(`${service.baseUrl}/health/ready`)).json()) as {
    dependencies: { redis?: { status: string } };
  };
  return body.dependencies.redis?.status;
}

async function letThrough(requests: number): Promise<number> {
  let passed = 0;
  for (let i = 0; i < requests; i += 1) {
    const response = await fetch(`${service.baseUrl}/api/phone/0612345678`);
    await response.arrayBuffer();
    if (response.status !== 429) passed += 1;
  }
  return passed;
}

describe('reliability: Redis outage in the middle of a rate-limit window', () => {
  it(`lets one client through at most RATE_LIMIT_MAX (${RATE_LIMIT_MAX}) times in the window, before, during and after the outage`, async () => {
    await waitFor(async () => (await redisReadiness()) === 'ok');
    expect(await letThrough(20)).toBe(20);
    proxy.setMode('cut');
    await waitFor(async () => (await redisReadiness()) === 'degraded');
    expect(await letThrough(30)).toBe(10);
    proxy.setMode('pass');
    await waitFor(async () => (await redisReadiness()) === 'ok', 8000);
    expect(await letThrough(30)).toBe(0);
  });
});
