// What a cache hit costs, compact entries against the former object entries: `get` of one
// sample entry (the primary slot, the largest), per call, in this process. Three readers:
// the former memory cache (objects in lru-cache with a per-entry TTL, rebuilt here as it was),
// the compact cache on a hot key (its decoded tier), and the compact cache decoding every read
// (decoded tier off: what a hit on a cold key costs).
import { LRUCache } from 'lru-cache';
import { createMemorySourceCache } from '../src/infra/cache/memory-cache.js';
import type { CachedSourceResult, SourceResultCache } from '../src/domain/ports/source-cache.js';
import { SAMPLE_DATA } from '../harness/lookup.js';

export interface HitCosts {
  /** Nanoseconds per `get`, median of the rounds. */
  formerObjectsNs: number;
  compactHotNs: number;
  compactDecodeNs: number;
  keys: number;
  callsPerRound: number;
  rounds: number;
}

const KEYS = 100;
const CALLS_PER_ROUND = 200_000;
const ROUNDS = 7;

/** The memory cache as it was before entries were stored compact: objects, a TTL per entry (also the memory bench's baseline). */
export function formerObjectCache(maxEntries = 100_000): SourceResultCache & { size(): number } {
  const entries = new LRUCache<string, CachedSourceResult>({ max: maxEntries, ttlAutopurge: false, allowStale: false });
  return {
    async get(key) {
      return entries.get(key);
    },
    async set(key, value, ttlSeconds) {
      entries.set(key, value, { ttl: Math.ceil(ttlSeconds * 1000) });
    },
    size: () => entries.size,
  };
}

async function nsPerGet(cache: SourceResultCache, keys: string[]): Promise<number> {
  let checksum = 0;
  const startedAt = process.hrtime.bigint();
  for (let call = 0; call < CALLS_PER_ROUND; call += 1) {
    const entry = await cache.get(keys[call % keys.length] ?? '');
    if (entry !== undefined) checksum += entry.freshUntil & 1;
  }
  const elapsedNs = Number(process.hrtime.bigint() - startedAt);
  if (checksum < 0) throw new Error('unreachable: keeps the reads from being optimised away');
  return elapsedNs / CALLS_PER_ROUND;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function measureHitCosts(): Promise<HitCosts> {
  const nowMs = Date.now();
  const value: CachedSourceResult = {
    status: 'ok',
    data: SAMPLE_DATA.primary,
    fetchedAt: new Date(nowMs).toISOString(),
    freshUntil: nowMs + 3_600_000,
    staleUntil: nowMs + 7_200_000,
  };
  const keys = Array.from({ length: KEYS }, (_, index) => `v3:primary:${String(index).padStart(22, '0')}`);
  const readers = {
    former: formerObjectCache(),
    hot: createMemorySourceCache(),
    decode: createMemorySourceCache({ decodedMaxEntries: 0 }),
  };
  for (const cache of Object.values(readers)) {
    for (const key of keys) await cache.set(key, value, 7200);
    const read = await cache.get(keys[0] ?? '');
    if (read?.freshUntil !== value.freshUntil) throw new Error('hit bench: a reader does not return what was written');
  }
  const samples = { former: [] as number[], hot: [] as number[], decode: [] as number[] };
  // Interleaved rounds, so a burst of load on the shared machine hits every reader alike.
  for (let round = 0; round < ROUNDS; round += 1) {
    samples.former.push(await nsPerGet(readers.former, keys));
    samples.hot.push(await nsPerGet(readers.hot, keys));
    samples.decode.push(await nsPerGet(readers.decode, keys));
  }
  return {
    formerObjectsNs: median(samples.former),
    compactHotNs: median(samples.hot),
    compactDecodeNs: median(samples.decode),
    keys: KEYS,
    callsPerRound: CALLS_PER_ROUND,
    rounds: ROUNDS,
  };
}
