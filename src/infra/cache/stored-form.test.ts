// The memory cache and the Redis cache hold one stored form: an entry written by either is read
// by the other, byte for byte, through a real Redis.
import { describe, expect, it } from 'vitest';
import { useRedisTestClients } from '../../../test/support/redis.js';
import { SAMPLE_DATA } from '../../../harness/lookup.js';
import { encodeCachedResult } from './entry-codec.js';
import { createMemorySourceCache } from './memory-cache.js';
import { createRedisSourceCache } from './redis-source-cache.js';
import { sourceCacheKeyOf, type CachedSourceResult } from '../../domain/ports/source-cache.js';

const { prefix, admin, readyClient } = useRedisTestClients('stored-form');

function sampleEntry(overrides: Partial<CachedSourceResult> = {}): CachedSourceResult {
  const nowMs = Date.now();
  return {
    status: 'ok',
    data: SAMPLE_DATA.primary,
    fetchedAt: new Date(nowMs).toISOString(),
    freshUntil: nowMs + 60_000,
    staleUntil: nowMs + 120_000,
    ...overrides,
  };
}

describe('stored form shared by the memory and Redis caches', () => {
  it('the Redis cache reads an entry whose stored form the memory cache wrote', async () => {
    const memory = createMemorySourceCache();
    const key = sourceCacheKeyOf('primary', 'memoryWroteThis0000000');
    const value = sampleEntry({ lastFailure: 'http_5xx' });
    await memory.set(key, value, 120);
    const stored = memory.peekStored(key);
    expect(stored).toBeDefined();
    await admin.set(`${prefix}cache:${key}`, stored ?? '', 'PX', 120_000);
    const redis = createRedisSourceCache({ client: await readyClient() });
    expect(await redis.get(key)).toEqual(value);
  });

  it('Redis holds the same bytes the memory cache holds for the same entry', async () => {
    const redis = createRedisSourceCache({ client: await readyClient() });
    const memory = createMemorySourceCache();
    const key = sourceCacheKeyOf('community', 'redisWroteThis00000000');
    const value = sampleEntry({ data: SAMPLE_DATA.community });
    await redis.set(key, value, 120);
    await memory.set(key, value, 120);
    const inRedis = await admin.getBuffer(`${prefix}cache:${key}`);
    expect(inRedis?.toString('latin1')).toBe(memory.peekStored(key));
    expect(inRedis?.toString('latin1')).toBe(encodeCachedResult(value));
    // Pure ASCII: as many bytes in Redis as characters in memory, accents included.
    expect(inRedis?.length).toBe(memory.peekStored(key)?.length);
  });

  it('an entry in the former layout is not read by either cache', async () => {
    const key = sourceCacheKeyOf('signals', 'formerLayout0000000000');
    const nowMs = Date.now();
    await admin.set(
      `${prefix}cache:${key}`,
      JSON.stringify({ s: 'o', d: SAMPLE_DATA.signals, f: 't', u: nowMs + 60_000, x: nowMs + 120_000 }),
      'PX',
      120_000,
    );
    const redis = createRedisSourceCache({ client: await readyClient() });
    expect(await redis.get(key)).toBeUndefined();
  });
});
