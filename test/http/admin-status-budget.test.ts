// The console's "budget used" (`/admin/status`, docs/console.md) with the real adapters and
// fetchers against loopback stand-ins for the sites: alone, an instance shows the requests it
// was granted in the sliding minute; two instances on one Redis share the budget, and each shows
// what both spent of it (Redis' count), not its own part; with Redis gone it shows its own again.
import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { TEST_REDIS_URL, useRedisTestClients } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';

interface SourceState {
  slot: string;
  name: string;
  budgetUsed: number;
  budgetPerMinute: number;
}

async function community(server: TestServer): Promise<SourceState | undefined> {
  const response = await fetch(`${server.baseUrl}/admin/status`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { sources: SourceState[] };
  return body.sources.find((source) => source.slot === 'community');
}

async function lookUp(server: TestServer, national: string): Promise<void> {
  const response = await fetch(`${server.baseUrl}/api/phone/${national}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { meta: { sources: { community: { status: string } } } };
  expect(body.meta.sources.community.status).toBe('ok');
}

const closing: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const part of closing.reverse()) await part.close();
});

async function sites(): Promise<FakeUpstreamSites> {
  const started = await startFakeUpstreamSites({ fallback: KNOWN_NUMBER });
  closing.push(started);
  return started;
}

async function instance(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({
    env: { ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0', NUMEROINCONNU_RPM: '50', ...env },
  });
  closing.push(server);
  return server;
}

describe('the budget used in /admin/status', () => {
  it('alone, counts the requests this instance was granted', async () => {
    const upstreams = await sites();
    const server = await instance(upstreams.env());
    expect(await community(server)).toMatchObject({ name: 'numeroinconnu', budgetUsed: 0, budgetPerMinute: 50 });
    for (const national of ['0612340001', '0612340002', '0612340003']) await lookUp(server, national);
    expect(upstreams.count('numeroinconnu')).toBe(3);
    expect(await community(server)).toMatchObject({ budgetUsed: 3, budgetPerMinute: 50 });
  });

  describe('two instances on one Redis', () => {
    const { prefix } = useRedisTestClients('status-budget');

    it('each shows what both spent of the shared budget, and its own part once Redis is gone', async () => {
      const upstreams = await sites();
      const env = { ...upstreams.env(), REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix };
      const one = await instance(env);
      const two = await instance(env);
      // Different numbers, so every lookup reaches the site (no shared cache hit, no coalescing).
      for (const national of ['0612340011', '0612340012']) await lookUp(one, national);
      for (const national of ['0612340021', '0612340022', '0612340023']) await lookUp(two, national);
      expect(upstreams.count('numeroinconnu')).toBe(5);
      expect(await community(one)).toMatchObject({ budgetUsed: 5, budgetPerMinute: 50 });
      expect(await community(two)).toMatchObject({ budgetUsed: 5, budgetPerMinute: 50 });

      // An instance whose Redis is unreachable shows the part it was granted itself.
      const alone = await instance({
        ...upstreams.env(),
        REDIS_URL: 'redis://127.0.0.1:1',
        REDIS_KEY_PREFIX: prefix,
      });
      await lookUp(alone, '0612340031');
      expect(await community(alone)).toMatchObject({ budgetUsed: 1 });
    });
  });
});
