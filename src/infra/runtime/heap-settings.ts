// The V8 heap setting that bounds the process while a burst of lookups runs (docs/cache.md, "What
// the runtime keeps"). By default V8 lets the old generation grow to up to four times what a full
// collection leaves alive before the next one: filled with 100,000 distinct numbers under a 32 MiB
// cap, the process peaked at 381 MiB RSS (240 MiB over idle) for 21 MiB charged.
// `--heap-growing-percent=50` runs the next full collection once the old generation has grown by
// half over what the last one left alive: the same fill peaked at 74 MiB over idle. It is read by
// V8 at each collection, so it is set from inside the process, and `npm start` and
// `node dist/server.js` keep working as they are (no wrapper process, no flags to remember).
// What is left fragmented after a burst is given back by the idle compaction
// (idle-compaction.ts). Tried and dropped: a growth of 10 % (the same steady state, a peak lower
// by 30 MiB, and about a sixth more CPU per cached answer in some hot-path runs) and
// `--semi-space-growth-factor=1` (a young generation kept at its start size: more scavenges on
// the hot path; the idle compaction shrinks the young generation anyway).
import { setFlagsFromString } from 'node:v8';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export const HEAP_GROWING_PERCENT = 50;

export const HEAP_FLAGS: readonly string[] = [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];

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
