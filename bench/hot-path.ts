// Hot path: cached lookups through the real server process, next to a bare Fastify server that
// answers the same bodies from memory (the same brotli bytes for a client asking br) and the
// ceiling (that server plus an access line and metrics), all pinned to core 0 and driven by wrk
// (autocannon, with a warning, when wrk is missing) pinned to core 1, in the same run. The real
// server logs at info to a file, as in production. Per route:
// - closed loop (10 connections, as fast as the server answers), the median of five rounds, each
//   with freshly started processes: requests/s of each server alone in turn (against the bare
//   floor), then the real server and the ceiling paired, loaded at once on the same core, their
//   answers per CPU-second compared (the guard: the machine's drift moves both alike); a second
//   ceiling process checks the instrument (ceiling against ceiling, both ways);
// - open loop (a fixed rate, the same for both servers, half of what the real server sustained
//   closed-loop, over 32 connections): p50/p99 latency, so a stall shows in the tail instead of
//   slowing the load generator down.
import { writeFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixtureUpstreams, type FixtureUpstreams } from '../harness/upstream-sites.js';
import {
  canPinCores,
  canReadProcessCpu,
  closedLoopGenerator,
  findFreePort,
  runLoad,
  runPairedLoad,
  startBuiltServer,
  startNodeScript,
  waitUntilAnswering,
  type LoadResult,
  type PairedResult,
  type RunningProcess,
} from './support/processes.js';
import { formatMs, formatNumber, formatPercent, type BenchRow, type BenchSection } from './support/report.js';

const SERVER_CORE = 0;
const LOAD_CORE = 1;
const BENCH_NUMBER = '0612345678';
const CLOSED_LOOP_CONNECTIONS = 10;
const OPEN_LOOP_CONNECTIONS = 32;
const OPEN_LOOP_RATE_SHARE = 0.5;
/**
 * Issue 32's guard: the service's answers per CPU-second at least this share of the ceiling's,
 * measured paired (both on core 0 at once), the median of the rounds. (Issue 22 set 0.95 on
 * requests/s measured in turn, which this machine's own drift swamps: see the instrument check.)
 */
const CEILING_RATIO_TARGET = 0.9;
/**
 * Closed-loop rounds, each with fresh processes of the three servers; the median run is
 * reported. Five draws of processes, each run 0.6 × BENCH_DURATION_S: as much measured time per
 * server as three full-length runs, but a process's own luck weighs less in the median.
 */
const CLOSED_LOOP_ROUNDS = 5;
const CLOSED_LOOP_RUN_SHARE = 0.6;

/** The run with the median requests/s (its latencies come with it). */
function medianRun(runs: LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const median = sorted[Math.floor(sorted.length / 2)];
  if (median === undefined) throw new Error('no closed-loop run');
  return {
    ...median,
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
    requests: runs.reduce((sum, run) => sum + run.requests, 0),
  };
}

/** The median of some ratios, with their range. */
function medianOf(values: number[]): { median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  if (median === undefined) throw new Error('no value');
  return { median, min: sorted[0] ?? median, max: sorted[sorted.length - 1] ?? median };
}

const formatRange = (values: { median: number; min: number; max: number }): string =>
  `${formatPercent(values.median)} (rounds ${formatPercent(values.min)}–${formatPercent(values.max)})`;

interface RouteBench {
  name: string;
  path: string;
  headers?: Record<string, string>;
}

const FULL_PATH = `/api/phone/${BENCH_NUMBER}`;
const SCORE_PATH = `/api/phone/${BENCH_NUMBER}/score`;
const INFO_PATH = `/api/phone/${BENCH_NUMBER}/info`;
const BR = { 'accept-encoding': 'br' };

