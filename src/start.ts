// The way to start the service: `npm start` runs `node dist/start.js`. It reads the
// configuration and starts the server (server.ts) with the V8 heap limit sized from CACHE_MAX_MB
// (infra/runtime/heap-limit.ts), which Node only takes when a process starts:
// - one process (WORKERS=1) without a heap limit of the operator's: the server runs in a child
//   process started with the limit, and this one relays signals and the exit status to it
//   (infra/runtime/relaunch.ts);
// - the operator gave `--max-old-space-size` (on the command line or in NODE_OPTIONS): theirs is
//   kept, and the server runs in this process;
// - WORKERS > 1: this process is the cluster primary, which holds no cache and needs no limit;
//   each worker is forked with the limit for its share of the cap (cluster.ts).
// The package's `.env`, when present, is read first, the environment already set winning over it
// (config/package-info.ts), as compose reads it; `npm start` runs this file with `exec`, so npm's
// SIGTERM and SIGINT reach this process, which passes them on and exits with the server.
// With `--exec-plan` it prints what it would run (the Node arguments and the script) and exits: the
// container's entrypoint (docker/entrypoint.sh) execs that, so the image runs one Node process.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { loadPackageEnvFile } from './config/package-info.js';
import { heapLimitGiven, serverExecArgv } from './infra/runtime/heap-limit.js';
import { nodeFloorProblem } from './infra/runtime/node-floor.js';
import { relaunch } from './infra/runtime/relaunch.js';

/** `node dist/start.js --exec-plan` prints the Node arguments and script it would run, and runs nothing. */
const EXEC_PLAN = '--exec-plan';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

const tooOld = nodeFloorProblem();
if (tooOld !== undefined) {
  process.stderr.write(`${tooOld}\n`);
  process.exit(2);
}
loadPackageEnvFile();
const config = readConfig();
const relaunched =
  cluster.isPrimary && config.workers === 1 && !heapLimitGiven(process.execArgv, process.env.NODE_OPTIONS);
const serverScript = fileURLToPath(new URL('./server.js', import.meta.url));
if (process.argv[2] === EXEC_PLAN) {
  // What to run instead of this launcher, one word per line: the image's entrypoint execs it, so
  // a container runs one Node process (the server, with its heap flags) under tini.
  const plan = relaunched
    ? [...serverExecArgv([], process.env.NODE_OPTIONS, config.CACHE_MAX_MB), serverScript]
    : [fileURLToPath(import.meta.url)];
  process.stdout.write(`${plan.join('\n')}\n`);
} else if (relaunched) {
  relaunch(
    serverExecArgv(process.execArgv, process.env.NODE_OPTIONS, config.CACHE_MAX_MB),
    serverScript,
    process.argv.slice(2),
  );
} else {
  const { runServerProcess } = await import('./server.js');
  await runServerProcess(config);
}
