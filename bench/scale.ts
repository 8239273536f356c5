// Benchmark of the scale-out options: cached-lookup throughput of the real server (a child
// process, fake upstream sites on loopback, rate limiting off) with the memory cache and with
// the Redis cache in the same run, and with WORKERS=2 beside 1. One extra line shows what the
// shared Redis rate limiter costs (one Lua call per request). Hot numbers only: with Redis they
// are served by the in-process tier, which is the point of having it.
// Run alone with `npm run build && npx tsx bench/scale.ts`; needs Redis at 127.0.0.1:6379 (or BENCH_REDIS_URL).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { KNOWN_NUMBER, startFakeUpstreamSites } from '../harness/upstream-sites.js';
import { builtServer, PROJECT_ROOT } from './support/processes.js';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DURATION_S = Number(process.env.BENCH_SCALE_DURATION_S ?? 5);
const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 50);
const HOT_NUMBERS = Array.from({ length: 20 }, (_, i) => `06123456${String(i).padStart(2, '0')}`);

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: Array<{ path: string }>;
}) => Promise<AutocannonResult>;
// autocannon ships no types; this is the part of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface Variant {
  label: string;
  workers: number;
  env: Record<string, string>;
}

interface Measured {
  variant: Variant;
  result: AutocannonResult;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface RunningServer {
  base: string;
  stop(): Promise<void>;
}

async function startServer(variant: Variant, upstreamEnv: Record<string, string>): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [builtServer()], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      ...upstreamEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      MAX_IN_FLIGHT: '100000',
      TELLOWS_RPM: '100000',
      NUMEROINCONNU_RPM: '100000',
      TELGUARDER_RPM: '100000',
      HASH_SECRET: 'bench-scale-secret-0123456789',
      REDIS_URL: '',
      WORKERS: String(variant.workers),
      ...variant.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  try {
    if (variant.workers > 1) {
      await waitUntil(
        () => (stderr.match(/listening on port/g) ?? []).length >= variant.workers,
        90_000,
        () => `workers: ${stderr}`,
      );
    }
    await waitUntil(
      () =>
        fetch(`${base}/health`).then(
          (response) => response.ok,
          () => false,
        ),
      90_000,
      () => `server: ${stderr}`,
    );
    // Warm the cache; new connections spread over the workers (each has its own memory cache).
    for (let round = 0; round < variant.workers * 2; round += 1) {
      for (const number of HOT_NUMBERS) {
        const response = await fetch(`${base}/api/phone/${number}`, { headers: { connection: 'close' } });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`warm-up answered ${response.status}`);
      }
    }
    return { base, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function load(server: RunningServer): Promise<AutocannonResult> {
  return autocannon({
    url: server.base,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: HOT_NUMBERS.map((number) => ({ path: `/api/phone/${number}` })),
  });
}

function describe({ variant, result }: Measured, baseline?: Measured): string {
  const ratio = baseline
    ? ` (${(result.requests.average / baseline.result.requests.average).toFixed(2)}× ${baseline.variant.label})`
    : '';
  const problems = result.non2xx + result.errors + result.timeouts;
  return `${variant.label}: ${Math.round(result.requests.average)} req/s, latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms${ratio}${problems > 0 ? `, ${problems} non-2xx/errors` : ''}`;
}

export async function benchScale(): Promise<{ name: string; lines: string[] }> {
  const prefix = `bench:${randomBytes(4).toString('hex')}:`;
  const sites = await startFakeUpstreamSites({ fallback: KNOWN_NUMBER });
  const redis = new Redis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
  const redisEnv = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
  const variants = {
    memory: { label: 'memory cache, 1 worker', workers: 1, env: {} },
    redis: { label: 'Redis cache, 1 worker', workers: 1, env: redisEnv },
    redisLimited: {
      label: 'Redis cache + Redis rate limit, 1 worker',
      workers: 1,
      env: { ...redisEnv, RATE_LIMIT_MAX: '1000000000' },
    },
    twoWorkers: { label: 'memory cache, 2 workers', workers: 2, env: {} },
  } satisfies Record<string, Variant>;
  const keys = Object.keys(variants) as Array<keyof typeof variants>;
  const servers: Partial<Record<keyof typeof variants, RunningServer>> = {};
  try {
    // All servers up at once (idle ones cost nothing), then the load runs alternate in
    // A B C D D C B A order and each keeps its best: slow drifts of a shared machine hit every
    // variant alike instead of whichever ran last.
    await Promise.all(keys.map(async (key) => (servers[key] = await startServer(variants[key], sites.env()))));
    const best: Partial<Record<keyof typeof variants, AutocannonResult>> = {};
    for (const key of [...keys, ...[...keys].reverse()]) {
      const server = servers[key];
      if (!server) throw new Error(`no server for ${key}`);
      const result = await load(server);
      const previous = best[key];
      if (!previous || result.requests.average > previous.requests.average) best[key] = result;
    }
    const measured = {} as Record<keyof typeof variants, Measured>;
    for (const key of keys) {
      const result = best[key];
      if (!result) throw new Error(`no result for ${key}`);
      measured[key] = { variant: variants[key], result };
    }
    return {
      name: 'Scale-out: Redis cache and WORKERS',
      lines: [
        `cached lookups of ${HOT_NUMBERS.length} hot numbers, autocannon ${CONNECTIONS} connections × ${DURATION_S} s (best of 2 alternating runs) against a child server per variant, rate limiting off, ${availableParallelism()} cores shared with the load generator`,
        describe(measured.memory),
        describe(measured.redis, measured.memory),
        describe(measured.redisLimited, measured.memory),
        describe(measured.twoWorkers, measured.memory),
      ],
    };
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()));
    const written = await redis.keys(`${prefix}*`).catch(() => []);
    if (written.length > 0) await redis.del(...written);
    redis.disconnect();
    await sites.close();
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const { name, lines } = await benchScale();
  console.log(`## ${name}`);
  for (const line of lines) console.log(`- ${line}`);
}