const ROUTES: RouteBench[] = [
  { name: 'full report', path: FULL_PATH },
  { name: 'score', path: SCORE_PATH },
  { name: 'full report, Accept-Encoding: br', path: FULL_PATH, headers: BR },
  { name: 'score, Accept-Encoding: br', path: SCORE_PATH, headers: BR },
  { name: '/info', path: INFO_PATH },
];

/**
 * Printed with every run, since it says what limits the ratios met or missed. The text itself
 * lives in the doc only: a copy here would drift from it.
 */
const WHAT_LIMITS_THE_HOT_PATH =
  'What a held answer pays beyond the ceiling, and what was done for it: docs/hot-path.md, "What a held answer pays".';

export interface HotPathOptions {
  /** Seconds per measured autocannon run (default 10, or BENCH_DURATION_S). */
  durationSeconds?: number;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

/** One GET with the bytes as sent (fetch would decompress them). */
function getRaw(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    }).on('error', reject);
  });
}

interface WarmBodies {
  full: string;
  score: string;
  info: string;
  fullBr?: string;
  scoreBr?: string;
}

/**
 * Fills the server's caches for the benched number (its three slots, then its front-cache
 * entry) and returns the bodies the benched requests get: text, and brotli bytes as sent.
 */
async function warmRealServer(baseUrl: string): Promise<WarmBodies> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const full = await getRaw(`${baseUrl}${FULL_PATH}`);
    const score = await getRaw(`${baseUrl}${SCORE_PATH}`);
    if (full.status === 200 && score.status === 200 && typeof full.headers.etag === 'string') {
      const text = full.bytes.toString('utf8');
      const meta = (JSON.parse(text) as { meta?: { sources?: Record<string, { status?: string; cache?: string }> } })
        .meta;
      const slots = Object.values(meta?.sources ?? {});
      if (slots.length === 3 && slots.every((slot) => slot.cache === 'hit')) {
        const notOk = slots.filter((slot) => slot.status !== 'ok').length;
        if (notOk > 0) throw new Error(`the fixture upstreams did not give three ok slots: ${text.slice(0, 400)}`);
        const info = await getRaw(`${baseUrl}${INFO_PATH}`);
        const fullBr = await getRaw(`${baseUrl}${FULL_PATH}`, BR);
        const scoreBr = await getRaw(`${baseUrl}${SCORE_PATH}`, BR);
        return {
          full: text,
          score: score.bytes.toString('utf8'),
          info: info.bytes.toString('utf8'),
          ...(fullBr.headers['content-encoding'] === 'br' ? { fullBr: fullBr.bytes.toString('base64') } : {}),
          ...(scoreBr.headers['content-encoding'] === 'br' ? { scoreBr: scoreBr.bytes.toString('base64') } : {}),
        };
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the real server never answered the benched number from its front cache');
}

function countUpstreamRequests(upstreams: FixtureUpstreams): number {
  return (
    upstreams.requestCount('tellows') + upstreams.requestCount('numeroinconnu') + upstreams.requestCount('telguarder')
  );
}

function failuresNote(server: string, route: string, mode: string, result: LoadResult): string[] {
  return result.failures > 0
    ? [`${server} ${route} ${mode}: ${result.failures} of ${result.requests} answers were not 2xx or failed.`]
    : [];
}

/** One set of the servers compared: the real server (warmed), the bare floor and the ceiling, each a fresh process. */
interface ServerSet {
  realUrl: string;
  bareUrl: string;
  ceilingUrl: string;
  /** A second ceiling process: the instrument's check (ceiling against ceiling). */
  twinUrl: string;
  realPid: number;
  ceilingPid: number;
  twinPid: number;
  logFile: string;
  stop(): Promise<void>;
}

function pidOf(process: RunningProcess): number {
  const pid = process.child.pid;
  if (pid === undefined) throw new Error('a bench server has no pid');
  return pid;
}

async function startServerSet(
  upstreams: FixtureUpstreams,
  workDirectory: string,
  index: number,
): Promise<{ set: ServerSet; bodies: WarmBodies }> {
  const running: RunningProcess[] = [];
  const stop = () => Promise.all(running.map((process) => process.stop())).then(() => undefined);
  try {
    const realPort = await findFreePort();
    const logFile = join(workDirectory, `server-${index}.log`);
    const real = startBuiltServer(
      SERVER_CORE,
      {
        ...upstreams.env,
        PORT: String(realPort),
        HOST: '127.0.0.1',
        RATE_LIMIT_MAX: '0',
        LOG_LEVEL: 'info',
        HASH_SECRET: 'bench-secret-0123456789',
        NODE_ENV: 'production',
      },
      logFile,
    );
    running.push(real);
    const realUrl = `http://127.0.0.1:${realPort}`;
    await waitUntilAnswering(`${realUrl}/health`, real);
    const bodies = await warmRealServer(realUrl);
    const bodiesFile = join(workDirectory, `bodies-${index}.json`);
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const barePort = await findFreePort();
    const bare = startNodeScript(SERVER_CORE, 'bench/bare-server.ts', {
      PORT: String(barePort),
      BARE_BODIES_FILE: bodiesFile,
    });
    running.push(bare);
    const bareUrl = `http://127.0.0.1:${barePort}`;
    await waitUntilAnswering(`${bareUrl}/health`, bare);
    // The ceiling: the bare server plus one access log line, a counter and a histogram and two headers.
    const ceilingPort = await findFreePort();
    const ceiling = startNodeScript(SERVER_CORE, 'bench/bare-server.ts', {
      PORT: String(ceilingPort),
      BARE_BODIES_FILE: bodiesFile,
      CEILING_LOG_FILE: join(workDirectory, `ceiling-${index}.log`),
    });
    running.push(ceiling);
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}`;
    await waitUntilAnswering(`${ceilingUrl}/health`, ceiling);
    const twinPort = await findFreePort();
    const twin = startNodeScript(SERVER_CORE, 'bench/bare-server.ts', {
      PORT: String(twinPort),
      BARE_BODIES_FILE: bodiesFile,
      CEILING_LOG_FILE: join(workDirectory, `ceiling-twin-${index}.log`),
    });
    running.push(twin);
    const twinUrl = `http://127.0.0.1:${twinPort}`;
    await waitUntilAnswering(`${twinUrl}/health`, twin);
    return {
      set: {
        realUrl,
        bareUrl,
        ceilingUrl,
        twinUrl,
        realPid: pidOf(real),
        ceilingPid: pidOf(ceiling),
        twinPid: pidOf(twin),
        logFile,
        stop,
      },
      bodies,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export async function benchHotPath(options: HotPathOptions = {}): Promise<BenchSection> {
  const durationSeconds = options.durationSeconds ?? Number(process.env.BENCH_DURATION_S ?? 10);
  const warmupSeconds = Math.max(1, Math.round(durationSeconds / 3));
  const closedSeconds = Math.max(2, Math.round(durationSeconds * CLOSED_LOOP_RUN_SHARE));
  const upstreams = await startFixtureUpstreams();
  const workDirectory = mkdtempSync(join(tmpdir(), 'phone-rep-bench-'));
  const running: RunningProcess[] = [];
  const sets: ServerSet[] = [];
  try {
    // One set of fresh processes per round. Two processes running the same code on this machine
    // answered at rates up to ±15 % apart, steadily for their whole life (four ceiling processes
    // side by side: 37.6–49.8 µs of CPU per answer), most of it the nextTick state that every
    // server now holds in one shape (src/infra/runtime/tick-shape.ts). What is left of a
    // process's luck still weighs less when each round draws new processes and the median of
    // the rounds is reported.
    const first = await startServerSet(upstreams, workDirectory, 0);
    sets.push(first.set);
    const bodies = first.bodies;
    const upstreamRequestsAfterWarmup = countUpstreamRequests(upstreams);
    let upstreamRequestsWarming = 0;
    // The load generator's own ceiling: node:http sending the full report's bytes, no framework.
    const trivialPort = await findFreePort();
    const trivial = startNodeScript(SERVER_CORE, 'bench/bare-server.ts', {
      PORT: String(trivialPort),
      BARE_BODIES_FILE: join(workDirectory, 'bodies-0.json'),
      TRIVIAL: '1',
    });
    running.push(trivial);
    const trivialUrl = `http://127.0.0.1:${trivialPort}`;
    await waitUntilAnswering(`${trivialUrl}/health`, trivial);
    const generator = closedLoopGenerator();
    const trivialRuns: LoadResult[] = [];
    await runLoad({
      url: `${trivialUrl}${FULL_PATH}`,
      core: LOAD_CORE,
      connections: CLOSED_LOOP_CONNECTIONS,
      durationSeconds: warmupSeconds,
    });
    for (let round = 0; round < CLOSED_LOOP_ROUNDS; round += 1)
      trivialRuns.push(
        await runLoad({
          url: `${trivialUrl}${FULL_PATH}`,
          core: LOAD_CORE,
          connections: CLOSED_LOOP_CONNECTIONS,
          durationSeconds: closedSeconds,
        }),
      );
    const trivialClosed = medianRun(trivialRuns);
    await trivial.stop();
    running.splice(running.indexOf(trivial), 1);

    const notCompressed = ROUTES.filter(
      (route) => route.headers === BR && (route.path === FULL_PATH ? bodies.fullBr : bodies.scoreBr) === undefined,
    );
    const measured = ROUTES.filter((route) => !notCompressed.includes(route));
    const load = (
      route: RouteBench,
      base: string,
      mode: { connections: number; durationSeconds: number; overallRate?: number },
    ) =>
      runLoad({
        url: `${base}${route.path}`,
        core: LOAD_CORE,
        ...mode,
        ...(route.headers === undefined ? {} : { headers: route.headers }),
      });
    // Closed loop: per round, a set of fresh processes; per route, each server warmed (JIT,
    // caches), then measured alone in turn (requests/s against the bare floor), then the real
    // server and the ceiling measured paired: both on core 0 at once, each driven by its own wrk,
    // their answers per CPU-second compared (the guard). Per round, the instrument's own error:
    // the ceiling against a second ceiling process, both ways.
    const paired = canPinCores() && canReadProcessCpu() && generator === 'wrk';
    const closedRuns = new Map<
      RouteBench,
      Array<{ real: LoadResult; bare: LoadResult; ceiling: LoadResult; paired?: [PairedResult, PairedResult] }>
    >(measured.map((route) => [route, []]));
    const twinRuns: Array<{ aloneRatio: number; pairedRatio?: number }> = [];
    const firstRoute = measured[0];
    if (firstRoute === undefined) throw new Error('no route to measure');
    for (let round = 0; round < CLOSED_LOOP_ROUNDS; round += 1) {
      const beforeWarming = countUpstreamRequests(upstreams);
      const set = round === 0 ? first.set : (await startServerSet(upstreams, workDirectory, round)).set;
      if (round > 0) sets.push(set);
      // A fresh real server fetches the benched number once while warming: not a measured run's.
      upstreamRequestsWarming += countUpstreamRequests(upstreams) - beforeWarming;
      const closed = { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: closedSeconds };
      for (const route of measured) {
        for (const base of [set.realUrl, set.bareUrl, set.ceilingUrl])
          await load(route, base, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: warmupSeconds });
        const alone = {
          real: await load(route, set.realUrl, closed),
          bare: await load(route, set.bareUrl, closed),
          ceiling: await load(route, set.ceilingUrl, closed),
        };
        const both = paired
          ? await runPairedLoad(
              [
                { url: `${set.realUrl}${route.path}`, pid: set.realPid },
                { url: `${set.ceilingUrl}${route.path}`, pid: set.ceilingPid },
              ],
              { core: LOAD_CORE, ...closed, ...(route.headers === undefined ? {} : { headers: route.headers }) },
            )
          : undefined;
        closedRuns.get(route)?.push({ ...alone, ...(both === undefined ? {} : { paired: both }) });
      }
      // The instrument check, on the first route: two processes of the same ceiling code. The
      // ceiling is measured alone again next to its twin, as each route's servers are measured
      // next to each other (its run for the first route was minutes ago, the machine since moved).
      // The twin is warmed on every route first, as the ceiling was: a process that has answered
      // only one kind of request runs cheaper than one that has seen them all (V8's feedback), by
      // about 7 % here, which the check would otherwise report as the instrument's error.
      for (const route of measured)
        await load(route, set.twinUrl, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: warmupSeconds });
      const ceilingAlone = await load(firstRoute, set.ceilingUrl, closed);
      const twinAlone = await load(firstRoute, set.twinUrl, closed);
      const twins = paired
        ? await runPairedLoad(
            [
              { url: `${set.ceilingUrl}${firstRoute.path}`, pid: set.ceilingPid },
              { url: `${set.twinUrl}${firstRoute.path}`, pid: set.twinPid },
            ],
            { core: LOAD_CORE, ...closed },
          )
        : undefined;
      twinRuns.push({
        aloneRatio: ceilingAlone.requestsPerSecond / twinAlone.requestsPerSecond,
        ...(twins === undefined ? {} : { pairedRatio: twins[0].answersPerCpuSecond / twins[1].answersPerCpuSecond }),
      });
      // The last set stays up for the open-loop runs.
      if (round < CLOSED_LOOP_ROUNDS - 1) await set.stop();
    }
    const lastSet = sets[sets.length - 1];
    if (lastSet === undefined) throw new Error('no server set');
    const realUrl = lastSet.realUrl;
    const bareUrl = lastSet.bareUrl;

    const rows: BenchRow[] = [];
    const notes: string[] = [];
    for (const route of measured) {
      const rounds = closedRuns.get(route) ?? [];
      const realClosed = medianRun(rounds.map((one) => one.real));
      const bareClosed = medianRun(rounds.map((one) => one.bare));
      const ceilingClosed = medianRun(rounds.map((one) => one.ceiling));
      const rate = Math.max(100, realClosed.requestsPerSecond * OPEN_LOOP_RATE_SHARE);
      const realOpen = await load(route, realUrl, {
        connections: OPEN_LOOP_CONNECTIONS,
        durationSeconds,
        overallRate: rate,
      });
      const bareOpen = await load(route, bareUrl, {
        connections: OPEN_LOOP_CONNECTIONS,
        durationSeconds,
        overallRate: rate,
      });

      const ratio = realClosed.requestsPerSecond / bareClosed.requestsPerSecond;
      const aloneCeilingRatios = medianOf(
        rounds.map((one) => one.real.requestsPerSecond / one.ceiling.requestsPerSecond),
      );
      const pairedRounds = rounds.flatMap((one) => (one.paired === undefined ? [] : [one.paired]));
      rows.push(
        {
          label: `${route.name}: requests/s, closed loop (${CLOSED_LOOP_CONNECTIONS} connections), against the bare floor`,
          value: formatNumber(realClosed.requestsPerSecond),
          baseline: `${formatNumber(bareClosed.requestsPerSecond)} (bare Fastify, sync handler, Buffer)`,
          ratio: formatPercent(ratio),
        },
        {
          label: `${route.name}: requests/s against the ceiling (bare + access log line, counter, histogram, two headers), each alone in turn`,
          value: formatNumber(realClosed.requestsPerSecond),
          baseline: `${formatNumber(ceilingClosed.requestsPerSecond)} (ceiling; ${formatPercent(ceilingClosed.requestsPerSecond / bareClosed.requestsPerSecond)} of bare)`,
          ratio: formatRange(aloneCeilingRatios),
          ...(paired
            ? {}
            : {
                target: `≥ ${formatPercent(CEILING_RATIO_TARGET)}`,
                met: aloneCeilingRatios.median >= CEILING_RATIO_TARGET,
              }),
        },
      );
      if (pairedRounds.length > 0) {
        const pairedRatios = medianOf(
          pairedRounds.map(([real, ceiling]) => real.answersPerCpuSecond / ceiling.answersPerCpuSecond),
        );
        const realRate = medianOf(pairedRounds.map(([real]) => real.answersPerCpuSecond));
        const ceilingRate = medianOf(pairedRounds.map(([, ceiling]) => ceiling.answersPerCpuSecond));
        rows.push({
          label: `${route.name}: answers per CPU-second against the ceiling, paired (both on core ${SERVER_CORE} at once)`,
          value: `${formatNumber(realRate.median)} (${formatNumber(1e6 / realRate.median, 1)} µs per answer)`,
          baseline: `${formatNumber(ceilingRate.median)} (${formatNumber(1e6 / ceilingRate.median, 1)} µs)`,
          ratio: formatRange(pairedRatios),
          target: `≥ ${formatPercent(CEILING_RATIO_TARGET)}`,
          met: pairedRatios.median >= CEILING_RATIO_TARGET,
        });
        notes.push(
          ...pairedRounds.flatMap(([real, ceiling]) => [
            ...failuresNote('real', route.name, 'paired', real),
            ...failuresNote('ceiling', route.name, 'paired', ceiling),
          ]),
        );
      }
      rows.push(
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
        ...failuresNote('ceiling', route.name, 'closed loop', ceilingClosed),
      );
    }
    const bareFull = rows.find((row) => row.label.startsWith('full report: requests/s, closed loop'));
    rows.unshift({
      label: `Load generator's own ceiling (${generator}, 1 thread, ${CLOSED_LOOP_CONNECTIONS} connections): node:http sending the full report's bytes`,
      value: `${formatNumber(trivialClosed.requestsPerSecond)} requests/s`,
      ...(bareFull?.baseline === undefined
        ? {}
        : { baseline: `bare Fastify full report: ${bareFull.baseline.split(' ')[0] ?? ''}` }),
    });
    // The instrument check: what each way of measuring says of two processes of the same code.
    const twinAlone = medianOf(twinRuns.map((one) => one.aloneRatio));
    const twinPaired = twinRuns.flatMap((one) => (one.pairedRatio === undefined ? [] : [one.pairedRatio]));
    rows.splice(1, 0, {
      label: `Instrument check: the ceiling against a second ceiling process (${firstRoute.name}), the same code, so 100 % is the truth`,
      value:
        twinPaired.length > 0
          ? `paired, answers per CPU-second: ${formatRange(medianOf(twinPaired))}`
          : 'paired: not run (needs taskset, /proc and wrk)',
      baseline: `alone in turn, requests/s: ${formatRange(twinAlone)}`,
    });
    const upstreamRequestsDuringRuns =
      countUpstreamRequests(upstreams) - upstreamRequestsAfterWarmup - upstreamRequestsWarming;
    const logBytes = sets.reduce((sum, set) => sum + statSync(set.logFile).size, 0);
    for (const route of notCompressed)
      notes.push(
        `${route.name}: not run, the body is under the compression threshold (${Buffer.byteLength(route.path === FULL_PATH ? bodies.full : bodies.score)} bytes), so br is never sent.`,
      );
    notes.unshift(
      canPinCores()
        ? `Servers pinned to core ${SERVER_CORE} (taskset), the load generator to core ${LOAD_CORE}; closed loop driven by ${generator === 'wrk' ? "Debian's wrk (1 thread)" : 'autocannon (WARNING: wrk is not installed; autocannon on one core may set the pace itself)'}, open loop by autocannon at a fixed rate; each closed-loop run ${closedSeconds} s after a ${warmupSeconds} s warm-up, each open-loop run ${durationSeconds} s; closed-loop figures are the median of ${CLOSED_LOOP_ROUNDS} rounds, each with freshly started processes of the servers (two processes of the same code differed by up to ±15 % here for their whole life, most of it V8's nextTick state now held in one shape by every server, src/infra/runtime/tick-shape.ts; fresh processes per round keep one process's luck from setting the ratio); open loop on the last round's processes.`
        : `taskset or a second core is missing: servers and the load generator (${generator}) were NOT pinned, so they shared cores; each run ${durationSeconds} s.`,
      paired
        ? `The guard is measured paired: the real server and the ceiling loaded at the same time, both on core ${SERVER_CORE}, each by its own wrk (1 thread, ${CLOSED_LOOP_CONNECTIONS} connections) on core ${LOAD_CORE}, and the CPU each process took (user + system, from /proc/<pid>/stat, the real server's launcher and server together) read around the run: the ratio of their answers per CPU-second is the ratio of their CPU per answer, measured at the same moment of the machine. Measured alone in turn, one after the other, the same two servers' ratio follows how fast the machine happened to run during each run: this machine's speed drifts by up to 2× within seconds (2026-11-26: the bare floor's user CPU per answer 13 µs in one 3 s run and 22 µs in its next), which the instrument check row shows on two processes of identical code.`
        : 'The guard is the ratio of requests/s measured alone in turn (the paired measurement needs taskset, /proc and wrk): on a machine whose speed drifts, see the instrument check row for how far that ratio is from the truth.',
      `Real server: \`node dist/start.js\` (what \`npm start\` runs: the server with the heap limit for CACHE_MAX_MB=256, the default) with RATE_LIMIT_MAX=0, LOG_LEVEL=info (one log line per request, written to a file as in production: ${formatNumber(logBytes / 1024 / 1024, 1)} MiB over the runs), memory cache warmed with one number whose three sources were served by loopback fakes from the adapters' fixtures, then its front-cache entry built.`,
      "Bare floor: the fastest bare Fastify 5 server serving the same bytes (bench/bare-server.ts): a synchronous handler sending a Buffer (the same brotli bytes to a client asking br), no hooks, no parsing, lookup, schema serialisation or logging. The load generator's own ceiling (node:http sending the same bytes) is the first row: a floor near it means the generator, not the server, sets the pace.",
      "Ceiling: the same bare server plus only what every production service pays per request (bench/bare-server.ts with CEILING_LOG_FILE): one pino access line written asynchronously to a file (pino's default: each line as it comes, through a per-request child logger), a prom-client counter and histogram, and two headers. The real server's ratio to the ceiling is what its own work costs, less what it saves on the access line (batched writes, no child logger): a ratio over 100 % is that saving.",
      `Open loop: autocannon --overallRate at half the real server's closed-loop rate, over ${OPEN_LOOP_CONNECTIONS} connections, the same rate for both servers. Latencies are autocannon's (millisecond resolution).`,
      `Upstream requests during the measured runs: ${upstreamRequestsDuringRuns} (every answer came from the cache).`,
    );
    notes.push(WHAT_LIMITS_THE_HOT_PATH);
    return { title: 'Hot path: cached lookups vs bare Fastify', rows, notes };
  } finally {
    await Promise.all([...running.map((process) => process.stop()), ...sets.map((set) => set.stop())]);
    await upstreams.close();
    // BENCH_KEEP_LOGS=1 keeps the servers' logs (with BENCH_SERVER_NODE_ARGS=--trace-gc, their collections).
    if (process.env.BENCH_KEEP_LOGS === '1') process.stderr.write(`server logs kept in ${workDirectory}\n`);
    else rmSync(workDirectory, { recursive: true, force: true });
  }
}
