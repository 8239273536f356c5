// The V8 heap setting that bounds the process while the caches churn (docs/cache.md, "What the
// runtime keeps"). By default V8 lets the old generation grow to up to four times what a full
// collection leaves alive before the next one: filled with 100,000 distinct numbers under a
// 32 MiB cap, the process peaked at 381 MiB RSS (240 MiB over idle) for 21 MiB charged.
// `--heap-growing-percent=50` runs the next full collection once the old generation has grown by
// half over what the last one left alive: the same fill peaked 74 MiB over idle.
//
// It is on only while the caches churn (cold lookups writing entries, idle-compaction.ts looks
// every 500 ms): set for the whole life of the process, it cost about a sixth more CPU per answer
// served from the caches (interleaved hot-path runs, docs/cache.md), where the heap does not grow
// anyway. V8 reads it at each collection, so it is switched from inside the process, and
// `npm start` and `node dist/server.js` need no flags. `--heap-growing-percent=0` is V8's own
// (dynamic) growth. What a burst leaves fragmented is given back by the idle compaction.
// `V8_HEAP_DEFAULTS=true` turns both off, for comparisons.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/** The flag for the old generation's growth while the caches churn (on) or not (off: V8's own). */
export function heapGrowthFlag(churning: boolean): string {
  return `--heap-growing-percent=${churning ? HEAP_GROWING_PERCENT : 0}`;
}

/** Sets the old generation's growth for a churning or a quiet cache. */
export function setHeapGrowthForChurn(churning: boolean): void {
  setFlagsFromString(heapGrowthFlag(churning));
}
