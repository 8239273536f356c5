// The V8 heap limit each server process is started with, sized from its share of CACHE_MAX_MB
// (docs/cache.md, "What the runtime keeps"). V8 reads `--max-old-space-size` once, when the
// process starts, which is the only time Node supports setting it: the launcher (src/start.ts,
// what `npm start` and `phone-rep serve` run) starts the server with it, and the cluster primary
// gives it to each worker (`execArgv`, src/cluster.ts). Nothing is changed while the process runs.
//
// Why it bounds the process: V8 grows the old generation by a factor of what a full collection
// left alive before the next one, up to 4× when the heap limit is large (Node's default, about
// 2–4 GiB) and down to 1.3× when the limit is 256 MiB or less on 64-bit builds (V8's
// MemoryController::MaxGrowingFactor, scaled linearly in between). With the default limit a
// flood of cold lookups at CACHE_MAX_MB=32 grew RSS by 205 MiB; started with a limit of 96 MiB,
// by 39 MiB.
//
// Why it is safe: the limit is a hard one (past it the process dies), so it is sized so that a
// full cache can never reach it: the fixed heap of an idle server (the numbering plan, the code;
// about 40 MiB in use) and room to collect within HEAP_LIMIT_BASE_MB, plus HEAP_LIMIT_PER_CACHE_MB per MiB of the
// process's share of the cap. The caches charge at least twice the JSON length of what they
// hold, where V8 takes 1.2–1.3× (docs/cache.md, "What is charged"), so a full cache takes at most
// about two thirds of its share on the heap: the limit leaves more than twice that for a burst.

/** The heap an idle server takes (about 40 MiB in use), with room for the requests in flight and for the collector: with 64 MiB, a process at CACHE_MAX_MB=8 (limit 76 MiB) ran 514 full collections for a fill of 6,000 numbers where V8's default ran 15, and took twice the CPU. */
export const HEAP_LIMIT_BASE_MB = 128;
/** Heap limit per MiB of the process's share of CACHE_MAX_MB. */
export const HEAP_LIMIT_PER_CACHE_MB = 1.5;

const HEAP_LIMIT_FLAG = '--max-old-space-size';

/** The old generation's limit, in MiB, for a server process holding `processCacheMb` of the cap. */
export function heapLimitMb(processCacheMb: number): number {
  return Math.ceil(HEAP_LIMIT_BASE_MB + HEAP_LIMIT_PER_CACHE_MB * processCacheMb);
}

/** The flag that sets it, as given on Node's command line. */
export function heapLimitFlag(limitMb: number): string {
  return `${HEAP_LIMIT_FLAG}=${limitMb}`;
}

export const SEMI_SPACE_MIN_MB = 4;
/**
 * The largest semi-space a server process is given: V8's 64-bit default on Node 20, the size the
 * memory bound was measured with. Node 24's V8 (13.6) defaults to 64 MiB (its heap_size_limit
 * counts three semi-spaces: `--max-old-space-size=176` alone gives 368 MiB, with
 * `--max-semi-space-size=16` 224), which would let a busy process commit 128 MiB of young
 * generation, more than the bound allows at the small caps.
 */
export const SEMI_SPACE_MAX_MB = 16;
const SEMI_SPACE_FLAG = '--max-semi-space-size';

/**
 * The most of V8's young generation a server process may commit, per semi-space, in MiB: a
 * quarter of its share of the cap, between 4 and 16. The young generation commits two
 * semi-spaces once a busy process has grown it, which at small shares is much of what the memory
 * bound allows (docs/cache.md): with WORKERS=2 at CACHE_MAX_MB=64 and 16 MiB semi-spaces, up to
 * 64 of the 112 MiB; with this flag the two committed 32 MiB in all (docs/benchmark-results.md). Node
 * documents the flag (`--max-semi-space-size`, "Useful V8 options"); it is read once, at start,
 * like the heap limit.
 */
export function semiSpaceMb(processCacheMb: number): number {
  return Math.min(SEMI_SPACE_MAX_MB, Math.max(SEMI_SPACE_MIN_MB, Math.floor(processCacheMb / 4)));
}

/** True when `flag` (`--max-old-space-size`) is given on the command line or in NODE_OPTIONS, in either spelling. */
function flagGiven(flag: string, execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const underscored = flag.replace(/(?<=^--.*)-/g, '_');
  const given = (arg: string): boolean =>
    [flag, underscored].some((name) => arg === name || arg.startsWith(`${name}=`));
  return execArgv.some(given) || (nodeOptions ?? '').split(/\s+/).some(given);
}

/** True when the operator gave a heap limit of their own (on the command line or in NODE_OPTIONS): theirs is kept. */
export function heapLimitGiven(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return flagGiven(HEAP_LIMIT_FLAG, execArgv, nodeOptions);
}

/**
 * The Node arguments a server process starts with: `execArgv` as given, plus the heap limit for
 * its share of the cap unless the operator set one, and the semi-space size for it (semiSpaceMb)
 * unless the operator set one or the share needs none.
 */
export function serverExecArgv(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  processCacheMb: number,
): string[] {
  const args = [...execArgv];
  if (!heapLimitGiven(execArgv, nodeOptions)) args.push(heapLimitFlag(heapLimitMb(processCacheMb)));
  if (!flagGiven(SEMI_SPACE_FLAG, execArgv, nodeOptions))
    args.push(`${SEMI_SPACE_FLAG}=${semiSpaceMb(processCacheMb)}`);
  return args;
}
