// Hot path: cached lookups through the real server process, next to a bare Fastify server that
// answers the same JSON bodies from memory, both pinned to core 0 and driven in turn by
// autocannon pinned to core 1, in the same run. Two modes per route:
// - closed loop (10 connections, as fast as the server answers): the requests/s ratio;
// - open loop (a fixed rate, the same for both servers, half of what the real server sustained
//   closed-loop, over 32 connections): p50/p99 latency, so a stall shows in the tail instead of
//   slowing the load generator down.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixtureUpstreams, type FixtureUpstreams } from '../test/support/fixture-upstreams.js';
import { canPinCores, findFreePort, runLoad, startNodeScript, waitUntilAnswering, type LoadResult, type RunningProcess } from './support/processes.js';
import { formatMs, formatNumber, formatPercent, type BenchRow, type BenchSection } from './support/report.js';

const SERVER_CORE = 0;
const LOAD_CORE = 1;
const BENCH_NUMBER = '0612345678';
const CLOSED_LOOP_CONNECTIONS = 10;
const OPEN_LOOP_CONNECTIONS = 32;
const OPEN_LOOP_RATE_SHARE = 0.5;

interface RouteBench {
  name: string;
  path: string;
  /** Minimum real/bare requests/s ratio from issue 8. */
  targetRatio: number;
}

const ROUTES: RouteBench[] = [
  { name: 'full report', path: `/api/phone/${BENCH_NUMBER}`, targetRatio: 0.5 },
  { name: 'score', path: `/api/phone/${BENCH_NUMBER}/score`, targetRatio: 0.6 },
];

/**
 * Where a cached request's time goes, from a CPU profile of the real server under this load
 * (node --cpu-prof, 2026-11-22): none of these dominates; their sum is several times the bare
 * server's whole cost, which is only routing and writing a ready string.
 */
const WHAT_LIMITS_THE_HOT_PATH = [
  'What limits it (CPU profile of the real server under this load): the baseline does nothing but route and write a ready string, so every step of a real cached answer counts against the ratio, and none dominates: ' +
    'the engine on an all-hit lookup (one keyed HMAC-SHA256 per number, then per-slot abort signals and deadline timers created even when every slot is a hit), ' +
    'Prometheus counters and histograms per request, one pino line per request (writev), Fastify hooks (request id, CORS, overload counters) and schema-driven serialisation of the body. ' +
    'Already done: one HMAC per number instead of one per slot, parsed spellings memoised (LRU), metric label checks memoised.',
  'Ways to close the gap, not done here: skip deadline timers and abort signals when every slot is a fresh cache hit, or keep a whole-answer front cache of serialised bodies for fresh hits.',
];

export interface HotPathOptions {
  /** Seconds per measured autocannon run (default 10, or BENCH_DURATION_S). */
  durationSeconds?: number;
}

interface SeenBody {
  status: number;
  text: string;
}

async function fetchBody(url: string): Promise<SeenBody> {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
}

