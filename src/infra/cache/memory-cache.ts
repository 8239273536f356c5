// In-process implementation of the per-source result cache. Each entry is held as its stored
// form (entry-codec: one ASCII JSON text, serialised once when written), as bytes in a slab
// outside the JS heap (slab-store.ts), not as the object graph the engine builds nor as a
// string on the heap: cache churn then neither fragments V8's old generation nor makes it grow
// (docs/cache.md, "What the runtime keeps"). The LRU (lru-cache 11) holds only the key and a
// number (the entry's handle in the slabs; a small slot once the entry is read), and the whole is bounded in bytes (`CACHE_MAX_MB`):
// every slab is charged what it takes, free cells included, and every entry its key and its
// bookkeeping on the heap, so memory stays under a stated cap whatever the traffic.
// `CACHE_MAX_ENTRIES`, when set, adds a count cap.
//
// The LRU keeps no per-entry TTL bookkeeping: the engine judges fresh, stale and expired from
// the entry's own freshUntil/staleUntil on its own clock, and an expired entry is either
// rewritten by the refetch it causes or, never read again, evicted like any cold entry. The
// most recently decoded entries also keep their object (a ring bounded in count and in bytes,
// charged against the same cap), so a hit on a hot number costs one LRU read, not a JSON parse.
import { LRUCache } from 'lru-cache';
import { decodeCachedResult, encodeCachedResult } from './entry-codec.js';
import { createSlabStore } from './slab-store.js';
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
  /** Stored entries: their slabs (free cells included), keys and per-entry bookkeeping. */
  entries: number;
  /** Decoded objects of the most recently read entries. */
  decoded: number;
}

