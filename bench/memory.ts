// Memory: what the cache costs per cached number. RSS and JS heap after caching 100,000
// distinct numbers' results (three source results each) through the engine in a fresh child
// process with --expose-gc, so the figures are the cache's and not this runner's; the bytes
// Redis holds per number for the same entries; and what a hit costs, compact entries against
// the former object entries.
// Memory: what an operator's process takes. The built server is filled over HTTP (bench/
// memory-http.ts: fixture upstreams on loopback, 16 concurrent clients, each number once, no
// forced GC) at several CACHE_MAX_MB, with a flood of several times the numbers each cap holds,
// then left idle; its RSS growth is set against the bound RSS ≤ idle + 1.25 × cap + 32 MiB
// (issue 22), and the RSS per cached number is measured at 100,000 numbers under a cap that
// holds them all. The same with WORKERS=2 (RSS summed over the workers). Then the bytes Redis
// holds per number, and what a memory-cache hit costs.
import { fillOverHttp, type FillFigures } from './memory-http.js';
import { measureHitCosts } from './memory-hit.js';
import { measureRedisBytes } from './memory-redis.js';
import { formatNumber, type BenchRow, type BenchSection } from './support/report.js';

const MIB = 1024 * 1024;
/** Issue 22: RSS per cached number at 100,000 numbers, over HTTP. */
const RSS_PER_NUMBER_TARGET = 4096;
const REDIS_NUMBERS = 20_000;
/** Numbers of the fixture size a MiB of CACHE_MAX_MB holds (measured: about 2.7 KB charged each, about 67 % of the cap for them). */
const NUMBERS_PER_MIB = 250;
/** Issue 22's bound: growth ≤ 1.25 × cap + 32 MiB. */
export function boundBytes(cacheMaxMb: number): number {
  return (1.25 * cacheMaxMb + 32) * MIB;
}

const bytes = (value: number): string => `${formatNumber(value)} bytes`;
const ns = (value: number): string => `${formatNumber(value)} ns`;
const mib = (value: number): string => `${formatNumber(value / MIB, 1)} MiB`;

/** Numbers a cap holds, from a fill that passed it: per-source results ÷ 3. */
const numbersHeld = (figures: FillFigures): number => figures.sourceEntries / 3;

function envList(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  return raw === undefined
    ? fallback
    : raw
        .split(',')
        .map(Number)
        .filter((value) => Number.isSafeInteger(value) && value > 0);
}

function boundRow(label: string, figures: FillFigures): BenchRow {
  const growth = figures.steadyRss - figures.idleRss;
  return {
    label,
    value: `${mib(growth)} growth (${mib(figures.idleRss)} → ${mib(figures.steadyRss)}; peak ${mib(figures.peakRss)}); ${formatNumber(growth / Math.max(1, numbersHeld(figures)) / 1024, 2)} KiB per number held`,
    baseline: `cap ${figures.cacheMaxMb} MiB; charged ${mib(figures.chargedBytes)}; ${formatNumber(numbersHeld(figures))} numbers held of ${formatNumber(figures.numbers)} asked`,
    ratio: `${formatNumber(growth / (figures.cacheMaxMb * MIB), 2)}× cap`,
    target: `≤ ${mib(boundBytes(figures.cacheMaxMb))} (1.25 × cap + 32 MiB)`,
    met: growth <= boundBytes(figures.cacheMaxMb) && figures.failures === 0,
  };
}

