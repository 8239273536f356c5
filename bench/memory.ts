// Memory: what the cache costs per cached number. RSS and JS heap after caching 100,000
// distinct numbers' results (three source results each) through the engine in a fresh child
// process with --expose-gc, so the figures are the cache's and not this runner's; the bytes
// Redis holds per number for the same entries; and what a hit costs, compact entries against
// the former object entries.
import { spawn } from 'node:child_process';
import { CONFIG_DEFAULTS } from '../src/config/config.js';
import { DEFAULT_DECODED_MAX_ENTRIES, ENTRY_OVERHEAD_BYTES } from '../src/infra/cache/memory-cache.js';
import { measureHitCosts } from './memory-hit.js';
import { measureRedisBytes } from './memory-redis.js';
import { PROJECT_ROOT } from './support/processes.js';
import { formatNumber, type BenchRow, type BenchSection } from './support/report.js';

interface MemoryFigures {
  numbers: number;
  entries: number;
  chargedBytes: number;
  elapsedMs: number;
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  heapTotalBefore: number;
  heapTotalAfter: number;
  externalBefore: number;
  externalAfter: number;
}

const MIB = 1024 * 1024;
/** Issue 14: RSS per cached number at 100,000 numbers. */
const RSS_PER_NUMBER_TARGET = 4096;
const REDIS_NUMBERS = 20_000;

async function fillInChild(numbers: number, cache: 'compact' | 'former'): Promise<MemoryFigures> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/memory-child.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, MEMORY_BENCH_NUMBERS: String(numbers), MEMORY_BENCH_CACHE: cache },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(stderr.slice(0, 1000));
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as MemoryFigures;
}

const bytes = (value: number): string => `${formatNumber(value)} bytes`;
const ns = (value: number): string => `${formatNumber(value)} ns`;

