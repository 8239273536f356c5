// While Redis is away (stopped, or between a failover's kill and the new primary: issue 50), the
// writes to the stores of record are refused with a 503 that says when to retry (Retry-After), and
// nothing refused is kept anywhere; lookups go on from the memory fallbacks, and readiness says
// `degraded` and names Redis. A Redis of the test's own on 127.0.0.1:6415, never the shared one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startReportingServer, type ReportingServer } from '../../harness/reporting-server.js';
import { STORE_RETRY_AFTER_S } from '../../src/http/errors.js';
import { startRedisServer, type RedisNode } from '../support/redis-nodes.js';
import { waitFor } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const BEARER = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
const PORT = 6415;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

async function send(url: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

describe('writes while Redis is away', () => {
  let redis: RedisNode;
  let server: ReportingServer;
  let reporter: string;

  const putRule = (rule: string): Promise<Answer> =>
    send(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent(rule)}`, {
      method: 'PUT',
      headers: BEARER,
      body: JSON.stringify({ list: 'block' }),
    });
  const report = (phone: string): Promise<Answer> =>
    send(`${server.baseUrl}/api/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reporter}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone, rating: 'fraud' }),
    });
  const createToken = (label: string): Promise<Answer> =>
    send(`${server.baseUrl}/admin/tokens`, { method: 'POST', headers: BEARER, body: JSON.stringify({ label }) });
  const readiness = async (): Promise<{ status: string; dependencies: { redis?: { status: string } } }> =>
    (await fetch(`${server.baseUrl}/health/ready`)).json() as Promise<{
      status: string;
      dependencies: { redis?: { status: string } };
    }>;

  beforeAll(async () => {
    redis = await startRedisServer(PORT);
    server = await startReportingServer({
      env: {
        REDIS_URL: `redis://127.0.0.1:${PORT}`,
        REDIS_KEY_PREFIX: 't-redis-gap:',
        RATE_LIMIT_MAX: '0',
        ADMIN_TOKEN: ADMIN,
      },
      overrides: { sources: healthyFakeSources() },
    });
    await waitFor(async () => (await readiness()).dependencies.redis?.status === 'ok', 10_000);
    const created = await createToken('Kitchen phone');
    expect(created.status).toBe(201);
    reporter = (JSON.parse(created.body) as { token: string }).token;
    // Both stores take writes while Redis is there.
    expect([200, 201]).toContain((await putRule('+33163100001')).status);
    expect((await report('+33612345670')).status).toBe(200);
    await redis.stop();
    await waitFor(async () => (await readiness()).dependencies.redis?.status !== 'ok', 10_000);
  });
  afterAll(async () => {
    await server.close();
    await redis.stop();
  });

  it('refuses a list change with a 503 and Retry-After, and keeps nothing of it', async () => {
    const answer = await putRule('+33163100002');
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe(String(STORE_RETRY_AFTER_S));
    expect(JSON.parse(answer.body)).toMatchObject({ type: '/problems/lists-unavailable', status: 503 });
    const rules = (await (await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: BEARER })).json()) as Array<{
      rule: string;
    }>;
    expect(rules.map((entry) => entry.rule)).toEqual(['+33163100001']);
  });

  it('refuses a report with a 503 and Retry-After, and counts no vote', async () => {
    const answer = await report('+33612345671');
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe(String(STORE_RETRY_AFTER_S));
    expect(JSON.parse(answer.body)).toMatchObject({ type: '/problems/reports-unavailable', status: 503 });
    expect(server.votesOn('+33612345671')).toEqual([]);
  });

  it('refuses a new token with a 503 and Retry-After', async () => {
    const answer = await createToken('Hall phone');
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe(String(STORE_RETRY_AFTER_S));
    expect(JSON.parse(answer.body)).toMatchObject({ type: '/problems/tokens-unavailable', status: 503 });
  });

  it('goes on answering lookups, and readiness says degraded and names Redis', async () => {
    const verdict = await fetch(`${server.baseUrl}/api/phone/0612345678/verdict`);
    expect(verdict.status).toBe(200);
    await verdict.arrayBuffer();
    const ready = await readiness();
    expect(ready.status).toBe('degraded');
    expect(ready.dependencies.redis?.status).toBe('degraded');
  });
});