/** Fills the server's cache for the benched number and returns the cached answers' bodies. */
async function warmRealServer(baseUrl: string): Promise<{ full: string; score: string }> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const full = await fetchBody(`${baseUrl}${ROUTES[0]?.path ?? ''}`);
    const score = await fetchBody(`${baseUrl}${ROUTES[1]?.path ?? ''}`);
    if (full.status === 200 && score.status === 200) {
      const meta = (JSON.parse(full.text) as { meta?: { sources?: Record<string, { status?: string; cache?: string }> } }).meta;
      const slots = Object.values(meta?.sources ?? {});
      if (slots.length === 3 && slots.every((slot) => slot.cache === 'hit')) {
        const notOk = slots.filter((slot) => slot.status !== 'ok').length;
        if (notOk > 0) throw new Error(`the fixture upstreams did not give three ok slots: ${full.text.slice(0, 400)}`);
        return { full: full.text, score: score.text };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the real server never answered the benched number from its cache');
}

function countUpstreamRequests(upstreams: FixtureUpstreams): number {
  return upstreams.requestCount('tellows') + upstreams.requestCount('numeroinconnu') + upstreams.requestCount('telguarder');
}

function failuresNote(server: string, route: string, mode: string, result: LoadResult): string[] {
  return result.failures > 0 ? [`${server} ${route} ${mode}: ${result.failures} of ${result.requests} answers were not 2xx or failed.`] : [];
}

export async function benchHotPath(options: HotPathOptions = {}): Promise<BenchSection> {
  const durationSeconds = options.durationSeconds ?? Number(process.env.BENCH_DURATION_S ?? 10);
  const warmupSeconds = Math.max(1, Math.round(durationSeconds / 3));
  const upstreams = await startFixtureUpstreams();
  const workDirectory = mkdtempSync(join(tmpdir(), 'phone-rep-bench-'));
  const running: RunningProcess[] = [];
  try {
    const realPort = await findFreePort();
    const real = startNodeScript(SERVER_CORE, 'src/server.ts', {
      ...upstreams.env,
      PORT: String(realPort),
      HOST: '127.0.0.1',
      RATE_LIMIT_MAX: '0',
      LOG_LEVEL: 'info',
      HASH_SECRET: 'bench-secret-0123456789',
      NODE_ENV: 'production',
    });
    running.push(real);
    const realUrl = `http://127.0.0.1:${realPort}`;
    await waitUntilAnswering(`${realUrl}/health`, real);
    const bodies = await warmRealServer(realUrl);
    const upstreamRequestsAfterWarmup = countUpstreamRequests(upstreams);

    const bodiesFile = join(workDirectory, 'bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const barePort = await findFreePort();
    const bare = startNodeScript(SERVER_CORE, 'bench/bare-server.ts', { PORT: String(barePort), BARE_BODIES_FILE: bodiesFile });
    running.push(bare);
    const bareUrl = `http://127.0.0.1:${barePort}`;
    await waitUntilAnswering(`${bareUrl}/health`, bare);

    const rows: BenchRow[] = [];
    const notes: string[] = [];
    for (const route of ROUTES) {
      const load = (base: string, mode: { connections: number; durationSeconds: number; overallRate?: number }) =>
        runLoad({ url: `${base}${route.path}`, core: LOAD_CORE, ...mode });
      // JIT and caches warm on both servers before anything is measured.
      await load(realUrl, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: warmupSeconds });
      await load(bareUrl, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: warmupSeconds });
      const realClosed = await load(realUrl, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds });
      const bareClosed = await load(bareUrl, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds });
      const rate = Math.max(100, realClosed.requestsPerSecond * OPEN_LOOP_RATE_SHARE);
      const realOpen = await load(realUrl, { connections: OPEN_LOOP_CONNECTIONS, durationSeconds, overallRate: rate });
      const bareOpen = await load(bareUrl, { connections: OPEN_LOOP_CONNECTIONS, durationSeconds, overallRate: rate });

      const ratio = realClosed.requestsPerSecond / bareClosed.requestsPerSecond;
      rows.push(
        {
          label: `${route.name}: requests/s, closed loop (${CLOSED_LOOP_CONNECTIONS} connections)`,
          value: formatNumber(realClosed.requestsPerSecond),
          baseline: `${formatNumber(bareClosed.requestsPerSecond)} (bare Fastify)`,
          ratio: formatPercent(ratio),
          target: `≥ ${formatPercent(route.targetRatio)}`,
          met: ratio >= route.targetRatio,
        },
        {
          label: `${route.name}: p50 latency, open loop at ${formatNumber(rate)} req/s`,
          value: formatMs(realOpen.p50Ms),
          baseline: formatMs(bareOpen.p50Ms),
          ratio: bareOpen.p50Ms > 0 ? `${formatNumber(realOpen.p50Ms / bareOpen.p50Ms, 1)}×` : 'n/a',
        },
        {
          label: `${route.name}: p99 latency, open loop at ${formatNumber(rate)} req/s`,
          value: formatMs(realOpen.p99Ms),
          baseline: formatMs(bareOpen.p99Ms),
          ratio: bareOpen.p99Ms > 0 ? `${formatNumber(realOpen.p99Ms / bareOpen.p99Ms, 1)}×` : 'n/a',
        },
        {
          label: `${route.name}: p50 / p99 latency, closed loop`,
          value: `${formatMs(realClosed.p50Ms)} / ${formatMs(realClosed.p99Ms)}`,
          baseline: `${formatMs(bareClosed.p50Ms)} / ${formatMs(bareClosed.p99Ms)}`,
        },
      );
      notes.push(
        ...failuresNote('real', route.name, 'closed loop', realClosed),
        ...failuresNote('real', route.name, 'open loop', realOpen),
        ...failuresNote('bare', route.name, 'closed loop', bareClosed),
        ...failuresNote('bare', route.name, 'open loop', bareOpen),
      );
    }
    const upstreamRequestsDuringRuns = countUpstreamRequests(upstreams) - upstreamRequestsAfterWarmup;
    notes.unshift(
      canPinCores()
        ? `Servers pinned to core ${SERVER_CORE} (taskset), autocannon to core ${LOAD_CORE}; each measured run ${durationSeconds} s after a ${warmupSeconds} s warm-up.`
        : `taskset or a second core is missing: servers and autocannon were NOT pinned, so they shared cores; each run ${durationSeconds} s.`,
      'Real server: `node --import tsx src/server.ts` with RATE_LIMIT_MAX=0, LOG_LEVEL=info (one log line per request, to /dev/null), memory cache warmed with one number whose three sources were served by loopback fakes from the adapters\' fixtures.',
      'Baseline: a bare Fastify 5 server (bench/bare-server.ts) sending the same response bodies as pre-serialised strings: no parsing, lookup, schema serialisation, hooks or logging.',
      `Open loop: autocannon --overallRate at half the real server's closed-loop rate, over ${OPEN_LOOP_CONNECTIONS} connections, the same rate for both servers. Latencies are autocannon's (millisecond resolution).`,
      `Upstream requests during the measured runs: ${upstreamRequestsDuringRuns} (every answer came from the cache).`,
    );
    if (rows.some((row) => row.met === false)) notes.push(...WHAT_LIMITS_THE_HOT_PATH);
    return { title: 'Hot path: cached lookups vs bare Fastify', rows, notes };
  } finally {
    await Promise.all(running.map((process) => process.stop()));
    await upstreams.close();
    rmSync(workDirectory, { recursive: true, force: true });
  }
}