export async function benchMemory(numbers = 100_000): Promise<BenchSection> {
  const figures = await fillInChild(numbers, 'compact');
  const formerFigures = await fillInChild(numbers, 'former');
  const rssPerNumber = (figures.rssAfter - figures.rssBefore) / figures.numbers;
  const heapPerNumber = (figures.heapAfter - figures.heapBefore) / figures.numbers;
  const formerRssPerNumber = (formerFigures.rssAfter - formerFigures.rssBefore) / formerFigures.numbers;
  const formerHeapPerNumber = (formerFigures.heapAfter - formerFigures.heapBefore) / formerFigures.numbers;
  const chargedPerNumber = figures.chargedBytes / figures.numbers;
  const defaultCapBytes = CONFIG_DEFAULTS.CACHE_MAX_MB * MIB;
  const numbersUnderDefaultCap = defaultCapBytes / chargedPerNumber;
  const rows: BenchRow[] = [
    { label: `RSS after caching ${formatNumber(figures.numbers)} numbers`, value: `${formatNumber(figures.rssAfter / MIB, 1)} MiB`, baseline: `${formatNumber(figures.rssBefore / MIB, 1)} MiB before` },
    { label: 'RSS growth per cached number (3 source results)', value: bytes(rssPerNumber), baseline: `${bytes(formerRssPerNumber)} (former object cache)`, ratio: `${formatNumber(rssPerNumber / formerRssPerNumber, 2)}×`, target: `≤ ${formatNumber(RSS_PER_NUMBER_TARGET)} bytes`, met: rssPerNumber <= RSS_PER_NUMBER_TARGET },
    {
      label: 'JS heap growth per cached number (used / committed)',
      value: `${bytes(heapPerNumber)} / ${bytes((figures.heapTotalAfter - figures.heapTotalBefore) / figures.numbers)}`,
      baseline: `${bytes(formerHeapPerNumber)} used (former object cache)`,
      ratio: `${formatNumber(heapPerNumber / formerHeapPerNumber, 2)}×`,
    },
    { label: 'RSS growth per number outside the committed JS heap', value: bytes(rssPerNumber - (figures.heapTotalAfter - figures.heapTotalBefore) / figures.numbers), baseline: `external memory ${bytes((figures.externalAfter - figures.externalBefore) / figures.numbers)}` },
    { label: 'Bytes charged against CACHE_MAX_MB per number (keys + stored text + fixed overhead)', value: bytes(chargedPerNumber), ratio: `${formatNumber(chargedPerNumber / heapPerNumber, 2)}× heap growth` },
    {
      label: `Numbers the default CACHE_MAX_MB=${CONFIG_DEFAULTS.CACHE_MAX_MB} holds (sample data)`,
      value: formatNumber(numbersUnderDefaultCap),
      baseline: `≈ ${formatNumber((numbersUnderDefaultCap * rssPerNumber) / MIB)} MiB RSS when full`,
    },
  ];
  const notes = [
    `Lookups driven in-process through createLookupService with in-memory sources answering the sample data (two primary comments, one community comment) at once, 1,000 at a time with one macrotask turn between batches as a server has; ${formatNumber(figures.entries)} entries in the cache after ${formatNumber(figures.elapsedMs / 1000, 1)} s.`,
    `Each entry is one pure-ASCII string (src/infra/cache/entry-codec.ts) in a byte-capped LRU, charged key + text + ${ENTRY_OVERHEAD_BYTES} bytes; the ${formatNumber(DEFAULT_DECODED_MAX_ENTRIES)} most recently decoded entries also keep their object (a fixed extra of a few MiB, not charged).`,
    'Measured after forced garbage collection in a fresh process (--expose-gc); real pages carry up to 50 comments per source, so real entries can be larger (the byte cap counts their real size).',
    'Baseline: the same fill in another fresh child with the former memory cache (objects in lru-cache, a TTL per entry; rebuilt in bench/memory-hit.ts), the same run.',
    'What limits RSS now is not the entries: the JS heap in use grows by about the bytes charged, but V8 keeps the old-space pages the fill\'s garbage made it commit (committed ≈ 2.4× used after GC) until its memory reducer releases them; the RSS figure is that committed heap.',
    'Before this bench yielded a macrotask between batches, the whole fill ran as one job: V8 kept the targets of every WeakRef made meanwhile (AbortSignal.any makes some per lookup) alive until the job ended, about 10 KiB of heap per number whatever the cache held; the former 15–20 KiB per number figure included that.',
  ];

  try {
    const redis = await measureRedisBytes(REDIS_NUMBERS);
    rows.push(
      { label: 'Redis memory per cached number (MEMORY USAGE of its 3 keys)', value: bytes(redis.memoryUsageBytes / redis.numbers) },
      { label: 'of which stored text (STRLEN) / key names', value: `${bytes(redis.valueBytes / redis.numbers)} / ${bytes(redis.keyBytes / redis.numbers)}` },
    );
    notes.push(
      `Redis: ${formatNumber(redis.numbers)} numbers (${formatNumber(redis.keys)} keys) written through createRedisSourceCache at 127.0.0.1:6379 under a random prefix bench:memory:<10 hex>: (24 characters), measured with MEMORY USAGE … SAMPLES 0, then deleted. With the default REDIS_KEY_PREFIX (phonerep:, 9 characters) each key is 15 bytes shorter.`,
    );
  } catch (error) {
    notes.push(`Redis bytes per number not measured: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }

  const hit = await measureHitCosts();
  rows.push(
    { label: 'Hit on a hot key (decoded tier): get()', value: ns(hit.compactHotNs), baseline: `${ns(hit.formerObjectsNs)} (former object cache)`, ratio: `${formatNumber(hit.compactHotNs / hit.formerObjectsNs, 2)}×`, target: '≤ former (±10 % noise)', met: hit.compactHotNs <= hit.formerObjectsNs * 1.1 },
    { label: 'Hit on a cold key (JSON.parse of the primary entry): get()', value: ns(hit.compactDecodeNs), baseline: `${ns(hit.formerObjectsNs)} (former object cache)`, ratio: `${formatNumber(hit.compactDecodeNs / hit.formerObjectsNs, 1)}×` },
  );
  notes.push(
    `Hit cost: bench/memory-hit.ts, awaited get() of the primary sample entry over ${hit.keys} keys, ${formatNumber(hit.callsPerRound)} calls per round, median of ${hit.rounds} interleaved rounds in the bench runner's process. The former object cache is rebuilt there as it was (objects in lru-cache with a TTL per entry).`,
  );
  return { title: 'Memory: cached results', rows, notes };
}