export async function benchMemory(): Promise<BenchSection> {
  const caps = envList('BENCH_MEMORY_CAPS', [32, 64, 256]);
  // How many times the numbers a cap holds are asked (at least 100,000); a cap holds about
  // NUMBERS_PER_MIB numbers of the fixture size per MiB (docs/cache.md).
  const floodFactor = Number(process.env.BENCH_MEMORY_FLOOD ?? 3);
  const perNumberNumbers = Number(process.env.BENCH_MEMORY_NUMBERS ?? 100_000);
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  for (const cap of caps) {
    const numbers = Math.max(perNumberNumbers, Math.ceil(floodFactor * cap * NUMBERS_PER_MIB));
    const figures = await fillOverHttp({ cacheMaxMb: cap, numbers, log });
    rows.push(
      boundRow(`CACHE_MAX_MB=${cap}: RSS growth after ${formatNumber(figures.numbers)} distinct numbers`, figures),
    );
    notes.push(
      `CACHE_MAX_MB=${cap}: ${formatNumber(figures.numbers)} numbers in ${formatNumber(figures.elapsedMs / 1000)} s; V8 young / old generation committed at the end ${mib(figures.newSpaceBytes)} / ${mib(figures.oldSpaceBytes)}, heap in use ${mib(figures.heapUsedBytes)}${figures.failures > 0 ? `; ${figures.failures} answers were not 200` : ''}.`,
    );
  }
  // Per number: a cap that holds every number asked, so each is still cached at the end.
  const holdAllCap = Math.ceil((perNumberNumbers * 4 * 1024 * 1.5) / MIB);
  const perNumber = await fillOverHttp({ cacheMaxMb: holdAllCap, numbers: perNumberNumbers, log });
  const held = numbersHeld(perNumber);
  const rssPerNumber = (perNumber.steadyRss - perNumber.idleRss) / held;
  rows.push({
    label: `RSS growth per cached number at ${formatNumber(perNumber.numbers)} numbers (CACHE_MAX_MB=${holdAllCap}, all held)`,
    value: `${formatNumber(rssPerNumber / 1024, 2)} KiB`,
    baseline: `${bytes(perNumber.chargedBytes / held)} charged per number`,
    ratio: `${formatNumber(rssPerNumber / (perNumber.chargedBytes / held), 2)}× charged`,
    target: `≤ ${formatNumber(RSS_PER_NUMBER_TARGET / 1024)} KiB`,
    met: rssPerNumber <= RSS_PER_NUMBER_TARGET && perNumber.failures === 0 && held >= perNumber.numbers * 0.99,
  });
  // WORKERS=2: the cap is the machine's, each worker holds half.
  const workersCap = Number(process.env.BENCH_MEMORY_WORKERS_CAP ?? 64);
  const workers = await fillOverHttp({
    cacheMaxMb: workersCap,
    numbers: Math.max(perNumberNumbers, Math.ceil(floodFactor * workersCap * NUMBERS_PER_MIB)),
    workers: 2,
    log,
  });
  rows.push(boundRow(`WORKERS=2, CACHE_MAX_MB=${workersCap}: RSS growth of the primary and both workers`, workers));
  rows.push({
    label: "WORKERS=2: each worker's share of the cap (phone_rep_cache_max_bytes summed)",
    value: mib(workers.maxBytes),
    target: `≤ ${workersCap} MiB`,
    met: workers.maxBytes <= workersCap * MIB,
  });
  notes.unshift(
    'Built server (`node dist/start.js`, what `npm start` runs: the server started with the heap limit sized from CACHE_MAX_MB; RSS summed with the launcher\'s) with fixture upstreams on loopback (the adapters\' "normal" fixtures for every number), RATE_LIMIT_MAX=0, upstream budgets raised so that no lookup waits, LOG_LEVEL=info to a discarded stdout; 16 keep-alive clients each ask `GET /api/phone/<n>` for distinct valid mobile numbers, each once.',
    "Idle and steady RSS taken the same way (settledRss in bench/memory-http.ts): 10 s without a request (after the first /health answer, after the fill's last answer), then the median of 5 samples a second apart. RSS from /proc (VmRSS), summed over the launcher and its server, or the primary and its workers with WORKERS=2; no forced garbage collection. Charged bytes and held entries from each process's /metrics (phone_rep_cache_charged_bytes, phone_rep_cache_entries).",
    `Floods: each cap is asked max(${formatNumber(perNumberNumbers)}, ${floodFactor} × its capacity) numbers (BENCH_MEMORY_FLOOD, BENCH_MEMORY_CAPS, BENCH_MEMORY_NUMBERS override them).`,
  );
  try {
    const redis = await measureRedisBytes(REDIS_NUMBERS);
    rows.push(
      {
        label: 'Redis memory per cached number (MEMORY USAGE of its 3 keys)',
        value: bytes(redis.memoryUsageBytes / redis.numbers),
      },
      {
        label: 'of which stored text (STRLEN) / key names',
        value: `${bytes(redis.valueBytes / redis.numbers)} / ${bytes(redis.keyBytes / redis.numbers)}`,
      },
    );
    notes.push(
      `Redis: ${formatNumber(redis.numbers)} numbers (${formatNumber(redis.keys)} keys) written through createRedisSourceCache at 127.0.0.1:6379 under a random prefix bench:memory:<10 hex>: (24 characters), measured with MEMORY USAGE … SAMPLES 0, then deleted. With the default REDIS_KEY_PREFIX (phonerep:, 9 characters) each key is 15 bytes shorter.`,
    );
  } catch (error) {
    notes.push(
      `Redis bytes per number not measured: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }

  const hit = await measureHitCosts();
  rows.push(
    {
      label: 'Hit on a hot key (decoded tier): get()',
      value: ns(hit.compactHotNs),
      baseline: `${ns(hit.formerObjectsNs)} (former object cache)`,
      ratio: `${formatNumber(hit.compactHotNs / hit.formerObjectsNs, 2)}×`,
      target: '≤ former (±10 % noise)',
      met: hit.compactHotNs <= hit.formerObjectsNs * 1.1,
    },
    {
      label: 'Hit on a cold key (JSON.parse of the primary entry): get()',
      value: ns(hit.compactDecodeNs),
      baseline: `${ns(hit.formerObjectsNs)} (former object cache)`,
      ratio: `${formatNumber(hit.compactDecodeNs / hit.formerObjectsNs, 1)}×`,
    },
  );
  notes.push(
    `Hit cost: bench/memory-hit.ts, awaited get() of the primary sample entry over ${hit.keys} keys, ${formatNumber(hit.callsPerRound)} calls per round, median of ${hit.rounds} interleaved rounds in the bench runner's process. The former object cache is rebuilt there as it was (objects in lru-cache with a TTL per entry).`,
  );
  return { title: 'Memory: what the process takes per CACHE_MAX_MB', rows, notes };
}
