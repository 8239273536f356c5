// Benchmark of the lookup engine's cold path: three upstreams simulated on loopback at fixed
// latencies (50, 120, 200 ms), cold lookups of distinct numbers through createLookupService.
// Reports median and p99 lookup time, the overhead over the slowest upstream (target < 10 ms at
// the median), and the upstream requests caused by N concurrent cold lookups of one number
// (target: 1 per upstream). Run alone with `npx tsx bench/cold-path.ts`.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createLookupService, type LookupTimings } from '../src/domain/lookup/lookup-service.js';
import { createMemorySourceCache } from '../src/infra/cache/memory-cache.js';
import { createKeyedHasher } from '../src/infra/hash.js';
import { COMMUNITY_DATA, PRIMARY_DATA, SIGNALS_DATA, createLoopbackSource, distinctNumber } from '../harness/lookup.js';
import { startFakeUpstream } from '../harness/loopback.js';

const LATENCIES_MS = { primary: 50, community: 120, signals: 200 } as const;
const SLOWEST_MS = Math.max(...Object.values(LATENCIES_MS));
const COLD_SAMPLES = Number(process.env.BENCH_COLD_SAMPLES ?? 100);
/** Lookups in flight at once; 1 measures the engine alone, more adds contention of the process with itself. */
const COLD_CONCURRENCY = Number(process.env.BENCH_COLD_CONCURRENCY ?? 4);
const BURST_SIZE = 200;

const CONFIG: LookupTimings = {
  sourceTimeoutMs: 3000,
  lookupTimeoutMs: 4000,
  cacheTtlSeconds: 21_600,
  notFoundTtlSeconds: 3600,
  staleSeconds: 604_800,
};

function percentile(sortedMs: number[], fraction: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil(fraction * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)] ?? Number.NaN;
}

export async function benchColdPath(): Promise<{ name: string; lines: string[] }> {
  const upstreams = {
    primary: await startFakeUpstream({ status: 200, body: PRIMARY_DATA, delayMs: LATENCIES_MS.primary }),
    community: await startFakeUpstream({ status: 200, body: COMMUNITY_DATA, delayMs: LATENCIES_MS.community }),
    signals: await startFakeUpstream({ status: 200, body: SIGNALS_DATA, delayMs: LATENCIES_MS.signals }),
  };
  const service = createLookupService({
    sources: {
      primary: createLoopbackSource({ slot: 'primary', name: 'tellows', baseUrl: upstreams.primary.url }),
      community: createLoopbackSource({ slot: 'community', name: 'numeroinconnu', baseUrl: upstreams.community.url }),
      signals: createLoopbackSource({ slot: 'signals', name: 'telguarder', baseUrl: upstreams.signals.url }),
    },
    cache: createMemorySourceCache({ maxEntries: 100_000 }),
    hashKey: createKeyedHasher('bench-secret-0123456789abcdef'),
    timings: CONFIG,
  });
  try {
    // Warm-up: open keep-alive connections and JIT the path, on numbers not measured.
    await Promise.all(Array.from({ length: COLD_CONCURRENCY }, (_, i) => service.lookup(distinctNumber(900_000 + i))));

    // Each cold lookup is paired with a direct request to the slowest upstream started at the
    // same instant: their difference is the engine's own cost, with loopback HTTP and machine
    // noise cancelled out. The lookup's absolute time is reported too.
    const durationsMs: number[] = [];
    const pairedOverheadsMs: number[] = [];
    let notOk = 0;
    let next = 0;
    const timed = async (work: () => Promise<unknown>): Promise<number> => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const worker = async (): Promise<void> => {
      while (next < COLD_SAMPLES) {
        const n = next++;
        const [lookupMs, directMs] = await Promise.all([
          timed(async () => {
            const result = await service.lookup(distinctNumber(n));
            if (result.primary.status !== 'ok' || result.community.status !== 'ok' || result.signals.status !== 'ok')
              notOk += 1;
          }),
          timed(async () => (await fetch(`${upstreams.signals.url}/direct-${n}`)).text()),
        ]);
        durationsMs.push(lookupMs);
        pairedOverheadsMs.push(lookupMs - directMs);
      }
    };
    await Promise.all(Array.from({ length: COLD_CONCURRENCY }, worker));
    durationsMs.sort((a, b) => a - b);
    pairedOverheadsMs.sort((a, b) => a - b);
    const medianMs = percentile(durationsMs, 0.5);
    const p99Ms = percentile(durationsMs, 0.99);
    const pairedOverheadMs = percentile(pairedOverheadsMs, 0.5);

    for (const upstream of Object.values(upstreams)) upstream.resetCounts();
    const burstNumber = distinctNumber(500_000);
    await Promise.all(Array.from({ length: BURST_SIZE }, () => service.lookup(burstNumber)));
    const burstCounts = {
      primary: upstreams.primary.requestCount(),
      community: upstreams.community.requestCount(),
      signals: upstreams.signals.requestCount(),
    };
    const overheadMs = medianMs - SLOWEST_MS;
    return {
      name: 'Lookup engine, cold path',
      lines: [
        `upstream latencies ${LATENCIES_MS.primary}/${LATENCIES_MS.community}/${LATENCIES_MS.signals} ms on loopback; ${COLD_SAMPLES} cold lookups of distinct numbers, ${COLD_CONCURRENCY} at a time`,
        `cold lookup: median ${medianMs.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms${notOk > 0 ? ` (${notOk} lookups not fully ok)` : ''}`,
        `overhead over the slowest upstream's nominal ${SLOWEST_MS} ms (median): ${overheadMs.toFixed(1)} ms`,
        `overhead over a direct request to the slowest upstream made at the same time (median of paired differences): ${pairedOverheadMs.toFixed(1)} ms (target < 10 ms) ${pairedOverheadMs < 10 ? 'OK' : 'MISSED'}`,
        `${BURST_SIZE} concurrent cold lookups of one number: upstream requests primary ${burstCounts.primary}, community ${burstCounts.community}, signals ${burstCounts.signals} (target 1 each) ${Object.values(burstCounts).every((count) => count === 1) ? 'OK' : 'MISSED'}`,
      ],
    };
  } finally {
    service.close();
    await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const { name, lines } = await benchColdPath();
  console.log(`## ${name}`);
  for (const line of lines) console.log(`- ${line}`);
}
