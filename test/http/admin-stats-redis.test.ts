// The console's record shared through Redis (docs/console.md), on the real app: two instances on
// one Redis count every call once in the same hourly counters and keep one call log, and a feed
// client's fetch on one is seen on the other; with CALL_LOG_RETENTION_DAYS=0 no call is logged
// (Redis holds no log) while the counters still count.
import { afterAll, describe, expect, it } from 'vitest';
import { scoredSources } from '../../harness/scored-sources.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { listKeys, TEST_REDIS_URL, useRedisTestClients } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${ADMIN}` };
const PASSWORD = 'a-feed-password-for-tests';
// Monday 30 November 2026, 15:00 in Paris.
const AT_15_00 = Date.parse('2026-11-30T14:00:00Z');
const SCORES = { '+33612345678': 9, '+33612345679': 2 };

async function json<T>(base: string, path: string): Promise<T> {
  const response = await fetch(`${base}${path}`, { headers: AUTH });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

interface Hour {
  verdicts: Record<string, number>;
  decidedBy: Record<string, number>;
}

const sum = (hours: Hour[], key: 'verdicts' | 'decidedBy', name: string): number =>
  hours.reduce((total, hour) => total + (hour[key][name] ?? 0), 0);

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function start(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({
    env: { REDIS_URL: TEST_REDIS_URL, ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0', ...env },
    overrides: { sources: scoredSources(SCORES), now: () => AT_15_00, feedRefreshIntervalMs: 3_600_000 },
  });
  servers.push(server);
  return server;
}

describe('the console’s record on Redis, two instances', () => {
  const { prefix, admin } = useRedisTestClients('admin-stats');

  it('sums both instances’ calls in one set of hourly counters and one call log', async () => {
    const env = { REDIS_KEY_PREFIX: prefix, FEED_PASSWORD: PASSWORD };
    const one = await start(env);
    const two = await start(env);
    for (const [server, number] of [
      [one, '0612345678'],
      [one, '0612345679'],
      [two, '0612345678'],
      [two, '0612345670'],
      [two, '0612345679'],
    ] as const)
      expect((await fetch(`${server.baseUrl}/api/phone/${number}/verdict`)).status).toBe(200);

    // Each instance flushes what it noted when it is asked: one first, then two (which sees both).
    await json(one.baseUrl, '/admin/stats');
    for (const server of [two, one]) {
      const hours = await json<Hour[]>(server.baseUrl, '/admin/stats');
      expect(sum(hours, 'verdicts', 'block')).toBe(2);
      expect(sum(hours, 'verdicts', 'allow')).toBe(2);
      expect(sum(hours, 'verdicts', 'unknown')).toBe(1);
      expect(sum(hours, 'decidedBy', 'score')).toBe(4);
      expect(sum(hours, 'decidedBy', 'none')).toBe(1);
      const calls = await json<Array<{ number: string }>>(server.baseUrl, '/admin/calls');
      expect(calls.map((call) => call.number).sort()).toEqual(
        ['+33612345678', '+33612345678', '+33612345679', '+33612345679', '+33612345670'].sort(),
      );
    }
    // One hash for the hour, counted by both.
    expect(await admin.hget(`${prefix}stats:hour:${AT_15_00}`, 'v:block')).toBe('2');
    expect(await admin.zcard(`${prefix}calls:log`)).toBe(5);
  });

  it('shows on one instance the feed client that fetched from the other', async () => {
    const [one, two] = servers as [TestServer, TestServer];
    await one.deps.blocklistFeed?.refresh();
    const fetched = await fetch(`${one.baseUrl}/feed/blocklist.csv`, {
      headers: {
        authorization: `Basic ${Buffer.from(`blocklist:${PASSWORD}`).toString('base64')}`,
        'user-agent': 'AVM FRITZ!Box 7590',
      },
    });
    expect(fetched.status).toBe(200);
    await fetched.text();
    await json(one.baseUrl, '/admin/status');
    const status = await json<{ feedClients: Array<{ client: string; lastFetchAt: string; entries: number }> }>(
      two.baseUrl,
      '/admin/status',
    );
    expect(status.feedClients).toEqual([
      {
        client: 'fritzbox',
        lastFetchAt: new Date(AT_15_00).toISOString(),
        entries: one.deps.blocklistFeed?.snapshot().entries.length,
      },
    ]);
  });
});

describe('the console’s record with CALL_LOG_RETENTION_DAYS=0', () => {
  const { prefix, admin } = useRedisTestClients('admin-stats-off');

  it('logs no call, in Redis or in memory, and still counts them', async () => {
    const server = await start({ REDIS_KEY_PREFIX: prefix, CALL_LOG_RETENTION_DAYS: '0' });
    for (const number of ['0612345678', '0612345679'])
      expect((await fetch(`${server.baseUrl}/api/phone/${number}/cid`)).status).toBe(200);
    const hours = await json<Hour[]>(server.baseUrl, '/admin/stats');
    expect(sum(hours, 'decidedBy', 'score')).toBe(2);
    expect(await json(server.baseUrl, '/admin/calls')).toEqual([]);
    expect(await server.deps.screening.record.calls({ limit: 10 }, AT_15_00)).toEqual([]);
    expect((await listKeys(admin, prefix)).filter((key) => key.includes('calls:'))).toEqual([]);
  });
});
