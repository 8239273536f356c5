// The tokens in Redis, on the real Redis under a key prefix of this file's own: two instances
// (two clients, two stores) stand for two servers. A create or a revoke on one is awaited on the
// other through its onChange (the PUBLISH it hears), never slept for.
import { afterAll, describe, expect, it } from 'vitest';
import { startTcpProxy } from '../../../harness/loopback.js';
import { useRedisTestClients, waitFor } from '../../../test/support/redis.js';
import { ReportStoreUnavailable } from '../../domain/ports/caller-reports.js';
import { createRedisClient } from '../redis/redis-client.js';
import { openRedisTokenStore, openTokenStore, TOKENS_KEY, type TokenStore } from './token-store.js';

const { prefix, admin, readyClient } = useRedisTestClients('tokens');
const NOW = Date.parse('2026-11-28T13:47:12.345Z');
const opened: TokenStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
});

async function openInstance(): Promise<{ store: TokenStore; nextChange: () => Promise<void> }> {
  let waiters: Array<() => void> = [];
  const store = await openRedisTokenStore(await readyClient(), {
    watch: true,
    ownsClient: false,
    onChange: () => {
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
  });
  opened.push(store);
  return { store, nextChange: () => new Promise((resolve) => waiters.push(resolve)) };
}

describe('the tokens in Redis', () => {
  it('a token created on one instance is accepted on the other, and a revocation refused there', async () => {
    const one = await openInstance();
    const two = await openInstance();
    // Subscribed: the other instance's first read after its subscription has run.
    await two.store.refresh();

    const created = two.nextChange();
    const { secret, token } = await one.store.create({ label: 'Front desk PBX' }, NOW);
    await created;
    expect(two.store.anyInForce(NOW)).toBe(true);
    expect(await two.store.authenticate(secret, NOW)).toMatchObject({ id: token.id, label: 'Front desk PBX' });

    const revoked = one.nextChange();
    expect(await two.store.revoke(token.id, NOW + 1000)).toBe(true);
    await revoked;
    expect(await one.store.authenticate(secret, NOW + 2000)).toBeNull();
    expect(await one.store.revoke('tok_0000000000', NOW)).toBe(false);
  });

  it('stores the record with the hash of the secret under the prefix, field the id, never the secret', async () => {
    const { store } = await openInstance();
    const { secret, token } = await store.create({ label: 'phone', expiresAt: '2027-01-01' }, NOW);
    const value = await admin.hget(`${prefix}${TOKENS_KEY}`, token.id);
    expect(value).not.toBeNull();
    expect(value).not.toContain(secret);
    expect(JSON.parse(value ?? '{}')).toEqual({ ...token, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('refuses unknown and expired tokens', async () => {
    const { store } = await openInstance();
    const { secret } = await store.create({ label: 'short-lived', expiresAt: '2026-11-28T14:00:00Z' }, NOW);
    expect(await store.authenticate('prt_unknown', NOW)).toBeNull();
    expect(await store.authenticate(secret, NOW)).not.toBeNull();
    expect(await store.authenticate(secret, Date.parse('2026-11-28T14:00:00Z'))).toBeNull();
  });

  it('notes the last use to the hour, at most one write an hour, seen by the other instance', async () => {
    const one = await openInstance();
    const two = await openInstance();
    await two.store.refresh();
    const created = two.nextChange();
    const { secret, token } = await one.store.create({ label: 'phone' }, NOW);
    await created;
    const key = `${prefix}${TOKENS_KEY}`;
    const stored = async (): Promise<Record<string, unknown>> =>
      JSON.parse((await admin.hget(key, token.id)) ?? '{}') as Record<string, unknown>;

    const used = one.nextChange();
    expect(await two.store.authenticate(secret, NOW)).toMatchObject({ lastUsedAt: '2026-11-28T13:00:00.000Z' });
    await used;
    expect(one.store.list().find((listed) => listed.id === token.id)?.lastUsedAt).toBe('2026-11-28T13:00:00.000Z');
    // Within the hour: no write. The stored value is set an hour back behind the stores' backs
    // (no announcement): a write would bring it to 13:00 again.
    await admin.hset(
      key,
      token.id,
      JSON.stringify({ ...(await stored()), label: 'marker', lastUsedAt: '2026-11-28T12:00:00.000Z' }),
    );
    expect(await two.store.authenticate(secret, NOW + 5 * 60_000)).not.toBeNull();
    expect(await one.store.authenticate(secret, NOW + 12 * 60_000)).not.toBeNull();
    await Promise.all([one.store.refresh(), two.store.refresh()]);
    expect(await stored()).toMatchObject({ label: 'marker', lastUsedAt: '2026-11-28T12:00:00.000Z' });
    // The next hour: written again (the script keeps the rest of the record).
    expect(await two.store.authenticate(secret, Date.parse('2026-11-28T14:05:00Z'))).not.toBeNull();
    await two.store.refresh();
    expect(await stored()).toMatchObject({ label: 'marker', lastUsedAt: '2026-11-28T14:00:00.000Z' });
  });

  it('with Redis unreachable, authenticate is unavailable (503), never an unknown token (401)', async () => {
    const proxy = await startTcpProxy(6379);
    const client = createRedisClient(proxy.url, { keyPrefix: prefix });
    try {
      await waitFor(() => client.isReady());
      const store = await openRedisTokenStore(client, { watch: true, ownsClient: false });
      opened.push(store);
      const one = await openInstance();
      const { secret } = await one.store.create({ label: 'phone' }, NOW);
      await store.refresh();
      expect(await store.authenticate(secret, NOW)).not.toBeNull();
      proxy.setMode('cut');
      await waitFor(() => client.redis.status !== 'ready');
      await expect(store.authenticate(secret, NOW)).rejects.toBeInstanceOf(ReportStoreUnavailable);
      await expect(store.authenticate('prt_unknown', NOW)).rejects.toBeInstanceOf(ReportStoreUnavailable);
      await expect(store.create({ label: 'second' }, NOW)).rejects.toBeInstanceOf(ReportStoreUnavailable);
      // Revoked elsewhere while this instance was cut off: seen once Redis answers again (the
      // re-subscription reads everything), with no change after it to announce it.
      const other = await one.store.create({ label: 'made during the outage' }, NOW);
      expect(await one.store.revoke(other.token.id, NOW)).toBe(true);
      const missed = await one.store.create({ label: 'also during the outage' }, NOW);
      proxy.setMode('pass');
      await waitFor(() => store.list().some((token) => token.id === missed.token.id), 10_000);
      expect(await store.authenticate(other.secret, NOW)).toBeNull();
      expect(await store.authenticate(missed.secret, NOW)).toMatchObject({ label: 'also during the outage' });
    } finally {
      await client.quit();
      await proxy.close();
    }
  });

  it('a CLI run (no following) refuses to open while Redis cannot be reached', async () => {
    const proxy = await startTcpProxy(6379);
    proxy.setMode('cut');
    try {
      await expect(
        openTokenStore(
          { listsFile: '/nonexistent/lists.csv', redis: { url: proxy.url }, redisKeyPrefix: prefix },
          { watch: false, connectWaitMs: 300 },
        ),
      ).rejects.toBeInstanceOf(ReportStoreUnavailable);
    } finally {
      await proxy.close();
    }
  });
});
