// In-process implementation of the per-source result cache. Each entry is held as its stored
// form (entry-codec: one flat ASCII string, serialised once when written), not as the object
// graph the engine builds, and the LRU (lru-cache 11) is bounded by bytes (`CACHE_MAX_MB`):
// each entry is charged its key and text length plus a fixed overhead, so memory stays under a
// stated cap whatever the traffic. `CACHE_MAX_ENTRIES`, when set, adds a count cap.
//
// The LRU keeps no per-entry TTL bookkeeping: the engine judges fresh, stale and expired from
// the entry's own freshUntil/staleUntil on its own clock, and an expired entry is either
// rewritten by the refetch it causes or, never read again, evicted like any cold entry. The
// most recently decoded entries also keep their object (a ring bounded in count and in bytes,
// charged against the same cap), so a hit on a hot number costs one LRU read, not a JSON parse.
import { LRUCache } from 'lru-cache';
import { decodeCachedResult, encodeCachedResult } from './entry-codec.js';
import type { CachedSourceResult, SourceResultCache } from '../../domain/ports/source-cache.js';

export interface MemorySourceCacheOptions {
  /** CACHE_MAX_MB in bytes: the least recently used entries are dropped beyond it (default DEFAULT_CACHE_MAX_BYTES). */
  maxBytes?: number;
  /** CACHE_MAX_ENTRIES: an optional count cap on top of the byte cap. */
  maxEntries?: number;
  /** How many of the most recently read entries are also kept decoded (default 1000; 0 turns it off). */
  decodedMaxEntries?: number;
}

/** What the cache is charged, by kind (the metrics gauge and the tests read it). */
export interface MemoryCacheCharges {
  /** Stored entries: keys, stored text and per-entry bookkeeping. */
  entries: number;
  /** Decoded objects of the most recently read entries. */
  decoded: number;
}

export interface MemorySourceCache extends SourceResultCache {
  /** Synchronous read (the engine's all-fresh path): same answer and same recency effect as `get`. */
  peek(key: string): CachedSourceResult | undefined;
  /** Current entry count (readiness, metrics, tests). */
  size(): number;
  /** Bytes charged against the cap: entryCost() of every entry held, plus decodedCost() of every decoded object kept. Never above maxBytes. */
  chargedBytes(): number;
  /** chargedBytes() by kind. */
  charges(): MemoryCacheCharges;
  /** The stored form of an entry (the same text Redis holds), without touching its recency. */
  peekStored(key: string): string | undefined;
  clear(): void;
}

export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;
export const DEFAULT_DECODED_MAX_ENTRIES = 1000;

/**
 * What one entry costs beyond the characters of its key and text, in bytes (64-bit V8, no
 * pointer compression): two string headers (16 each, plus alignment), the slot object (40),
 * the Map entry and its share of the hash table, and the LRU's per-entry list slots (growable
 * arrays: up to twice their length). Measured: 394 bytes of heap per entry of 219 charged
 * characters, where 128 charged 379; 160 covers it (docs/cache.md).
 */
export const ENTRY_OVERHEAD_BYTES = 160;

/** The bytes an entry is charged against the cap; key and text are ASCII, one byte per character. */
export function entryCost(key: string, stored: string): number {
  return key.length + stored.length + ENTRY_OVERHEAD_BYTES;
}

/**
 * What keeping an entry's decoded object costs: measured at 1.23× its JSON length on the heap
 * for the sample data (docs/cache.md); twice the stored length covers text that V8 holds as
 * two bytes per character once the escapes are decoded, plus the ring's own slot.
 */
export function decodedCost(stored: string): number {
  return 2 * stored.length + 64;
}

/** The share of maxBytes the decoded objects may take; the stored entries get the rest. */
export const DECODED_SHARE = 1 / 16;

/** One entry: its stored text, and the decoded object while the entry is among the recently decoded. */
interface Slot {
  readonly stored: string;
  value: CachedSourceResult | undefined;
}

export function createMemorySourceCache(options: MemorySourceCacheOptions = {}): MemorySourceCache {
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError(`maxBytes must be a positive whole number, got ${maxBytes}`);
  // The decoded tier is a ring of the last slots decoded, bounded in count (decodedMax) and in
  // bytes (DECODED_SHARE of the cap): a slot pushed out of it drops its object and keeps its
  // text. The stored entries get the rest of the cap, so both together stay under maxBytes.
  const decodedMax = options.decodedMaxEntries ?? DEFAULT_DECODED_MAX_ENTRIES;
  const decodedBudget = decodedMax === 0 ? 0 : Math.floor(maxBytes * DECODED_SHARE);
  const store = new LRUCache<string, Slot>({
    maxSize: Math.max(1, maxBytes - decodedBudget),
    sizeCalculation: (slot, key) => entryCost(key, slot.stored),
    ...(options.maxEntries === undefined ? {} : { max: options.maxEntries }),
  });
  const ring: (Slot | undefined)[] = new Array<Slot | undefined>(decodedMax).fill(undefined);
  let ringStart = 0;
  let ringCount = 0;
  let decodedBytes = 0;

  function pushOutOldest(): void {
    const oldest = ring[ringStart];
    ring[ringStart] = undefined;
    ringStart = (ringStart + 1) % decodedMax;
    ringCount -= 1;
    if (oldest?.value !== undefined) {
      oldest.value = undefined;
      decodedBytes -= decodedCost(oldest.stored);
    }
  }

  function keepDecoded(slot: Slot, value: CachedSourceResult): void {
    const cost = decodedCost(slot.stored);
    if (decodedMax === 0 || cost > decodedBudget) return;
    while (ringCount > 0 && (ringCount === decodedMax || decodedBytes + cost > decodedBudget)) pushOutOldest();
    slot.value = value;
    decodedBytes += cost;
    ring[(ringStart + ringCount) % decodedMax] = slot;
    ringCount += 1;
  }

  /** One LRU read, which also keeps a hot entry recent; the JSON is parsed only when the entry is not among the recently decoded. */
  function read(key: string): CachedSourceResult | undefined {
    const slot = store.get(key);
    if (slot === undefined) return undefined;
    if (slot.value !== undefined) return slot.value;
    const value = decodeCachedResult(slot.stored);
    if (value === undefined) {
      store.delete(key);
      return undefined;
    }
    keepDecoded(slot, value);
    return value;
  }

  return {
    async get(key) {
      return read(key);
    },
    peek: read,
    async set(key, value, ttlSeconds) {
      if (ttlSeconds <= 0) {
        store.delete(key);
        return;
      }
      // A new slot, decoded again on its first read, so what is served is always what the
      // stored form says. An entry larger than the whole cap is refused (and an older copy dropped).
      store.set(key, { stored: encodeCachedResult(value), value: undefined });
    },
    size: () => store.size,
    chargedBytes: () => store.calculatedSize + decodedBytes,
    charges: () => ({ entries: store.calculatedSize, decoded: decodedBytes }),
    peekStored: (key) => store.peek(key)?.stored,
    clear: () => {
      store.clear();
      while (ringCount > 0) pushOutOldest();
    },
  };
}
