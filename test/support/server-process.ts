// The shipped server (`node dist/server.js`, what `npm start` runs) as a child process, for tests
// of what only a process shows: signals, graceful shutdown, exit codes, workers. The system
// project's globalSetup builds dist/ once per run (test/support/build-once.ts). Upstreams are a slow loopback stand-in that
// answers every request "unknown" (404) after a delay, so lookups stay in flight for a while.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The compiled server entry, what `npm start` runs. */
export const BUILT_SERVER = fileURLToPath(new URL('../../dist/server.js', import.meta.url));

/** Command and arguments that start the shipped server; throws a clear error when it was not built. */
export function builtServerCommand(): { command: string; args: string[]; cwd: string } {
  if (!existsSync(BUILT_SERVER)) throw new Error(`${BUILT_SERVER} is missing: run \`npm run build\` (the system project's globalSetup does it)`);
  return { command: process.execPath, args: [BUILT_SERVER], cwd: PROJECT_ROOT };
}

export interface SlowUpstream {
  url: string;
  /** Environment pointing every upstream of the service at it. */
  env: Record<string, string>;
  /** Resolves when the next request reaches the upstream: the service is then mid-lookup. */
  nextRequest(): Promise<void>;
  close(): Promise<void>;
}

export async function startSlowUnknownUpstream(delayMs: number): Promise<SlowUpstream> {
  let waiters: Array<() => void> = [];
  const server = http.createServer((request, response) => {
    const arrived = waiters;
    waiters = [];
    for (const resolve of arrived) resolve();
    request.resume();
    setTimeout(() => response.writeHead(404, { 'content-type': 'text/html' }).end('<html>404</html>'), delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    env: { TELLOWS_API_URL: url, TELLOWS_WEB_URL: url, NUMEROINCONNU_URL: url, TELGUARDER_URL: url },
    nextRequest: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
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
}

/** Spawns the shipped server on a free loopback port and resolves once it listens. */
export async function spawnServer(env: Record<string, string>, startTimeoutMs = 45_000): Promise<ServerProcess> {
  const server = builtServerCommand();
  const child = spawn(server.command, server.args, {
    cwd: server.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), startTimeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return { child, baseUrl: `http://127.0.0.1:${port}`, port, exited, output: () => output };
}
