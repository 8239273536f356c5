import { describe, expect, it } from 'vitest';
import { recordCommands, useRedisTestClients } from '../../../test/support/redis.js';
import { createRedisSourceCache, decodeCachedResult, encodeCachedResult } from './redis-source-cache.js';
import type { CachedSourceResult } from '../../domain/ports/source-cache.js';

const { prefix, admin, readyClient } = useRedisTestClients('cache');

function entry(overrides: Partial<CachedSourceResult> = {}): CachedSourceResult {
  const nowMs = Date.now();
  return {
    status: 'ok',
    data: { score: 7, commentList: [{ text: 'é' }] },
    fetchedAt: new Date(nowMs).toISOString(),
    freshUntil: nowMs + 60_000,
    staleUntil: nowMs + 120_000,
    ...overrides,
  };
}

describe('Redis source cache', () => {
  it('round-trips every member through the compact encoding', () => {
    const value = entry({ lastFailure: 'http_429' });
    expect(decodeCachedResult(encodeCachedResult(value))).toEqual(value);
    const notFound = entry({ status: 'not_found', data: null });
    expect(decodeCachedResult(encodeCachedResult(notFound))).toEqual(notFound);
    expect(decodeCachedResult('{"s":"x"}')).toBeUndefined();
    expect(decodeCachedResult('not json')).toBeUndefined();
  });

  it('an entry written by one instance is read by another, and expires in Redis at staleUntil', async () => {
    const writer = createRedisSourceCache({ client: await readyClient() });
    const reader = createRedisSourceCache({ client: await readyClient() });
    const value = entry();
    await writer.set('v3:primary:abc', value, 120);
    expect(await reader.get('v3:primary:abc')).toEqual(value);
    const ttl = await admin.pttl(`${prefix}cache:v3:primary:abc`);
    expect(ttl).toBeGreaterThan(119_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
  });

  it('serves a hot entry from the local tier without a Redis round trip, and re-reads after the local TTL', async () => {
    let nowMs = Date.now();
    const cache = createRedisSourceCache({ client: await readyClient(), localTtlMs: 5000, now: () => nowMs });
    const other = createRedisSourceCache({ client: await readyClient() });
    await cache.set('v3:community:hot', entry(), 120);
    const updated = entry({ fetchedAt: '2030-01-01T00:00:00.000Z' });
    await other.set('v3:community:hot', updated, 120);
    expect((await cache.get('v3:community:hot'))?.fetchedAt).not.toBe(updated.fetchedAt);
    nowMs += 5001;
    expect((await cache.get('v3:community:hot'))?.fetchedAt).toBe(updated.fetchedAt);
  });

  it('re-reads a local copy that needs refreshing, in case another instance refreshed it', async () => {
    const cache = createRedisSourceCache({ client: await readyClient() });
    const other = createRedisSourceCache({ client: await readyClient() });
    await cache.set('v3:signals:stale', entry({ freshUntil: Date.now() - 1 }), 120);
    const refreshed = entry();
    await other.set('v3:signals:stale', refreshed, 120);
    expect(await cache.get('v3:signals:stale')).toEqual(refreshed);
  });

  it('keeps working in memory when Redis is unreachable, without sending it a command', async () => {
    const client = await readyClient('redis://127.0.0.1:1');
    const commands = recordCommands(client);
    const cache = createRedisSourceCache({ client });
    const value = entry();
    await cache.set('v3:primary:down', value, 120);
    expect(await cache.get('v3:primary:down')).toEqual(value);
    expect(await cache.get('v3:primary:missing')).toBeUndefined();
    expect(commands.names()).toEqual([]);
  });

  it('a zero TTL removes the entry everywhere', async () => {
    const cache = createRedisSourceCache({ client: await readyClient() });
    await cache.set('v3:primary:gone', entry(), 120);
    await cache.set('v3:primary:gone', entry(), 0);
    expect(await cache.get('v3:primary:gone')).toBeUndefined();
    expect(await admin.exists(`${prefix}cache:v3:primary:gone`)).toBe(0);
  });
});
