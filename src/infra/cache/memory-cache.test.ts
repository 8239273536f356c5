import { describe, expect, it } from 'vitest';
import { encodeCachedResult } from './entry-codec.js';
import { createMemorySourceCache, entryCost, ENTRY_OVERHEAD_BYTES } from './memory-cache.js';
import { toSourceCacheKey, type CachedSourceResult } from '../../domain/ports/source-cache.js';
import { createKeyedHasher } from '../hash.js';

const NOW = 1_800_000_000_000;

const ENTRY: CachedSourceResult = {
  status: 'ok',
  data: { score: 5, commentList: [{ text: 'Démarchage insistant' }] },
  fetchedAt: '2026-03-01T12:00:00.000Z',
  freshUntil: NOW + 60_000,
  staleUntil: NOW + 120_000,
};

describe('memory source cache', () => {
  it('returns what was set, and undefined for an unknown key', async () => {
    const cache = createMemorySourceCache();
    await cache.set('a', ENTRY, 120);
    expect(await cache.get('a')).toEqual(ENTRY);
    expect(await cache.get('b')).toBeUndefined();
  });

  it('holds each entry as its stored form, charged its key and text length plus the fixed overhead', async () => {
    const cache = createMemorySourceCache();
    await cache.set('v3:primary:abc', ENTRY, 120);
    const stored = cache.peekStored('v3:primary:abc');
    expect(stored).toBe(encodeCachedResult(ENTRY));
    expect(cache.chargedBytes()).toBe('v3:primary:abc'.length + (stored ?? '').length + ENTRY_OVERHEAD_BYTES);
  });

  it('never holds more charged bytes than its cap, dropping the least recently used', async () => {
    const perEntry = entryCost('k00', encodeCachedResult(ENTRY));
    const maxBytes = perEntry * 5 + perEntry / 2;
    const cache = createMemorySourceCache({ maxBytes });
    for (let index = 0; index < 40; index += 1) {
      await cache.set(`k${String(index).padStart(2, '0')}`, ENTRY, 120);
      expect(cache.chargedBytes()).toBeLessThanOrEqual(maxBytes);
      if (index === 2) await cache.get('k00');
    }
    expect(cache.size()).toBe(5);
    expect(await cache.get('k39')).toEqual(ENTRY);
    expect(await cache.get('k01')).toBeUndefined();
  });

  it('keeps a recently read entry over older ones', async () => {
    const perEntry = entryCost('a', encodeCachedResult(ENTRY));
    // The decoded tier off, so the whole cap holds stored entries (its share is tested in charges.test.ts).
    const cache = createMemorySourceCache({ maxBytes: perEntry * 2, decodedMaxEntries: 0 });
    await cache.set('a', ENTRY, 120);
    await cache.set('b', ENTRY, 120);
    await cache.get('a');
    await cache.get('a');
    await cache.set('c', ENTRY, 120);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toEqual(ENTRY);
    expect(await cache.get('c')).toEqual(ENTRY);
  });

  it('refuses an entry larger than the whole cap and keeps no older copy of it', async () => {
    const cache = createMemorySourceCache({ maxBytes: 260, decodedMaxEntries: 0 });
    await cache.set('a', { ...ENTRY, data: { score: 1 } }, 120);
    expect(await cache.get('a')).toBeDefined();
    await cache.set('a', { ...ENTRY, data: { text: 'x'.repeat(500) } }, 120);
    expect(await cache.get('a')).toBeUndefined();
    expect(cache.chargedBytes()).toBe(0);
  });

  it('holds at most maxEntries when a count cap is set, dropping the least recently used', async () => {
    const cache = createMemorySourceCache({ maxEntries: 2 });
    await cache.set('a', ENTRY, 120);
    await cache.set('b', ENTRY, 120);
    await cache.get('a');
    await cache.set('c', ENTRY, 120);
    expect(cache.size()).toBe(2);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toEqual(ENTRY);
  });

  it('drops an entry set with a TTL of zero', async () => {
    const cache = createMemorySourceCache();
    await cache.set('a', ENTRY, 120);
    await cache.set('a', ENTRY, 0);
    expect(await cache.get('a')).toBeUndefined();
    expect(cache.size()).toBe(0);
  });

  it('keeps no clock of its own: an entry past staleUntil is returned for the engine to judge, and dropped by a TTL of zero', async () => {
    const expired: CachedSourceResult = { ...ENTRY, freshUntil: 1, staleUntil: 2 };
    const cache = createMemorySourceCache();
    await cache.set('a', expired, 120);
    expect(await cache.get('a')).toEqual(expired);
    await cache.set('a', expired, 0);
    expect(await cache.get('a')).toBeUndefined();
  });

  it('serves the rewritten entry after a set, not the decoded copy of the former one', async () => {
    const cache = createMemorySourceCache();
    await cache.set('a', ENTRY, 120);
    expect(await cache.get('a')).toEqual(ENTRY);
    const refreshed: CachedSourceResult = { ...ENTRY, lastFailure: 'http_5xx' };
    await cache.set('a', refreshed, 120);
    expect(await cache.get('a')).toEqual(refreshed);
  });

  it('answers every key right when more keys are read than the decoded tier holds', async () => {
    const cache = createMemorySourceCache({ decodedMaxEntries: 2 });
    const values = Array.from({ length: 5 }, (_, index): CachedSourceResult => ({ ...ENTRY, data: { score: index } }));
    for (const [index, value] of values.entries()) await cache.set(`k${index}`, value, 120);
    for (let pass = 0; pass < 3; pass += 1) {
      for (const [index, value] of values.entries()) expect(await cache.get(`k${index}`)).toEqual(value);
    }
  });

  it('answers the same with the decoded tier turned off', async () => {
    const cache = createMemorySourceCache({ decodedMaxEntries: 0 });
    await cache.set('a', ENTRY, 120);
    expect(await cache.get('a')).toEqual(ENTRY);
    expect(await cache.get('a')).toEqual(ENTRY);
  });

  it('rejects a cap that is not a positive whole number', () => {
    expect(() => createMemorySourceCache({ maxBytes: 0 })).toThrow(RangeError);
    expect(() => createMemorySourceCache({ maxBytes: 1.5 })).toThrow(RangeError);
  });
});

describe('toSourceCacheKey', () => {
  const hash = createKeyedHasher('cache-key-test-secret-123');

  it('is stable, versioned, per slot, and does not contain the number', () => {
    const key = toSourceCacheKey(hash, 'primary', '+33612345678');
    expect(key).toBe(toSourceCacheKey(hash, 'primary', '+33612345678'));
    expect(key).toMatch(/^v3:primary:[A-Za-z0-9_-]{22}$/);
    expect(key).not.toContain('612345678');
    expect(toSourceCacheKey(hash, 'signals', '+33612345678')).not.toBe(key);
  });

  it('differs under another secret', () => {
    const other = createKeyedHasher('another-secret-of-16+chars');
    expect(toSourceCacheKey(other, 'primary', '+33612345678')).not.toBe(toSourceCacheKey(hash, 'primary', '+33612345678'));
  });
});
