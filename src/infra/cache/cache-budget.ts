// How CACHE_MAX_MB is shared: between the processes of one machine (WORKERS=n: each gets 1/n,
// so the cap holds for the machine), and inside a process between everything held per number,
// so that the sum of what the caches are charged never passes the process's share, leaving a
// share for what the runtime keeps beyond the live entries.
// Rationale and measurements: docs/cache.md.

const MIB = 1024 * 1024;

/**
 * The share of a process's bytes no cache is given: what V8 keeps committed beyond the live
 * entries (the old generation's 10 % growth allowance, fragmentation after churn). Measured
 * (docs/cache.md): RSS grew 1.44× the bytes charged at 100,000 numbers and 1.75× after a flood
 * of three times what a 256 MiB cap holds; with 1/8 set aside that flood came within 29 MiB of
 * the bound of 1.25 × cap + 32 MiB, so 3/16 is.
 */
export const RUNTIME_HEADROOM_SHARE = 3 / 16;
/**
 * The least headroom a process keeps, whatever its share. What a Node 24 server keeps beyond its
 * caches once it has served does not shrink with the cap: measured at CACHE_MAX_MB=32, RSS grew
 * 54–62 MiB more than the bytes charged (its young generation stays committed once grown, its
 * compiler and collector threads keep their freed memory in the C library's arenas, code
 * compiled while serving), where the bound leaves 1.25 × 32 + 32 = 72 MiB for everything. So at
 * small shares the caches are given less than 13/16: with 3/16 alone a 32 MiB share was charged
 * 21 MiB and grew 76–84 MiB (docs/cache.md). From a share of 107 MiB up, 3/16 is more.
 */
export const RUNTIME_HEADROOM_MIN_BYTES = 20 * MIB;
/**
 * However small the share, the per-source results keep at least this part of it (the floor above
 * gives way): below 32 MiB per process what the runtime keeps alone comes near the bound or passes
 * it, so the budget cannot hold it there (docs/cache.md), and a cache of nothing would only turn
 * every lookup into upstream fetches.
 */
export const SOURCE_MIN_SHARE = 1 / 4;
/** The front cache's share of a process's bytes (finished answers and the spellings memo). */
export const FRONT_SHARE = 1 / 8;
/** Of the front cache's bytes, the part for remembered spellings (parse, hash, `/info` body). */
export const FRONT_SPELLINGS_SHARE = 1 / 8;
/** The parser memo's share of a process's bytes (parses of spellings, accepted or refused). */
export const PARSER_MEMO_SHARE = 1 / 64;

export interface CacheBudget {
  /** This process's share of CACHE_MAX_MB, in bytes. */
  processBytes: number;
  /** Front cache, spellings included. */
  frontBytes: number;
  /** The front cache's spellings part (inside frontBytes). */
  frontSpellingsBytes: number;
  parserMemoBytes: number;
  /** Not given to any cache: the runtime's headroom (RUNTIME_HEADROOM_SHARE, at least RUNTIME_HEADROOM_MIN_BYTES while the source part keeps SOURCE_MIN_SHARE). */
  headroomBytes: number;
  /** The per-source results: what is left. */
  sourceBytes: number;
}

export function cacheBudgetOf(cacheMaxMb: number, workers: number): CacheBudget {
  if (!Number.isSafeInteger(cacheMaxMb) || cacheMaxMb < 1)
    throw new RangeError(`CACHE_MAX_MB must be a positive whole number, got ${cacheMaxMb}`);
  if (!Number.isSafeInteger(workers) || workers < 1)
    throw new RangeError(`workers must be a positive whole number, got ${workers}`);
  const processBytes = Math.floor((cacheMaxMb * MIB) / workers);
  const frontBytes = Math.floor(processBytes * FRONT_SHARE);
  const parserMemoBytes = Math.floor(processBytes * PARSER_MEMO_SHARE);
  const headroomBytes = headroomOf(processBytes, frontBytes + parserMemoBytes);
  return {
    processBytes,
    frontBytes,
    frontSpellingsBytes: Math.floor(frontBytes * FRONT_SPELLINGS_SHARE),
    parserMemoBytes,
    headroomBytes,
    sourceBytes: processBytes - headroomBytes - frontBytes - parserMemoBytes,
  };
}

/** The headroom of a share: 3/16 of it, at least the floor, but never so much that the per-source results keep less than SOURCE_MIN_SHARE. */
function headroomOf(processBytes: number, otherCachesBytes: number): number {
  const proportional = Math.floor(processBytes * RUNTIME_HEADROOM_SHARE);
  const mostBeforeSourceMin = processBytes - otherCachesBytes - Math.ceil(processBytes * SOURCE_MIN_SHARE);
  return Math.max(proportional, Math.min(RUNTIME_HEADROOM_MIN_BYTES, mostBeforeSourceMin));
}
