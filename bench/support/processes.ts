// Child processes for the benches: the built server, a helper or a load generator pinned to one
// CPU core (`taskset -c N` when the machine has it), a free loopback port, a readiness wait, and
// the load generator in its own process so it never shares the server's core: Debian's `wrk`
// (C, epoll) for closed-loop runs when it is installed, since autocannon on one core tops out
// near what a bare Fastify serves and would set the pace itself; autocannon for open-loop runs
// (a fixed rate, which wrk lacks) and as the fallback, with a printed warning.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The compiled entry `npm start` runs (the launcher, which starts the server with the heap limit
 * sized from CACHE_MAX_MB: src/start.ts): the benches measure it, never the sources.
 */
export const BUILT_SERVER = fileURLToPath(new URL('../../dist/start.js', import.meta.url));

/** The built server's path; throws a clear error when `npm run build` has not run (`npm run bench` runs it). */
export function builtServer(): string {
  if (!existsSync(BUILT_SERVER))
    throw new Error(`${BUILT_SERVER} is missing: run \`npm run build\` first (\`npm run bench\` does)`);
  return BUILT_SERVER;
}

let tasksetAvailable: boolean | undefined;
/** True when `taskset` exists and the machine has at least two cores to split. */
export function canPinCores(): boolean {
  tasksetAvailable ??= cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  return tasksetAvailable;
}

/** The command line, prefixed with `taskset -c <core>` when pinning is possible. */
export function pinnedCommand(core: number, command: string, args: string[]): { command: string; args: string[] } {
  return canPinCores() ? { command: 'taskset', args: ['-c', String(core), command, ...args] } : { command, args };
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningProcess {
  child: ChildProcess;
  /** What the child wrote to stderr (start failures). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts the built server (`node dist/start.js`, what `npm start` runs) pinned to a core. Its stdout (the log) goes
 * to `logFile` when given, as in production where logs land in a file; else it is discarded.
 */
export function startBuiltServer(core: number, env: Record<string, string>, logFile?: string): RunningProcess {
  return startProcess(core, [...serverNodeArgs(), builtServer()], env, logFile);
}

/**
 * Node arguments for the built server from BENCH_SERVER_NODE_ARGS (space-separated, for
 * exploring: `--trace-gc` writes each collection to the server's log). The launcher gives them
 * to the server process it starts (src/infra/runtime/heap-limit.ts keeps what it is given).
 */
function serverNodeArgs(): string[] {
  return (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
}

/** Starts a bench's own TypeScript helper (`node --import tsx <script>`) pinned to a core. */
export function startNodeScript(
  core: number,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): RunningProcess {
  return startProcess(core, [...nodeArgs, '--import', 'tsx', script], env);
}

function startProcess(
  core: number,
  nodeArgs: string[],
  env: Record<string, string>,
  stdoutFile?: string,
): RunningProcess {
  const { command, args } = pinnedCommand(core, process.execPath, nodeArgs);
  const stdout = stdoutFile === undefined ? 'ignore' : openSync(stdoutFile, 'a');
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'pipe'],
  });
  // The child holds its own copy of the descriptor.
  if (typeof stdout === 'number') closeSync(stdout);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 20_000) stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls `url` until it answers 200, or throws after `timeoutMs` with the child's stderr. */
export async function waitUntilAnswering(url: string, running: RunningProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) throw new Error(`process exited early: ${running.stderr().slice(0, 2000)}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms: ${running.stderr().slice(0, 2000)}`);
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx answers plus errors and timeouts: must be 0 for a valid run. */
  failures: number;
  requests: number;
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Fixed request rate for all connections together (open loop); absent = as fast as possible. */
  overallRate?: number;
  /** The core autocannon runs on. */
  core: number;
  /** Request headers, e.g. Accept-Encoding. */
  headers?: Record<string, string>;
}

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

let wrkPath: string | null | undefined;
/** Debian's wrk, when installed. */
export function wrkBinary(): string | undefined {
  if (wrkPath === undefined) {
    const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
    wrkPath = found.status === 0 && found.stdout.trim() !== '' ? found.stdout.trim() : null;
  }
  return wrkPath ?? undefined;
}

/** The load generator a closed-loop run uses. */
export function closedLoopGenerator(): 'wrk' | 'autocannon' {
  return wrkBinary() === undefined ? 'autocannon' : 'wrk';
}

let warnedNoWrk = false;

/** Runs the load: wrk for a closed loop when installed, else (and for a fixed rate) autocannon. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const wrk = wrkBinary();
  if (options.overallRate === undefined && wrk !== undefined) return runWrk(wrk, options);
  if (options.overallRate === undefined && !warnedNoWrk) {
    warnedNoWrk = true;
    process.stderr.write(
      "WARNING: wrk is not installed (apt install wrk): closed-loop runs use autocannon, which on one core can be slower than the servers it drives, so the ratios may be the load generator's.\n",
    );
  }
  return runAutocannon(options);
}

/** A wrk duration such as `1.23ms`, `850.00us` or `1.02s`, in milliseconds. */
export function wrkMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (match === null) return Number.NaN;
  const value = Number(match[1]);
  const unit = match[2];
  return unit === 'us' ? value / 1000 : unit === 'ms' ? value : unit === 's' ? value * 1000 : value * 60_000;
}

