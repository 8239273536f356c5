// Memory: RSS after caching 100,000 distinct numbers' results (three source results each) in
// the engine's memory cache, per number and per cache entry. Runs in a fresh child process
// with --expose-gc, so the figures are the cache's and not this runner's.
import { spawn } from 'node:child_process';
import { PROJECT_ROOT } from './support/processes.js';
import { formatNumber, type BenchSection } from './support/report.js';

interface MemoryFigures {
  numbers: number;
  entries: number;
  elapsedMs: number;
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
}

const MIB = 1024 * 1024;

export async function benchMemory(numbers = 100_000): Promise<BenchSection> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/memory-child.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, MEMORY_BENCH_NUMBERS: String(numbers) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(stderr.slice(0, 1000));
  const figures = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as MemoryFigures;
  const rssDelta = figures.rssAfter - figures.rssBefore;
  const heapDelta = figures.heapAfter - figures.heapBefore;
  return {
    title: 'Memory: cached results',
    rows: [
      { label: `RSS after caching ${formatNumber(figures.numbers)} numbers`, value: `${formatNumber(figures.rssAfter / MIB, 1)} MiB`, baseline: `${formatNumber(figures.rssBefore / MIB, 1)} MiB before` },
      { label: 'RSS growth per cached number (3 source results)', value: `${formatNumber(rssDelta / figures.numbers)} bytes` },
      { label: 'RSS growth per cache entry (one source result)', value: `${formatNumber(rssDelta / figures.entries)} bytes` },
      { label: 'JS heap growth per cache entry', value: `${formatNumber(heapDelta / figures.entries)} bytes` },
      { label: 'RSS the default CACHE_MAX_ENTRIES=100000 costs when full (estimate)', value: `${formatNumber((rssDelta / figures.entries) * 100_000 / MIB, 0)} MiB` },
    ],
    notes: [
      `Lookups driven in-process through createLookupService with in-memory sources answering the sample data (two primary comments, one community comment) at once; ${formatNumber(figures.entries)} entries in the cache after ${formatNumber(figures.elapsedMs / 1000, 1)} s.`,
      'The cache counts one entry per source result: CACHE_MAX_ENTRIES=100000 (the default) holds about 33,000 numbers with three sources each; this bench raises it to 300,000.',
      'Measured after forced garbage collection in a fresh process (--expose-gc); real pages carry up to 50 comments per source, so real entries can be larger.',
    ],
  };
}
