// Gives back what a burst of lookups left fragmented, once the service is quiet.
//
// Cache churn (entries written, the least recently used dropped) leaves the old generation's
// pages partly alive. V8's full collections only move pages that are mostly empty (about 70 %
// free, at most a few MiB per collection), so after a flood of distinct numbers the process
// kept some 30 MiB of pages half full: with CACHE_MAX_MB=32 its RSS grew 64.7 MiB after 100,000
// numbers for 21 MiB charged. One collection that compacts every page, run when the API has
// been quiet for a moment, brought the same fill to 37.6 MiB (docs/cache.md, "What the runtime
// keeps"). Compacting on every collection instead would also do it, but it slows every
// collection under load and raised the fill's peak by half again, since moving every page
// needs room for the copies while the old pages are still mapped.
//
// Quiet means no API request (the routes that load shedding counts) for IDLE_COMPACTION_QUIET_MS:
// health checks and scrapes do not count, so a scraper every 15 s does not keep the heap
// fragmented. It runs at most once per quiet period, and only when it is worth it: the caches
// churned (at least IDLE_COMPACTION_MIN_CHURN entries written since the last compaction: cold
// lookups, not answers served from the caches) and the old generation holds more than
// IDLE_COMPACTION_MIN_FREE_BYTES it does not use. The collection blocks the event loop (tens of
// ms for a heap of 60 MiB), which a quiet process can spare; it also shrinks the young
// generation, which then takes a few seconds of traffic to grow back: a process that only
// serves from its caches between quiet spells (the hot path) is never compacted.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long the API must have been without a request before the heap is compacted. */
export const IDLE_COMPACTION_QUIET_MS = 2000;
/** How often the activity is looked at. */
export const IDLE_COMPACTION_CHECK_MS = 500;
/** Committed but unused old-generation bytes below which compacting is not worth a pause. */
export const IDLE_COMPACTION_MIN_FREE_BYTES = 4 * 1024 * 1024;
/** Cache entries written (three per cold lookup) since the last compaction below which the heap did not churn enough to be worth one. */
export const IDLE_COMPACTION_MIN_CHURN = 3000;
/** Cache entries written in one look (every IDLE_COMPACTION_CHECK_MS) from which the caches are churning: 30 is 20 cold lookups a second. */
export const CHURNING_WRITES_PER_CHECK = 30;

export interface CompactionReport {
  /** Old-generation bytes committed but unused, before. */
  freeBefore: number;
  /** The same after. */
  freeAfter: number;
  durationMs: number;
}

export interface IdleCompactionOptions {
  /** A count that moves with every API request (requests admitted so far). */
  activity: () => number;
  /** A count of cache entries written so far (the churn that fragments the heap). */
  churn: () => number;
  minChurn?: number;
  /** Called when the caches start churning (true: CHURNING_WRITES_PER_CHECK or more entries written since the last look) and when they stop (heap-settings.ts). */
  onChurning?: (churning: boolean) => void;
  churningWritesPerCheck?: number;
  quietMs?: number;
  checkMs?: number;
  minFreeBytes?: number;
  /** Tests: the clock (ms), the old generation's unused committed bytes, and the compaction itself. */
  now?: () => number;
  unusedOldBytes?: () => number;
  compact?: () => void;
  onCompacted?: (report: CompactionReport) => void;
}

export interface IdleCompaction {
  /** Looks at the activity once (what the timer does every checkMs). */
  check(): void;
  compactions(): number;
  stop(): void;
}

/** Old space committed but not in use: the room fragmentation takes. */
export function unusedOldSpaceBytes(): number {
  const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  return old === undefined ? 0 : Math.max(0, old.space_size - old.space_used_size);
}

let exposedGc: (() => void) | undefined;

/**
 * V8's full collection, `gc()`, taken from a context made after `--expose-gc` is set (the main
 * context was made before the flag, so it has none).
 */
export function fullCollection(): () => void {
  if (exposedGc === undefined) {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc !== 'function') throw new Error('V8 did not expose gc() to a new context');
    exposedGc = gc as () => void;
  }
  return exposedGc;
}

/** A full collection that moves every fragmented page: `--compact-on-every-full-gc` for that one collection only. */
export function compactHeap(): void {
  const gc = fullCollection();
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

export function startIdleCompaction(options: IdleCompactionOptions): IdleCompaction {
  const quietMs = options.quietMs ?? IDLE_COMPACTION_QUIET_MS;
  const minFreeBytes = options.minFreeBytes ?? IDLE_COMPACTION_MIN_FREE_BYTES;
  const minChurn = options.minChurn ?? IDLE_COMPACTION_MIN_CHURN;
  const now = options.now ?? (() => performance.now());
  const unusedOldBytes = options.unusedOldBytes ?? unusedOldSpaceBytes;
  const compact = options.compact ?? compactHeap;
  let lastActivity = options.activity();
  let quietSince = now();
  // The activity count at the last look that compacted or found nothing worth it: nothing
  // more is done until a request comes (none before the first one, so the idle figure after
  // start-up is left as it is).
  let settledAt = lastActivity;
  let compactions = 0;
  let churnAtLastCompaction = options.churn();
  let churnAtLastLook = churnAtLastCompaction;
  let churning = false;
  const churningWrites = options.churningWritesPerCheck ?? CHURNING_WRITES_PER_CHECK;

  const check = (): void => {
    const written = options.churn();
    const nowChurning = written - churnAtLastLook >= churningWrites;
    churnAtLastLook = written;
    if (nowChurning !== churning) {
      churning = nowChurning;
      options.onChurning?.(churning);
    }
    const activity = options.activity();
    const at = now();
    if (activity !== lastActivity) {
      lastActivity = activity;
      quietSince = at;
      return;
    }
    if (at - quietSince < quietMs || settledAt === activity) return;
    settledAt = activity;
    if (written - churnAtLastCompaction < minChurn) return;
    const freeBefore = unusedOldBytes();
    if (freeBefore < minFreeBytes) return;
    compact();
    churnAtLastCompaction = written;
    compactions += 1;
    options.onCompacted?.({ freeBefore, freeAfter: unusedOldBytes(), durationMs: now() - at });
  };
  const timer = setInterval(check, options.checkMs ?? IDLE_COMPACTION_CHECK_MS);
  timer.unref();
  return {
    check,
    compactions: () => compactions,
    stop: () => {
      clearInterval(timer);
      if (churning) options.onChurning?.(false);
    },
  };
}
