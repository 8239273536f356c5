// What an operator's process takes: the built server (`node dist/start.js`, what `npm start`
// runs) with fixture upstreams on loopback, filled over HTTP by 16 concurrent keep-alive
// clients, each number asked once, then left idle until its resident memory settles. RSS is
// read from /proc (summed over the process tree: the launcher and its server, or the primary
// and its workers with WORKERS=n), the bytes charged
// against CACHE_MAX_MB from its own /metrics. No forced garbage collection: what the runtime
// keeps committed is part of the figure.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { loadNumberingPlan } from '../src/infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../src/domain/numbering/parse-phone-number.js';
import { startFixtureUpstreams } from '../harness/upstream-sites.js';
import { builtServer, findFreePort, processTree, PROJECT_ROOT } from './support/processes.js';

const MIB = 1024 * 1024;

export interface FillOptions {
  cacheMaxMb: number;
  /** Distinct numbers asked. */
  numbers: number;
  /** WORKERS for the server (default 1). */
  workers?: number;
  /** Concurrent clients (default 16). */
  concurrency?: number;
  /** Also ask each number's score after its report: the second answer comes from the front cache, which then holds its bodies. */
  alsoScore?: boolean;
  /** How long the server is left without a request before its idle and its steady-state figures are sampled (default 10 s). */
  settleSeconds?: number;
  /** Extra environment for the server. */
  env?: Record<string, string>;
  /** Called with the server's pid once the steady-state figures are taken (exploration hooks). */
  beforeStop?: (pid: number) => Promise<void>;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
}

export interface FillFigures {
  cacheMaxMb: number;
  workers: number;
  numbers: number;
  requests: number;
  /** Answers that were not 200 (each one is a defect of the run). */
  failures: number;
  elapsedMs: number;
  /** RSS before the fill, settled (settledRss): `settleSeconds` after the last start-up request, median of SETTLE_SAMPLES. */
  idleRss: number;
  /** The idle samples, in order (their spread is the noise of the figure). */
  idleSamples: number[];
  /** Highest RSS sampled while the fill ran (every second). */
  peakRss: number;
  /** RSS after the fill, settled the same way as idleRss. */
  steadyRss: number;
  steadySamples: number[];
  /** Bytes charged against the cap (phone_rep_cache_charged_bytes, all caches, all workers). */
  chargedBytes: number;
  /** Per-source results held (phone_rep_cache_entries{cache="source"}), all workers. */
  sourceEntries: number;
  /** CACHE_MAX_MB as the processes report it (phone_rep_cache_max_bytes summed over workers). */
  maxBytes: number;
  /** V8's committed young and old generations and its heap in use, summed over workers (prom-client's nodejs_heap_* gauges). */
  newSpaceBytes: number;
  oldSpaceBytes: number;
  heapUsedBytes: number;
  /** CPU time of the server processes, and the part of wall time spent in garbage collection (prom-client's nodejs_gc_duration_seconds), summed over workers. */
  cpuSeconds: number;
  gcSeconds: number;
  majorGcs: number;
}

/** Resident memory of one process, in bytes (0 when it is gone). */
export function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

const mibList = (samples: number[]): string => samples.map((value) => (value / MIB).toFixed(1)).join(' ');

export function treeRss(pid: number): number {
  return processTree(pid).reduce((sum, each) => sum + rssOf(each), 0);
}

/** How many RSS samples, one a second, make a settled figure (their median). */
export const SETTLE_SAMPLES = 5;

/**
 * The RSS of a quiet process tree, taken the same way before and after a fill so that the growth
 * compares like with like: `quietSeconds` without a request (the same time for V8's collections
 * after start-up as after the fill), then SETTLE_SAMPLES samples a second apart, their median
 * (a sample caught in a collection does not decide). One sample 2 s after start-up read
 * 203.6–217.9 MiB for the same build on Node 24, where an idle server sampled each second settled
 * at 207–208 MiB within 5 s: the growth moved by up to 14 MiB with when the idle sample was taken,
 * while the steady one was already taken after 10 s. After 10 s both stay flat (docs/cache.md).
 */
export async function settledRss(pid: number, quietSeconds: number): Promise<{ median: number; samples: number[] }> {
  await new Promise((resolve) => setTimeout(resolve, quietSeconds * 1000));
  const samples: number[] = [];
  for (let index = 0; index < SETTLE_SAMPLES; index += 1) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    samples.push(treeRss(pid));
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] ?? 0, samples };
}

