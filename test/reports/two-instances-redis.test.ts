// Two instances of the service sharing one Redis under one key prefix (docs/reports.md): a token
// created through the admin API of one is accepted by the other; a report sent to one is in the
// other's report store within a second (the deadline is the behaviour: "seen on every instance
// within a second"); two reporters reporting the same number at once, one on each instance, lose
// nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startReportingServer, type ReportingServer } from '../../harness/reporting-server.js';
import { TEST_REDIS_URL, useRedisTestClients, waitFor } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const SEEN_WITHIN_MS = 1000;

async function report(server: ReportingServer, secret: string, phone: string, rating: string): Promise<number> {
  const answer = await fetch(`${server.baseUrl}/api/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ phone, rating }),
  });
  await answer.arrayBuffer();
  return answer.status;
}

/** Resolves once `check` holds; fails the test when it does not within a second of the call. */
const withinASecond = (check: () => boolean): Promise<void> => waitFor(check, SEEN_WITHIN_MS);

describe('two instances on one Redis', () => {
  const { prefix } = useRedisTestClients('reports-two-instances');
  let a: ReportingServer;
  let b: ReportingServer;
  beforeAll(async () => {
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: '0', ADMIN_TOKEN: ADMIN };
    a = await startReportingServer({ env, overrides: { sources: healthyFakeSources() } });
    b = await startReportingServer({ env, overrides: { sources: healthyFakeSources() } });
    expect([a.tokens.kind, b.tokens.kind, a.reports.kind, b.reports.kind]).toEqual([
      'redis',
      'redis',
      'redis',
      'redis',
    ]);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  async function createOnA(label: string): Promise<{ secret: string; id: string }> {
    const created = await fetch(`${a.baseUrl}/admin/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label }),
    });
    expect(created.status).toBe(201);
    const { token, id } = (await created.json()) as { token: string; id: string };
    return { secret: token, id };
  }

  it('accepts on one a token created through the admin API of the other', async () => {
    const { secret, id } = await createOnA('Kitchen phone');
    await withinASecond(() => b.tokens.list().some((token) => token.id === id));
    expect(await report(b, secret, '+33612345670', 'fraud')).toBe(200);
    expect(b.votesOn('+33612345670')).toEqual([expect.objectContaining({ tokenId: id, rating: 'fraud' })]);
  });

  it('has a report sent to one in the other’s report store within a second', async () => {
    const { secret, id } = await createOnA('Hall phone');
    expect(await report(a, secret, '+33612345671', 'advertising')).toBe(200);
    await withinASecond(() => b.votesOn('+33612345671').length === 1);
    expect(b.votesOn('+33612345671')).toEqual([expect.objectContaining({ tokenId: id, rating: 'advertising' })]);
    expect(b.reports.evidence('+33612345671')).toMatchObject({ reporters: 1, verdict: 'suspect' });
  });

  it('loses nothing when two reporters report the same number at once, one on each instance', async () => {
    const first = await createOnA('Office PBX');
    const second = await createOnA('Shop phone');
    await withinASecond(() => [first.id, second.id].every((id) => b.tokens.list().some((token) => token.id === id)));
    const statuses = await Promise.all([
      report(a, first.secret, '+33612345672', 'fraud'),
      report(b, second.secret, '+33612345672', 'G_FRAUD'),
    ]);
    expect(statuses).toEqual([200, 200]);
    for (const server of [a, b]) {
      await withinASecond(() => server.votesOn('+33612345672').length === 2);
      expect(
        server
          .votesOn('+33612345672')
          .map((vote) => vote.tokenId)
          .sort(),
      ).toEqual([first.id, second.id].sort());
      expect(server.reports.evidence('+33612345672')).toMatchObject({ reporters: 2, verdict: 'spam' });
    }
  });
});
