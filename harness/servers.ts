// The service itself for tests that talk to it over real HTTP, run one of two ways:
// - in process (startTestServer): the real application on 127.0.0.1 with a chosen environment
//   and overrides, for tests that send real requests and may swap a dependency;
// - as a child process (spawnServer): the shipped build, what `npm start` runs, for what only a
//   process shows: signals, graceful shutdown, exit codes, workers.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildAdminApp } from '../src/admin-app.js';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config/config.js';
import { createServiceDependencies, type ServiceDependencies, type ServiceOverrides } from '../src/composition.js';
import type { NumberingPlan } from '../src/domain/numbering/numbering-plan.js';
import { loadNumberingPlan } from '../src/infra/arcep/load-numbering-plan.js';
import { healthyFakeSources } from './lookup.js';
import { serveOnLoopback } from './loopback.js';
import { watchOutput } from './processes.js';
import { upstreamEnv } from './upstream-sites.js';

// The real application on 127.0.0.1 with a chosen environment. The numbering plan is parsed
// once per test file.
let plan: NumberingPlan | undefined;
export function testNumberingPlan(): NumberingPlan {
  plan ??= loadNumberingPlan('data/arcep');
  return plan;
}

export interface TestServer {
  baseUrl: string;
  app: FastifyInstance;
  config: Config;
  /** The running parts (the blocklist feed, the metrics…). */
  deps: ServiceDependencies;
  close(): Promise<void>;
}

export async function startTestServer(
  options: { env?: Record<string, string>; overrides?: ServiceOverrides; logger?: Logger } = {},
): Promise<TestServer> {
  const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', ...options.env });
  const deps = await createServiceDependencies(config, options.logger, {
    numberingPlan: testNumberingPlan(),
    ...options.overrides,
  });
  const app = await buildApp({ ...deps.app, logger: options.logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    app,
    config,
    deps,
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}

// The shipped server (`node dist/server.js`) as a child process. The system project's
// globalSetup builds dist/ once per run (build-once.ts). Upstreams are a slow loopback stand-in
// that answers every request "unknown" (404) after a delay, so lookups stay in flight for a while.
const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The compiled server entry, what `npm start` runs. */
export const BUILT_SERVER = fileURLToPath(new URL('../dist/server.js', import.meta.url));

/** Command and arguments that start the shipped server; throws a clear error when it was not built. */
export function builtServerCommand(nodePath = process.execPath): { command: string; args: string[]; cwd: string } {
  if (!existsSync(BUILT_SERVER))
    throw new Error(`${BUILT_SERVER} is missing: run \`npm run build\` (the system project's globalSetup does it)`);
  return { command: nodePath, args: [BUILT_SERVER], cwd: PROJECT_ROOT };
}

export interface SlowUpstream {
  url: string;
  /** Environment pointing every upstream of the service at it. */
  env: Record<string, string>;
  /** Resolves when the next request reaches the upstream: the service is then mid-lookup. */
  nextRequest(): Promise<void>;
  /** The request targets (path and query) that reached the upstream so far, oldest first. */
  requestedUrls(): readonly string[];
  close(): Promise<void>;
}

export async function startSlowUnknownUpstream(delayMs: number): Promise<SlowUpstream> {
  let waiters: Array<() => void> = [];
  const requested: string[] = [];
  const served = await serveOnLoopback((request, response) => {
    requested.push(request.url ?? '');
    const arrived = waiters;
    waiters = [];
    for (const resolve of arrived) resolve();
    request.resume();
    setTimeout(() => response.writeHead(404, { 'content-type': 'text/html' }).end('<html>404</html>'), delayMs);
  });
  return {
    url: served.url,
    env: upstreamEnv(served.url),
    nextRequest: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
      }),
    requestedUrls: () => requested,
    close: () => served.close(),
  };
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Everything the process printed so far (for assertion messages). */
  output(): string;
  /** Resolves once the process has printed (stdout or stderr) text matching the pattern. */
  printed(pattern: RegExp): Promise<void>;
}

/** Spawns the shipped server on a free loopback port and resolves once it listens (with `nodePath`, on that Node binary). */
export async function spawnServer(
  env: Record<string, string>,
  startTimeoutMs = 45_000,
  nodePath?: string,
): Promise<ServerProcess> {
  const server = builtServerCommand(nodePath);
  const child = spawn(server.command, server.args, {
    cwd: server.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, printed } = watchOutput(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      printed(listening),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`server did not start: ${output()}`)), startTimeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const port = Number(listening.exec(output())?.[1]);
  return { child, baseUrl: `http://127.0.0.1:${port}`, port, exited, output, printed };
}

export interface AdminServer {
  /** The admin server's base URL (its own port, as ADMIN_PORT gives it). */
  base: string;
  deps: ServiceDependencies;
  close(): Promise<void>;
}

/** The admin API alone on a loopback port of its own, as ADMIN_PORT serves it, over the service's dependencies built from `env`. */
export async function startAdminServer(env: Record<string, string>, token: string): Promise<AdminServer> {
  const config = loadConfig({ ...env, ADMIN_TOKEN: token, ADMIN_PORT: '0' });
  const deps = await createServiceDependencies(config, undefined, {
    numberingPlan: testNumberingPlan(),
    sources: healthyFakeSources(),
  });
  const admin = await buildAdminApp({ ...deps.app, lists: deps.lists }, token);
  await admin.listen({ port: 0, host: '127.0.0.1' });
  const address = admin.server.address();
  return {
    base: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
    deps,
    close: async () => {
      await admin.close();
      await deps.close();
    },
  };
}
