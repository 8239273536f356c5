// All cores of one machine: with WORKERS > 1 the process becomes a node:cluster primary that
// forks that many server processes sharing the port (the primary accepts and hands connections
// round-robin), restarts a worker that dies – with a growing delay, never in a tight loop – and
// on SIGTERM/SIGINT asks every worker to finish its in-flight requests, exiting when all have.
// The primary itself serves nothing and opens no connection to Redis or upstreams, and holds
// no cache: each worker takes CACHE_MAX_MB / WORKERS (infra/cache/cache-budget.ts), so the cap
// holds for the machine, and each is started with the V8 heap limit for its share (workerExecArgv).
import cluster, { type Worker } from 'node:cluster';

export interface PrimaryOptions {
  /** How many server processes to fork (the configuration's `workers`, parsed from WORKERS). */
  workers: number;
  /** How long workers get to finish in-flight requests before they are killed (SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number;
  log: (message: string) => void;
  /** Node arguments of each worker: the primary's, with the heap limit for the worker's share of the cap (infra/runtime/heap-limit.ts). Default: the primary's. */
  workerExecArgv?: string[];
  /** First restart delay after a crash; doubles with each crash in a row (default 500 ms). */
  restartInitialDelayMs?: number;
  /** Cap of the restart delay (default 30 s). */
  restartMaxDelayMs?: number;
  /** A worker that lived this long counts as healthy: the next crash starts the delays afresh (default 30 s). */
  stableAfterMs?: number;
}

export interface Primary {
  /** Pids of the workers alive now. */
  workerPids(): number[];
  /** Graceful stop: SIGTERM to every worker, SIGKILL to any still alive after the grace period. */
  stop(): Promise<void>;
}

/** Restart delay after `crashesInARow` (≥ 1) quick crashes. */
export function restartDelayMs(crashesInARow: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, crashesInARow - 1));
}

export function runPrimary(options: PrimaryOptions): Primary {
  const initialMs = options.restartInitialDelayMs ?? 500;
  const maxMs = options.restartMaxDelayMs ?? 30_000;
  const stableAfterMs = options.stableAfterMs ?? 30_000;
  const startedAt = new Map<Worker, number>();
  const restartTimers = new Set<NodeJS.Timeout>();
  let crashesInARow = 0;
  let stopping: Promise<void> | undefined;
  // Node's supported way to start the workers with flags of their own.
  if (options.workerExecArgv !== undefined) cluster.setupPrimary({ execArgv: options.workerExecArgv });

  function fork(): void {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
  }

  cluster.on('exit', (worker, code, signal) => {
    const livedMs = Date.now() - (startedAt.get(worker) ?? Date.now());
    startedAt.delete(worker);
    if (stopping) return;
    crashesInARow = livedMs >= stableAfterMs ? 1 : crashesInARow + 1;
    const delayMs = restartDelayMs(crashesInARow, initialMs, maxMs);
    options.log(
      `worker ${worker.process.pid ?? '?'} exited (${signal ?? `code ${code}`}); restarting in ${delayMs} ms`,
    );
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (!stopping) fork();
    }, delayMs);
    restartTimers.add(timer);
  });

  cluster.on('listening', (worker, address) => {
    options.log(`worker ${worker.process.pid ?? '?'} listening on port ${address.port}`);
  });

  for (let i = 0; i < options.workers; i += 1) fork();
  options.log(`primary ${process.pid} started ${options.workers} workers`);

  return {
    workerPids: () =>
      [...startedAt.keys()].flatMap((worker) => (worker.process.pid === undefined ? [] : [worker.process.pid])),
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        for (const timer of restartTimers) clearTimeout(timer);
        restartTimers.clear();
        const alive = [...startedAt.keys()];
        if (alive.length === 0) return resolve();
        const killTimer = setTimeout(() => {
          options.log('grace period over: killing workers still running');
          for (const worker of startedAt.keys()) worker.process.kill('SIGKILL');
        }, options.shutdownGraceMs + 1000);
        cluster.on('exit', () => {
          if (startedAt.size > 0) return;
          clearTimeout(killTimer);
          resolve();
        });
        // Each worker runs the same graceful shutdown as a single process would on SIGTERM.
        for (const worker of alive) worker.process.kill('SIGTERM');
      });
      return stopping;
    },
  };
}