/** Runs a load generator in its own (pinned) process; its standard output, or an error naming it. */
async function runPinned(
  name: string,
  core: LoadOptions['core'],
  program: string,
  programArgs: string[],
): Promise<string> {
  const { command, args } = pinnedCommand(core, program, programArgs);
  const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close', not 'exit': a child can exit before its output has been read to the end, and a
  // run's summary (wrk's comes last) read at 'exit' was once empty.
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`${name} exited ${code}: ${stderr.slice(0, 500)}`);
  return stdout;
}

async function runWrk(wrk: string, options: LoadOptions): Promise<LoadResult> {
  const wrkArgs = ['-t', '1', '-c', String(options.connections), '-d', `${options.durationSeconds}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {})) wrkArgs.push('-H', `${name}: ${value}`);
  wrkArgs.push(options.url);
  const stdout = await runPinned('wrk', options.core, wrk, wrkArgs);
  const requestsPerSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, value) => sum + Number(value), 0);
  if (!Number.isFinite(requestsPerSecond)) throw new Error(`could not read wrk's output: ${stdout.slice(0, 500)}`);
  return {
    requestsPerSecond,
    p50Ms: wrkMs(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1] ?? ''),
    p99Ms: wrkMs(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1] ?? ''),
    failures: non2xx + errors,
    requests,
  };
}

/** Runs autocannon in its own (pinned) process and reads its JSON result. */
async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const cli = fileURLToPath(new URL('../../node_modules/autocannon/autocannon.js', import.meta.url));
  const cliArgs = [cli, '-c', String(options.connections), '-d', String(options.durationSeconds), '-j'];
  if (options.overallRate !== undefined) cliArgs.push('-R', String(Math.round(options.overallRate)));
  for (const [name, value] of Object.entries(options.headers ?? {})) cliArgs.push('-H', `${name}=${value}`);
  cliArgs.push(options.url);
  const stdout = await runPinned('autocannon', options.core, process.execPath, cliArgs);
  const result = JSON.parse(stdout) as AutocannonJson;
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    requests: result.requests.total,
  };
}

/** The pid and its descendants' pids (the launcher's server, the cluster's workers), from /proc. */
export function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    children = [];
  }
  return [pid, ...children.flatMap(processTree)];
}

/** User + system CPU in clock ticks from the text of /proc/<pid>/stat (fields 14 and 15; the name in field 2 may hold spaces and parentheses). */
export function cpuTicksFromStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 200)}`);
  return ticks;
}

let ticksPerSecond: number | undefined;
/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 when it cannot be read). */
function clockTicksPerSecond(): number {
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;
  return ticksPerSecond;
}

/** CPU time (user + system) used so far by a process and its descendants, in seconds (a process gone in between counts 0). */
export function cpuSecondsOfTree(pid: number): number {
  let ticks = 0;
  for (const each of processTree(pid)) {
    try {
      ticks += cpuTicksFromStat(readFileSync(`/proc/${each}/stat`, 'utf8'));
    } catch {
      // gone
    }
  }
  return ticks / clockTicksPerSecond();
}

/** Whether CPU time per process can be read (Linux /proc). */
export function canReadProcessCpu(): boolean {
  return existsSync(`/proc/${process.pid}/stat`);
}

export interface PairedTarget {
  url: string;
  /** The server's process (its descendants are counted with it). */
  pid: number;
}

export interface PairedResult extends LoadResult {
  cpuSeconds: number;
  /** Answers per second of the server's CPU: the inverse of its CPU per answer. */
  answersPerCpuSecond: number;
}

/**
 * Two servers loaded at the same time, each by its own closed-loop generator on `core`, and the
 * CPU each took read around the run: with both servers pinned to one core, each answers as the
 * other does, at the same moment of the machine, so the ratio of their answers per CPU-second
 * is their ratio of CPU per answer, whatever the machine's speed does meanwhile.
 */
export async function runPairedLoad(
  targets: readonly [PairedTarget, PairedTarget],
  options: Omit<LoadOptions, 'url' | 'overallRate'>,
): Promise<[PairedResult, PairedResult]> {
  const before = targets.map((target) => cpuSecondsOfTree(target.pid));
  const results = await Promise.all(targets.map((target) => runLoad({ ...options, url: target.url })));
  const paired = targets.map((target, index): PairedResult => {
    const result = results[index];
    if (result === undefined) throw new Error('a paired run has no result');
    const cpuSeconds = cpuSecondsOfTree(target.pid) - (before[index] ?? 0);
    if (cpuSeconds <= 0)
      throw new Error(`${target.url}: its server took no CPU during the run (is its pid ${target.pid} right?)`);
    return { ...result, cpuSeconds, answersPerCpuSecond: result.requests / cpuSeconds };
  });
  return [paired[0] as PairedResult, paired[1] as PairedResult];
}
