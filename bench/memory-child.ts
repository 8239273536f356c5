// Child process of the memory bench (needs --expose-gc): fills the engine's memory cache with
// the results of N distinct numbers, answered at once by in-memory sources carrying the sample
// data, and prints RSS and heap before and after as one JSON line on stdout. With
// MEMORY_BENCH_CACHE=former it fills the former object cache instead (the baseline).
import { loadConfig } from '../src/config/config.js';
import { lookupTimingsOf } from '../src/composition.js';
import { createLookupService } from '../src/domain/lookup/lookup-service.js';
import { loadNumberingPlan } from '../src/infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../src/domain/numbering/parse-phone-number.js';
import type { ParsedPhoneNumber } from '../src/domain/phone-number.js';
import { createMemorySourceCache } from '../src/infra/cache/memory-cache.js';
import { createKeyedHasher } from '../src/infra/hash.js';
import { healthyFakeSources } from '../test/support/lookup.js';
import { formerObjectCache } from './memory-hit.js';

const SLOTS_PER_NUMBER = 3;
const MIB = 1024 * 1024;
const BATCH = 1000;

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let round = 0; round < 3; round += 1) gc();
}

async function main(): Promise<void> {
  const numbers = Number(process.env.MEMORY_BENCH_NUMBERS ?? 100_000);
  // A cap far above what the run needs, so no entry is evicted and every number stays cached.
  const config = loadConfig({ HASH_SECRET: 'bench-secret-0123456789', CACHE_MAX_MB: String(Math.max(64, Math.ceil((numbers * SLOTS_PER_NUMBER * 4096) / MIB))) });
  const parse = createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR');
  // Parsed up front so the measured delta is the cache alone.
  const parsed: ParsedPhoneNumber[] = [];
  for (let index = 0; index < numbers; index += 1) {
    const result = parse(`06${String(index).padStart(8, '0')}`);
    if (!result.ok) throw new Error(`bench number ${index} did not parse`);
    parsed.push(result.value);
  }
  const former = process.env.MEMORY_BENCH_CACHE === 'former';
  const compact = createMemorySourceCache({ maxBytes: config.CACHE_MAX_MB * MIB });
  const cache = former ? formerObjectCache(numbers * SLOTS_PER_NUMBER) : compact;
  const lookupService = createLookupService({ sources: healthyFakeSources(), cache, hashKey: createKeyedHasher(config.HASH_SECRET ?? ''), timings: lookupTimingsOf(config) });
  collectGarbage();
  const before = process.memoryUsage();
  const startedAt = performance.now();
  for (let start = 0; start < numbers; start += BATCH) {
    await Promise.all(parsed.slice(start, start + BATCH).map((number) => lookupService.lookup(number)));
    // One macrotask turn per batch, as a server gets between requests: V8 holds the targets of
    // WeakRefs made in a job (AbortSignal.any makes some) until the job ends, and a loop of
    // promises alone would never end it.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const elapsedMs = performance.now() - startedAt;
  collectGarbage();
  const after = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({ numbers, entries: cache.size(), chargedBytes: compact.chargedBytes(), elapsedMs, rssBefore: before.rss, rssAfter: after.rss, heapBefore: before.heapUsed, heapAfter: after.heapUsed, heapTotalBefore: before.heapTotal, heapTotalAfter: after.heapTotal, externalBefore: before.external, externalAfter: after.external })}\n`,
  );
  lookupService.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`memory bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