/** `count` distinct mobile numbers the service's parser accepts (the plan refuses unassigned blocks). */
export function validNumbers(count: number, offset = 0): string[] {
  const parse = createPhoneNumberParser(loadNumberingPlan(`${PROJECT_ROOT}data/arcep`), 'FR');
  const numbers: string[] = [];
  for (let index = offset; numbers.length < count; index += 1) {
    const prefix = index < 90_000_000 ? '06' : '07';
    const candidate = `${prefix}${String(index % 90_000_000).padStart(8, '0')}`;
    if (parse(candidate).ok) numbers.push(candidate);
  }
  return numbers;
}

interface Answer {
  status: number;
  body: string;
}

function request(agent: Agent, url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** Sum of a metric's samples whose label set contains `labels` (every worker answers a scrape for itself only, so the caller sums scrapes). */
export function metricSum(exposition: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labels !== '' && !rest.includes(labels)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

interface Started {
  child: ChildProcess;
  baseUrl: string;
  metricsUrl: string;
  output: () => string;
  stop: () => Promise<void>;
}

async function startServer(env: Record<string, string>, workers: number): Promise<Started> {
  const port = await findFreePort();
  const metricsPort = await findFreePort();
  // MEMORY_SERVER_ENTRY=dist/server.js: the server without the launcher, so without the heap limit (comparisons).
  const entry =
    process.env.MEMORY_SERVER_ENTRY === undefined ? builtServer() : `${PROJECT_ROOT}${process.env.MEMORY_SERVER_ENTRY}`;
  const child = spawn(process.execPath, [entry], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      HOST: '127.0.0.1',
      WORKERS: String(workers),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (output.length < 20_000) output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  server: Started,
  timeoutMs = 45_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`server exited: ${server.output().slice(0, 2000)}`);
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} within ${timeoutMs} ms: ${server.output().slice(0, 2000)}`);
}

/**
 * Scrapes every worker: each METRICS_PORT scrape is answered by one worker, so with n workers
 * the port is scraped until n distinct workers answered. No metric names the pid, so a worker
 * is told apart by what it holds (its entry counts per cache) and its start second; with no
 * request in flight these do not change between its scrapes.
 */
async function scrapeAll(metricsUrl: string, workers: number): Promise<string[]> {
  const byProcess = new Map<string, string>();
  for (let attempt = 0; attempt < workers * 50 && byProcess.size < workers; attempt += 1) {
    // A fresh connection each time, so the primary deals it to the next worker.
    const answer = await request(new Agent({ keepAlive: false }), metricsUrl);
    if (answer.status !== 200) continue;
    const identity = [
      'process_start_time_seconds',
      'phone_rep_cache_entries{cache="source"}',
      'phone_rep_cache_entries{cache="front"}',
      'phone_rep_cache_entries{cache="spellings"}',
    ]
      .map(
        (series) =>
          new RegExp(`^${series.replace(/[{}"=]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(answer.body)?.[1] ?? '',
      )
      .join('/');
    byProcess.set(identity, answer.body);
  }
  // Workers that hold exactly the same counts (same-size entries fill a cap to the same count)
  // cannot be told apart, and then report the same figures: each stands for one of them.
  const scrapes = [...byProcess.values()];
  for (let index = 0; scrapes.length > 0 && scrapes.length < workers; index += 1)
    scrapes.push(scrapes[index % byProcess.size] ?? '');
  return scrapes;
}

export async function fillOverHttp(options: FillOptions): Promise<FillFigures> {
  const workers = options.workers ?? 1;
  const concurrency = options.concurrency ?? 16;
  const settleSeconds = options.settleSeconds ?? 10;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const numbers = validNumbers(options.numbers);
  const upstreams = await startFixtureUpstreams();
  const server = await startServer(
    {
      ...upstreams.env,
      CACHE_MAX_MB: String(options.cacheMaxMb),
      RATE_LIMIT_MAX: '0',
      TELLOWS_RPM: '100000000',
      NUMEROINCONNU_RPM: '100000000',
      TELGUARDER_RPM: '100000000',
      UPSTREAM_CONCURRENCY: '16',
      LOG_LEVEL: 'info',
      HASH_SECRET: 'bench-secret-0123456789',
      NODE_ENV: 'production',
      ...options.env,
    },
    workers,
  );
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    await waitFor(
      async () => (await request(agent, `${server.baseUrl}/health`)).status === 200,
      'the server did not answer /health',
      server,
      // Two workers each load the numbering plan: on the shared two-core machine at a load
      // average of 20, start-up took more than 45 s.
      150_000,
    );
    if (workers > 1)
      await waitFor(
        async () => processTree(server.child.pid ?? 0).length > workers,
        `${workers} workers did not start`,
        server,
      );
    const pid = server.child.pid ?? 0;
    // Idle: settled exactly as the steady state below is, so the growth is not the noise of when
    // the idle sample was taken.
    const idle = await settledRss(pid, settleSeconds);
    const idleRss = idle.median;
    log(
      `  CACHE_MAX_MB=${options.cacheMaxMb} WORKERS=${workers}: idle RSS ${(idleRss / MIB).toFixed(1)} MiB (samples ${mibList(idle.samples)}), filling ${numbers.length} numbers…`,
    );
    let peakRss = idleRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, treeRss(pid));
    }, 1000);
    let next = 0;
    let failures = 0;
    let requests = 0;
    let firstFailure = '';
    const startedAt = performance.now();
    const client = async (): Promise<void> => {
      for (let index = next++; index < numbers.length; index = next++) {
        const paths =
          options.alsoScore === true
            ? [`/api/phone/${numbers[index]}`, `/api/phone/${numbers[index]}/score`]
            : [`/api/phone/${numbers[index]}`];
        for (const path of paths) {
          const answer = await request(agent, `${server.baseUrl}${path}`);
          requests += 1;
          if (answer.status !== 200) {
            failures += 1;
            firstFailure ||= `${answer.status} ${answer.body.slice(0, 300)}`;
          }
        }
        if (index % 20_000 === 19_999) log(`    ${index + 1} numbers, RSS ${(treeRss(pid) / MIB).toFixed(1)} MiB`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, client));
    const elapsedMs = performance.now() - startedAt;
    clearInterval(sampler);
    if (failures > 0) log(`    ${failures} answers were not 200, first: ${firstFailure}`);
    // Steady state: no request in flight for settleSeconds, then sampled as the idle figure was.
    const steady = await settledRss(pid, settleSeconds);
    const steadyRss = steady.median;
    const scrapes = await scrapeAll(server.metricsUrl, workers);
    const sum = (name: string, labels = ''): number =>
      scrapes.reduce((total, text) => total + metricSum(text, name, labels), 0);
    const figures: FillFigures = {
      cacheMaxMb: options.cacheMaxMb,
      workers,
      numbers: numbers.length,
      requests,
      failures,
      elapsedMs,
      idleRss,
      idleSamples: idle.samples,
      peakRss,
      steadyRss,
      steadySamples: steady.samples,
      chargedBytes: sum('phone_rep_cache_charged_bytes'),
      sourceEntries: sum('phone_rep_cache_entries', 'cache="source"'),
      maxBytes: sum('phone_rep_cache_max_bytes'),
      newSpaceBytes: sum('nodejs_heap_space_size_total_bytes', 'space="new"'),
      oldSpaceBytes:
        sum('nodejs_heap_space_size_total_bytes', 'space="old"') +
        sum('nodejs_heap_space_size_total_bytes', 'space="large_object"'),
      heapUsedBytes: sum('nodejs_heap_size_used_bytes'),
      cpuSeconds: sum('process_cpu_seconds_total'),
      gcSeconds: sum('nodejs_gc_duration_seconds_sum'),
      majorGcs: sum('nodejs_gc_duration_seconds_count', 'kind="major"'),
    };
    log(
      `    done in ${(elapsedMs / 1000).toFixed(0)} s: steady RSS ${(steadyRss / MIB).toFixed(1)} MiB (samples ${mibList(steady.samples)}; growth ${((steadyRss - idleRss) / MIB).toFixed(1)} MiB, ${((steadyRss - idleRss) / MIB / options.cacheMaxMb).toFixed(2)}× cap), peak ${(peakRss / MIB).toFixed(1)} MiB, charged ${(figures.chargedBytes / MIB).toFixed(1)} MiB`,
    );
    await options.beforeStop?.(pid);
    return figures;
  } finally {
    agent.destroy();
    await server.stop();
    await upstreams.close();
  }
}

// `tsx bench/memory-http.ts <cap MiB> <numbers> [workers] [alsoScore]`: one fill, for exploring by hand.
if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const [cap = '32', count = '100000', workers = '1', score = ''] = process.argv.slice(2);
  const probe = process.env.MEMORY_PROBE;
  fillOverHttp({
    cacheMaxMb: Number(cap),
    numbers: Number(count),
    workers: Number(workers),
    alsoScore: score === 'score',
    env: {
      NODE_OPTIONS: [probe === undefined ? '' : `--expose-gc --import ${probe}`, process.env.SERVER_NODE_OPTIONS ?? '']
        .join(' ')
        .trim(),
    },
    beforeStop: async (pid) => {
      if (probe === undefined) return;
      // The probe is loaded in every process of the tree (NODE_OPTIONS); the caches are in the server, a child of the launcher.
      for (const each of processTree(pid)) process.kill(each, 'SIGUSR2');
      await new Promise((resolve) => setTimeout(resolve, Number(process.env.MEMORY_PROBE_WAIT_MS ?? 3000)));
    },
  }).then(
    (figures) => process.stdout.write(`${JSON.stringify(figures)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
