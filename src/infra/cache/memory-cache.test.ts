import { describe, expect, it } from 'vitest';
import { encodeCachedResult } from './entry-codec.js';
import {
  createMemorySourceCache,
  DECODED_SHARE,
  DEFAULT_CACHE_MAX_BYTES,
  ENTRY_OVERHEAD_BYTES,
  entryHeapCost,
} from './memory-cache.js';
import { cellBytesOf, cellClassOf, CELL_OVERHEAD_BYTES, createSlabStore, SLAB_OVERHEAD_BYTES } from './slab-store.js';
import { toSourceCacheKey, type CachedSourceResult } from '../../domain/ports/source-cache.js';
import { createKeyedHasher } from '../hash.js';

const NOW = 1_800_000_000_000;

/** What one entry costs when every slab holds one cell (small caps): its slab and its heap share. */
function oneCellEntryCost(key: string, stored: string, storedBudget: number): number {
  return createSlabStore(storedBudget).slabCostOf(stored.length) + entryHeapCost(key);
}

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

  it('holds each entry as its stored form, charged its slab and its key with the fixed overhead', async () => {
    const cache = createMemorySourceCache();
    await cache.set('v3:primary:abc', ENTRY, 120);
    const stored = cache.peekStored('v3:primary:abc');
    expect(stored).toBe(encodeCachedResult(ENTRY));
    const storedBudget = DEFAULT_CACHE_MAX_BYTES - Math.floor(DEFAULT_CACHE_MAX_BYTES * DECODED_SHARE);
    expect(cache.chargedBytes()).toBe(
      createSlabStore(storedBudget).slabCostOf((stored ?? '').length) + 'v3:primary:abc'.length + ENTRY_OVERHEAD_BYTES,
    );
  });

  it('charges a second entry of the same size only its key and overhead: it takes a cell of the same slab', async () => {
    const cache = createMemorySourceCache();
    await cache.set('v3:primary:abc', ENTRY, 120);
    const first = cache.chargedBytes();
    await cache.set('v3:primary:abd', ENTRY, 120);
    expect(cache.chargedBytes()).toBe(first + entryHeapCost('v3:primary:abd'));
    await cache.set('v3:primary:abc', ENTRY, 0);
    await cache.set('v3:primary:abd', ENTRY, 0);
    expect(cache.chargedBytes()).toBe(0);
  });

  it('never holds more charged bytes than its cap, dropping the least recently used', async () => {
    const stored = encodeCachedResult(ENTRY);
    // Small enough that each slab holds one cell, so the cap holds exactly five entries and a half.
    const perEntry = oneCellEntryCost('k00', stored, 8 * 1024);
    const maxBytes = Math.floor(perEntry * 5 + perEntry / 2);
    const cache = createMemorySourceCache({ maxBytes, decodedMaxEntries: 0 });
    expect(oneCellEntryCost('k00', stored, maxBytes)).toBe(perEntry);
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
    const perEntry = oneCellEntryCost('a', encodeCachedResult(ENTRY), 4 * 1024);
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
    const small = encodeCachedResult({ ...ENTRY, data: { score: 1 } });
    const cache = createMemorySourceCache({ maxBytes: oneCellEntryCost('a', small, 2048) + 100, decodedMaxEntries: 0 });
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

  it('reads back every entry it holds, byte for byte, through churn of entries of many sizes', async () => {
    const maxBytes = 256 * 1024;
    const cache = createMemorySourceCache({ maxBytes, decodedMaxEntries: 0 });
    const written = new Map<string, CachedSourceResult>();
    for (let index = 0; index < 3000; index += 1) {
      const key = `v3:primary:${index % 700}`;
      const value: CachedSourceResult = { ...ENTRY, data: { score: index % 9, text: 'é'.repeat((index * 37) % 900) } };
      await cache.set(key, value, 120);
      written.set(key, value);
      expect(cache.chargedBytes()).toBeLessThanOrEqual(maxBytes);
    }
    let held = 0;
    for (const [key, value] of written) {
      const read = await cache.get(key);
      if (read === undefined) continue;
      held += 1;
      expect(read).toEqual(value);
      expect(cache.peekStored(key)).toBe(encodeCachedResult(value));
    }
    expect(held).toBe(cache.size());
    expect(held).toBeGreaterThan(50);
  });

  it('gives the memory of a size no longer written to the size that is', async () => {
    const maxBytes = 512 * 1024;
    const small: CachedSourceResult = { ...ENTRY, data: { text: 'a'.repeat(100) } };
    const large: CachedSourceResult = { ...ENTRY, data: { text: 'b'.repeat(3000) } };
    const onlyLarge = createMemorySourceCache({ maxBytes, decodedMaxEntries: 0 });
    for (let index = 0; index < 1000; index += 1) await onlyLarge.set(`l${index}`, large, 120);
    const cache = createMemorySourceCache({ maxBytes, decodedMaxEntries: 0 });
    for (let index = 0; index < 5000; index += 1) await cache.set(`s${index}`, small, 120);
    expect(cache.size()).toBeGreaterThan(1000);
    for (let index = 0; index < 1000; index += 1) {
      await cache.set(`l${index}`, large, 120);
      expect(cache.chargedBytes()).toBeLessThanOrEqual(maxBytes);
    }
    let largeHeld = 0;
    for (let index = 0; index < 1000; index += 1) if ((await cache.get(`l${index}`)) !== undefined) largeHeld += 1;
    expect(largeHeld).toBeGreaterThanOrEqual(Math.floor(onlyLarge.size() * 0.9));
  });

  it('empties one slab, not the cache, to store a size it holds no free cell of', async () => {
    const maxBytes = 512 * 1024;
    const small: CachedSourceResult = { ...ENTRY, data: { text: 'a'.repeat(100) } };
    const cache = createMemorySourceCache({ maxBytes, decodedMaxEntries: 0 });
    const count = 5000;
    for (let index = 0; index < count; index += 1) await cache.set(`s${index}`, small, 120);
    // Read in a scattered order, so the least recently used entries lie in every slab.
    for (let step = 0; step < count; step += 1) await cache.get(`s${(step * 7919) % count}`);
    const before = cache.size();
    await cache.set('large', { ...ENTRY, data: { text: 'b'.repeat(3000) } }, 120);
    expect(await cache.get('large')).toBeDefined();
    const storedBudget = maxBytes - maxBytes * DECODED_SHARE;
    const slabs = createSlabStore(storedBudget);
    const smallLength = encodeCachedResult(small).length;
    const cellsPerSlab =
      (slabs.slabCostOf(smallLength) - SLAB_OVERHEAD_BYTES) /
      (cellBytesOf(cellClassOf(smallLength)) + CELL_OVERHEAD_BYTES);
    // The large entry's slab takes the room of this many slabs of small ones.
    const slabsFreed = Math.ceil(slabs.slabCostOf(3100) / slabs.slabCostOf(smallLength));
    expect(slabsFreed).toBeLessThanOrEqual(2);
    expect(before - (cache.size() - 1)).toBeLessThanOrEqual(16 + slabsFreed * cellsPerSlab);
    expect(before - (cache.size() - 1)).toBeLessThan(before / 20);
    expect(cache.chargedBytes()).toBeLessThanOrEqual(maxBytes);
  });

  it('charges nothing once cleared', async () => {
    const cache = createMemorySourceCache();
    for (let index = 0; index < 100; index += 1)
      await cache.set(`k${index}`, { ...ENTRY, data: { text: 'x'.repeat(index * 10) } }, 120);
    await cache.get('k1');
    cache.clear();
    expect(cache.size()).toBe(0);
    expect(cache.chargedBytes()).toBe(0);
    expect(await cache.get('k1')).toBeUndefined();
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
    expect(toSourceCacheKey(other, 'primary', '+33612345678')).not.toBe(
      toSourceCacheKey(hash, 'primary', '+33612345678'),
    );
  });
});
