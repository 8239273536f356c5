// The server process: reads config, builds the dependencies and the app, listens, and shuts
// down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, then exit,
// or exit anyway when SHUTDOWN_GRACE_MS runs out). With WORKERS > 1 it becomes the cluster
// primary (cluster.ts) and each forked worker runs the same entry as a server. `npm start`
// runs it through the launcher (start.ts), which gives it the heap limit sized from CACHE_MAX_MB.
import cluster from 'node:cluster';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { buildApp } from './app.js';
import { createServiceDependencies } from './composition.js';
import { runPrimary } from './cluster.js';
import { startMetricsServer, type MetricsServer } from './http/plugins/metrics.js';
import { serverExecArgv } from './infra/runtime/heap-limit.js';
import { buildAdminApp } from './admin-app.js';
import { logDestination } from './infra/logging/log-destination.js';
import { holdNextTickShape } from './infra/runtime/tick-shape.js';
import { packageVersion } from './config/package-info.js';
import { formerListsFileWarning, startupLineOf } from './startup-line.js';

export async function startServer(
  config: Config,
): Promise<{ close: () => Promise<void>; port: number; metricsPort?: number; adminPort?: number }> {
  // Keeps Node's nextTick entries in one shape for the process's life (tick-shape.ts: without it,
  // about half the processes pay 10 % more CPU per answer, at random).
  await holdNextTickShape();
  const destination = logDestination();
  const logger = pino({ level: config.LOG_LEVEL, base: { pid: process.pid } }, destination);
  const deps = await createServiceDependencies(config, logger);
  const app = await buildApp({ ...deps.app, logger });
  await app.listen({ port: config.PORT, host: config.HOST });
  // The start-up lines (the listening address first) go out at once, not with the first batch.
  destination.flush();
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.PORT;
  // METRICS_PORT: the scrape endpoint on a port of its own, on METRICS_HOST (loopback by default).
  let metricsServer: MetricsServer | undefined;
  if (deps.metrics && config.METRICS_PORT !== undefined) {
    metricsServer = await startMetricsServer({
      registry: deps.metrics.registry,
      render: deps.metrics.render,
      port: config.METRICS_PORT,
      host: config.METRICS_HOST,
    });
    logger.info(`Metrics listening at ${httpAddress(config.METRICS_HOST, metricsServer.port)}`);
  }
  // ADMIN_PORT: the lists' admin API on a port of its own, on ADMIN_HOST (loopback by default).
  const adminApp =
    config.ADMIN_TOKEN !== undefined && config.ADMIN_PORT !== undefined
      ? await buildAdminApp({ ...deps.app, lists: deps.lists, tokens: deps.tokens, logger }, config.ADMIN_TOKEN)
      : undefined;
  let adminPort: number | undefined;
  if (adminApp !== undefined) {
    await adminApp.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
    const adminAddress = adminApp.server.address();
    const listening =
      typeof adminAddress === 'object' && adminAddress !== null ? adminAddress.port : (config.ADMIN_PORT ?? 0);
    logger.info(`Admin API listening at ${httpAddress(config.ADMIN_HOST, listening)}`);
    adminPort = listening;
  }
  // One line saying what is on (startup-line.ts: no secret in it).
  const startup = startupLineOf(config, {
    version: packageVersion(),
    numberingData: { dataDate: deps.numberingPlan.dataDate, ...deps.numberingData },
    ...(adminPort === undefined ? {} : { adminPort }),
  });
  logger.info({ startup: startup.fields }, startup.message);
  const formerLists = formerListsFileWarning(config);
  if (formerLists !== undefined) logger.warn(formerLists);
  destination.flush();
  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    closing ??= (async () => {
      deps.beginShutdown();
      await app.close();
      await adminApp?.close();
      await metricsServer?.close();
      await deps.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    })();
    return closing;
  };
  return {
    close,
    port,
    ...(metricsServer ? { metricsPort: metricsServer.port } : {}),
    ...(adminPort === undefined ? {} : { adminPort }),
  };
}

/** `http://host:port`, an IPv6 address in brackets (the start-up lines name each port so). */
function httpAddress(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Graceful shutdown on SIGTERM/SIGINT. Only the first signal starts it; later ones (an impatient
 * orchestrator, Ctrl-C pressed twice, the cluster primary forwarding a terminal's SIGINT) are
 * logged and ignored, so they never cut the requests in flight: the grace period alone bounds
 * the exit. A listener stays installed throughout, since without one Node's default action
 * for the signal would kill the process at once.
 */
export function installShutdown(close: () => Promise<void>, graceMs: number, log: (message: string) => void): void {
  let signalledAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalledAt !== undefined) {
      const leftMs = Math.max(0, graceMs - (Date.now() - signalledAt));
      log(`${signal} received again: already shutting down (exit in at most ${leftMs} ms)`);
      return;
    }
    signalledAt = Date.now();
    log(`${signal} received: finishing in-flight requests (at most ${graceMs} ms)`);
    const timer = setTimeout(() => {
      log('grace period over: exiting with requests still open');
      process.exit(1);
    }, graceMs);
    timer.unref();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * Runs this process as the service: the cluster primary with WORKERS > 1 (each worker forked with
 * the heap limit for its share of CACHE_MAX_MB, infra/runtime/heap-limit.ts), else a server.
 */
export async function runServerProcess(config: Config): Promise<void> {
  const log = (message: string): void => void process.stderr.write(`${message}\n`);
  const { workers } = config;
  if (workers > 1 && cluster.isPrimary) {
    const workerExecArgv = serverExecArgv(process.execArgv, process.env.NODE_OPTIONS, config.CACHE_MAX_MB / workers);
    const primary = runPrimary({ workers, shutdownGraceMs: config.SHUTDOWN_GRACE_MS, log, workerExecArgv });
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      // A repeated signal must not reach Node's default action (exit at once, orphaning the
      // workers mid-request); the first one already bounds the stop by the grace period.
      if (stopping) {
        log(`${signal} received again: already stopping ${workers} workers`);
        return;
      }
      stopping = true;
      log(`${signal} received: stopping ${workers} workers`);
      primary.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    return;
  }
  const { close } = await startServer(config);
  installShutdown(close, config.SHUTDOWN_GRACE_MS, log);
}

// `node dist/server.js`: the same, with the heap limit only as given on the command line (a
// single process cannot size its own; `npm start` runs dist/start.js, which does).
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  await runServerProcess(config);
}

const isEntry = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry) {
  main().catch((error: unknown) => {
    process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
