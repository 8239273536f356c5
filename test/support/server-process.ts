// The real server entry (`src/server.ts`) as a child process, for tests of what only a process
// shows: signals, graceful shutdown, exit codes. Upstreams are a slow loopback stand-in that
// answers every request "unknown" (404) after a delay, so lookups stay in flight for a while.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowUpstream {
  url: string;
  /** Environment pointing every upstream of the service at it. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startSlowUnknownUpstream(delayMs: number): Promise<SlowUpstream> {
  const server = http.createServer((request, response) => {
    request.resume();
    setTimeout(() => response.writeHead(404, { 'content-type': 'text/html' }).end('<html>404</html>'), delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    env: { TELLOWS_API_URL: url, TELLOWS_WEB_URL: url, NUMEROINCONNU_URL: url, TELGUARDER_URL: url },
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

/** Spawns `src/server.ts` on a free loopback port and resolves once it listens. */
export async function spawnServer(env: Record<string, string>, startTimeoutMs = 45_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
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
