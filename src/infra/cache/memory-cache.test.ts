import { describe, expect, it } from 'vitest';
import { createMemorySourceCache } from './memory-cache.js';
import { toSourceCacheKey, type CachedSourceResult } from './source-cache.js';
import { createKeyedHasher } from '../hash.js';

const ENTRY: CachedSourceResult = {
  status: 'ok',
  data: { score: 5 },
  fetchedAt: '2026-03-01T12:00:00.000Z',
  freshUntil: 1,
  staleUntil: 2,
};

describe('memory source cache', () => {
  it('returns what was set, and undefined for an unknown key', async () => {
    const cache = createMemorySourceCache({ maxEntries: 10 });
    await cache.set('a', ENTRY, 60);
    expect(await cache.get('a')).toEqual(ENTRY);
    expect(await cache.get('b')).toBeUndefined();
  });

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const cache = createMemorySourceCache({ maxEntries: 2 });
    await cache.set('a', ENTRY, 60);
    await cache.set('b', ENTRY, 60);
    await cache.get('a');
    await cache.set('c', ENTRY, 60);
    expect(cache.size()).toBe(2);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toEqual(ENTRY);
  });

  it('drops an entry set with a TTL of zero', async () => {
    const cache = createMemorySourceCache({ maxEntries: 10 });
    await cache.set('a', ENTRY, 60);
    await cache.set('a', ENTRY, 0);
    expect(await cache.get('a')).toBeUndefined();
  });

  it('expires entries after their storage TTL', async () => {
    const cache = createMemorySourceCache({ maxEntries: 10 });
    await cache.set('a', ENTRY, 0.05);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await cache.get('a')).toBeUndefined();
  });
});

describe('toSourceCacheKey', () => {
  const hash = createKeyedHasher('cache-key-test-secret-123');

  it('is stable, versioned, per slot, and does not contain the number', () => {
    const key = toSourceCacheKey(hash, 'primary', '+33612345678');
    expect(key).toBe(toSourceCacheKey(hash, 'primary', '+33612345678'));
    expect(key).toMatch(/^v2:primary:[A-Za-z0-9_-]{22}$/);
    expect(key).not.toContain('612345678');
    expect(toSourceCacheKey(hash, 'signals', '+33612345678')).not.toBe(key);
  });

  it('differs under another secret', () => {
    const other = createKeyedHasher('another-secret-of-16+chars');
    expect(toSourceCacheKey(other, 'primary', '+33612345678')).not.toBe(toSourceCacheKey(hash, 'primary', '+33612345678'));
  });
});