export interface MemorySourceCache extends SourceResultCache {
  /** Synchronous read (the engine's all-fresh path): same answer and same recency effect as `get`. */
  peek(key: string): CachedSourceResult | undefined;
  /** Current entry count (readiness, metrics, tests). */
  size(): number;
  /** Bytes charged against the cap: every slab held, entryHeapCost() of every entry, decodedCost() of every decoded object kept. Never above maxBytes. */
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
 * What one entry costs on the JS heap beyond the characters of its key: the key string's header,
 * the LRU's slots for it (key, value, two list links) and its Map entry with its share of the
 * hash table, and its slot in the slab's key list. Measured (docs/cache.md): 106 bytes of heap
 * per entry for 100,000 entries, beyond its key string (a 16-byte header and its characters,
 * rounded up to 8 bytes); 136 covers both.
 */
export const ENTRY_OVERHEAD_BYTES = 136;

/** What an entry is charged on the heap (its bytes are charged with their slab: slab-store.ts). */
export function entryHeapCost(key: string): number {
  return key.length + ENTRY_OVERHEAD_BYTES;
}

/**
 * What keeping an entry's decoded object costs, from its stored length: measured at 1.23× its
 * JSON length on the heap for the sample data (docs/cache.md); twice the stored length covers
 * text that V8 holds as two bytes per character once the escapes are decoded, plus the LRU's slots.
 */
export function decodedCost(storedLength: number): number {
  return 2 * storedLength + 64;
}

/** The share of maxBytes the decoded objects may take; the stored entries get the rest. */
export const DECODED_SHARE = 1 / 16;

/** LRU tail entries dropped to find a free cell of the size needed before a whole slab is emptied for it. */
const EVICTIONS_BEFORE_SLAB = 16;

/**
 * Charged per entry once it has been read: the small object that then stands for it in the LRU
 * (its handle and, while it is among the recently decoded, its decoded object), so that a hit on
 * a hot entry is one LRU read. An entry never read since it was written is a bare number.
 */
export const DECODED_SLOT_BYTES = 48;

/** An entry read since it was written: its handle, and its object while among the recently decoded. */
interface DecodedSlot {
  readonly handle: number;
  value: CachedSourceResult | undefined;
  /** decodedCost() of `value`, while it is kept. */
  cost: number;
}

/** What the LRU holds per entry: its handle in the slabs, or its slot once it has been read. */
type Held = number | DecodedSlot;

const handleOf = (held: Held): number => (typeof held === 'number' ? held : held.handle);

export function createMemorySourceCache(options: MemorySourceCacheOptions = {}): MemorySourceCache {
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw new RangeError(`maxBytes must be a positive whole number, got ${maxBytes}`);
  // The decoded tier is a ring of the last slots decoded, bounded in count (decodedMax) and in
  // bytes (DECODED_SHARE of the cap): a slot pushed out of it drops its object and keeps its
  // handle. The stored entries get the rest of the cap, so both together stay under maxBytes.
  const decodedMax = options.decodedMaxEntries ?? DEFAULT_DECODED_MAX_ENTRIES;
  const decodedBudget = decodedMax === 0 ? 0 : Math.floor(maxBytes * DECODED_SHARE);
  const storedBudget = Math.max(1, maxBytes - decodedBudget);
  const slabs = createSlabStore(storedBudget);
  const ring: (DecodedSlot | undefined)[] = new Array<DecodedSlot | undefined>(decodedMax).fill(undefined);
  let ringStart = 0;
  let ringCount = 0;
  let decodedBytes = 0;

  function forget(slot: DecodedSlot): void {
    if (slot.value === undefined) return;
    slot.value = undefined;
    decodedBytes -= slot.cost;
  }

  function pushOutOldest(): void {
    const oldest = ring[ringStart];
    ring[ringStart] = undefined;
    ringStart = (ringStart + 1) % decodedMax;
    ringCount -= 1;
    if (oldest !== undefined) forget(oldest);
  }

  function keepDecoded(slot: DecodedSlot, value: CachedSourceResult, storedLength: number): void {
    const cost = decodedCost(storedLength);
    if (cost > decodedBudget) return;
    while (ringCount > 0 && (ringCount === decodedMax || decodedBytes + cost > decodedBudget)) pushOutOldest();
    slot.value = value;
    slot.cost = cost;
    decodedBytes += cost;
    ring[(ringStart + ringCount) % decodedMax] = slot;
    ringCount += 1;
  }

  // Whatever removes an entry (eviction, delete, a count cap, clear) frees its cell and drops its
  // decoded object. The LRU's own size is each entry's heap charge; the slabs are charged on top
  // (`slabs.chargedBytes()`), and `makeRoom` keeps both under the budget.
  const store = new LRUCache<string, Held>({
    maxSize: storedBudget,
    sizeCalculation: (held, key) => entryHeapCost(key) + (typeof held === 'number' ? 0 : DECODED_SLOT_BYTES),
    dispose: (held) => {
      if (typeof held !== 'number') forget(held);
      slabs.free(handleOf(held));
    },
    ...(options.maxEntries === undefined ? {} : { max: options.maxEntries }),
  });
  const storedCharge = (): number => store.calculatedSize + slabs.chargedBytes();

  /**
   * Drops least recently used entries until an entry of `key` and `length` fits under the
   * budget, with the slab it needs if no cell of its size is free. After a few evictions that
   * free no cell of that size, every entry of the slab with the fewest live cells is dropped, so
   * that a size no longer written can give its slabs to one that is. False when it cannot fit.
   */
  function makeRoom(key: string, length: number): boolean {
    const heap = entryHeapCost(key);
    const slabCost = slabs.slabCostOf(length);
    if (heap + slabCost > storedBudget) return false;
    let evictions = 0;
    while (storedCharge() + heap + (slabs.wouldAllocate(length) ? slabCost : 0) > storedBudget) {
      if (store.size === 0) return false;
      if (evictions < EVICTIONS_BEFORE_SLAB) {
        store.pop();
        evictions += 1;
      } else {
        for (const held of slabs.fewestLiveKeys()) store.delete(held);
      }
    }
    return true;
  }

  /** The slot that stands for an entry once read (made on its first read, charged DECODED_SLOT_BYTES); undefined when it cannot fit. */
  function slotOf(key: string, held: Held): DecodedSlot | undefined {
    if (typeof held !== 'number') return held;
    // The entry was just read, so it is the most recent: what is dropped to make room is older.
    while (storedCharge() + DECODED_SLOT_BYTES > storedBudget && store.size > 1) store.pop();
    if (storedCharge() + DECODED_SLOT_BYTES > storedBudget) return undefined;
    const slot: DecodedSlot = { handle: held, value: undefined, cost: 0 };
    store.set(key, slot, { noDisposeOnSet: true });
    return slot;
  }

  /** One LRU read, which also keeps a hot entry recent; the JSON is parsed only when the entry is not among the recently decoded. */
  function read(key: string): CachedSourceResult | undefined {
    const held = store.get(key);
    if (held === undefined) return undefined;
    if (typeof held !== 'number' && held.value !== undefined) return held.value;
    const text = slabs.text(handleOf(held));
    const value = decodeCachedResult(text);
    if (value === undefined) {
      store.delete(key);
      return undefined;
    }
    if (decodedMax === 0) return value;
    const slot = slotOf(key, held);
    if (slot !== undefined) keepDecoded(slot, value, text.length);
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
      // The next read decodes the new text, so what is served is always what the stored form says.
      const text = encodeCachedResult(value);
      const held = store.peek(key);
      if (held !== undefined) {
        if (typeof held !== 'number') forget(held);
        if (slabs.rewrite(handleOf(held), text)) {
          store.get(key); // now the most recent
          return;
        }
        store.delete(key);
      }
      // An entry that cannot fit even in an empty cache is refused (and an older copy dropped).
      if (!makeRoom(key, text.length)) return;
      store.set(key, slabs.store(key, text));
    },
    size: () => store.size,
    chargedBytes: () => storedCharge() + decodedBytes,
    charges: () => ({ entries: storedCharge(), decoded: decodedBytes }),
    peekStored: (key) => {
      const held = store.peek(key);
      return held === undefined ? undefined : slabs.text(handleOf(held));
    },
    clear: () => {
      store.clear();
      while (ringCount > 0) pushOutOldest();
    },
  };
}
