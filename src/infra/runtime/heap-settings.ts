// The V8 heap settings that make CACHE_MAX_MB bound the process (docs/cache.md, "What the
// runtime keeps"). By default V8 lets the old generation grow to up to four times what a
// full collection leaves alive, and the young generation to 2 × 16 MiB, and keeps what it
// committed long after a burst: filled with 20,000 distinct numbers under a 32 MiB cap, the
// process held 275 MiB of old space for 63 MiB alive. These are set from inside the process,
// because `npm start` and `node dist/server.js` must keep working as they are (no wrapper
// process, no flags to remember), and both are read by V8 at each collection, not only at start:
// - `--heap-growing-percent`: the next full collection runs once the old generation has grown
//   by this share over what the last one left alive (V8's own factor is 1.1–4×);
// - `--semi-space-growth-factor=1`: the young generation keeps its initial size instead of
//   doubling up to 32 MiB under load. A scavenge costs what survives, not what died, so the
//   hot path (few survivors) pays little for the smaller space (docs/benchmarks.md).
import { setFlagsFromString } from 'node:v8';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export const HEAP_GROWING_PERCENT = 10;

export const HEAP_FLAGS: readonly string[] = [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--semi-space-growth-factor=1'];

/**
 * Applies HEAP_FLAGS unless V8_HEAP_DEFAULTS is true (for comparisons); returns what it applied.
 * Read from the environment directly, with the configuration's own conversion, because it must
 * run before the configuration (and everything else) is loaded.
 */
export function applyHeapSettings(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const raw = env.V8_HEAP_DEFAULTS?.trim();
  if (raw !== undefined && raw !== '' && Value.Convert(Type.Boolean(), raw) === true) return [];
  for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
  return HEAP_FLAGS;
}
