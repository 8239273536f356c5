// Real node:http servers on 127.0.0.1 standing in for an upstream in tests:
// - startLoopbackServer: records what it received (method, URL, headers, body), answered by a handler;
// - startFakeUpstream: answers per request as the test chooses (status, JSON, delay, black hole);
// - useCanaryLoopback: one site for the canary's tests, the canary pointed at it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { runCanary } from '../../src/sources/canary.js';
import type { UpstreamDescription } from '../../src/sources/common/wiring.js';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export type LoopbackHandler = (request: ReceivedRequest, response: http.ServerResponse) => unknown;

export async function startLoopbackServer(handler: LoopbackHandler): Promise<LoopbackServer> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: ReceivedRequest = {
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      Promise.resolve(handler(entry, response)).catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// A controllable upstream stand-in: a real node:http server on 127.0.0.1 whose answer per
// request is chosen by the test (status, JSON body, delay, or a black hole that never answers),
// counting every request it receives. close() destroys open sockets, so a black-holed request
// never outlives its test.
export interface UpstreamBehaviour {
  status?: number;
  /** Serialised as JSON; ignored for a black hole. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Accept the request and never answer. */
  blackHole?: boolean;
}

export interface UpstreamRequestInfo {
  path: string;
  /** 1 for the first request to this path. */
  countForPath: number;
  /** 1 for the first request to this server. */
  countTotal: number;
}

export type UpstreamResponder = UpstreamBehaviour | ((request: UpstreamRequestInfo) => UpstreamBehaviour);

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` without a trailing slash. */
  readonly url: string;
  /** How every path answers from now on, unless a path-specific responder is set. */
  respondWith(responder: UpstreamResponder): void;
  respondOnPath(path: string, responder: UpstreamResponder): void;
  /** Requests received (all paths, or one path). */
  requestCount(path?: string): number;
  /** Requests received but not yet answered whose connection is still open. */
  pendingCount(): number;
  resetCounts(): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(initial: UpstreamResponder = { status: 404 }): Promise<FakeUpstream> {
  let fallback: UpstreamResponder = initial;
  const byPath = new Map<string, UpstreamResponder>();
  const counts = new Map<string, number>();
  let total = 0;
  let pending = 0;
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    total += 1;
    const countForPath = (counts.get(path) ?? 0) + 1;
    counts.set(path, countForPath);
    const responder = byPath.get(path) ?? fallback;
    const behaviour = typeof responder === 'function' ? responder({ path, countForPath, countTotal: total }) : responder;
    pending += 1;
    response.once('close', () => {
      pending -= 1;
    });
    if (behaviour.blackHole === true) return;
    const answer = (): void => {
      if (response.destroyed) return;
      const status = behaviour.status ?? 200;
      const body = behaviour.body === undefined ? '' : JSON.stringify(behaviour.body);
      response.writeHead(status, { 'content-type': 'application/json', ...behaviour.headers });
      response.end(body);
    };
    if (behaviour.delayMs !== undefined && behaviour.delayMs > 0) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, behaviour.delayMs);
      timers.add(timer);
    } else {
      answer();
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    respondWith(responder) {
      fallback = responder;
    },
    respondOnPath(path, responder) {
      byPath.set(path, responder);
    },
    requestCount(path) {
      return path === undefined ? total : (counts.get(path) ?? 0);
    },
    pendingCount: () => pending,
    resetCounts() {
      total = 0;
      counts.clear();
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

// One loopback server standing in for a real site while the canary checks one upstream against it: the
// test sets the handler, then runs the canary with the site's base URL pointed at the server.
export interface CanaryLoopback {
  /** What the stand-in site answers from now on. */
  handle(handler: LoopbackHandler): void;
  /** The stand-in's port. */
  port(): number;
  /** Runs only `upstream` with `urlVariables` (and `env`) pointing at the stand-in. */
  run(numbers: string[], env?: Record<string, string>): Promise<{ healthy: boolean; lines: string[] }>;
}

export function useCanaryLoopback(upstream: UpstreamDescription, urlVariables: string[]): CanaryLoopback {
  let server: LoopbackServer | undefined;
  let handler: LoopbackHandler = (_request, response) => response.writeHead(500).end();
  beforeAll(async () => {
    server = await startLoopbackServer((request, response) => handler(request, response));
  });
  afterAll(async () => {
    await server?.close();
  });
  return {
    handle(next) {
      handler = next;
    },
    port: () => server?.port ?? 0,
    async run(numbers, env = {}) {
      const url = server?.url ?? '';
      const lines: string[] = [];
      const config = loadConfig({ ...Object.fromEntries(urlVariables.map((name) => [name, url])), ...env });
      const healthy = await runCanary({ config, numbers, out: (line) => lines.push(line), upstreams: [upstream] });
      return { healthy, lines };
    },
  };
}
