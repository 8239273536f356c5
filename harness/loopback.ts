// Real sockets on 127.0.0.1 for tests: servers standing in for what the code under test talks
// to, and a client that talks to the service the way no client library does.
// - serveOnLoopback: the one way these helpers start an HTTP server on a free loopback port and
//   close it again (ending every connection, so no request outlives its test);
// - startLoopbackServer: records what it received (method, URL, headers, body), answered by a handler;
// - startFakeUpstream: answers per request as the test chooses (status, JSON, delay, black hole);
// - startTcpProxy: a proxy in front of the real Redis that can stall, cut or slow it;
// - rawExchange, parseRawAnswer: HTTP/1.1 written and read byte by byte on a bare socket.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 at a port the system picks; resolves with that port. */
async function listenOnLoopback(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export interface LoopbackHttp {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  url: string;
  port: number;
  /** Stops listening and ends every connection, idle or mid-request. */
  close(): Promise<void>;
}

/** An HTTP server on a free loopback port, answering with `listener`. */
export async function serveOnLoopback(
  listener: http.RequestListener,
  options: http.ServerOptions = {},
): Promise<LoopbackHttp> {
  const server = http.createServer(options, listener);
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LoopbackServer extends LoopbackHttp {
  received: ReceivedRequest[];
}

export type LoopbackHandler = (request: ReceivedRequest, response: http.ServerResponse) => unknown;

export async function startLoopbackServer(handler: LoopbackHandler): Promise<LoopbackServer> {
  const received: ReceivedRequest[] = [];
  const served = await serveOnLoopback((request, response) => {
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
  return { ...served, received };
}

// A controllable upstream stand-in whose answer per request is chosen by the test (status, JSON
// body, delay, or a black hole that never answers), counting every request it receives. close()
// destroys open sockets, so a black-holed request never outlives its test.
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

  const served = await serveOnLoopback(
    (request, response) => {
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      total += 1;
      const countForPath = (counts.get(path) ?? 0) + 1;
      counts.set(path, countForPath);
      const responder = byPath.get(path) ?? fallback;
      const behaviour =
        typeof responder === 'function' ? responder({ path, countForPath, countTotal: total }) : responder;
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
    },
    { keepAliveTimeout: 1000 },
  );

  return {
    url: served.url,
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
      await served.close();
    },
  };
}

// A TCP proxy on loopback in front of the real Redis, so a test can make Redis unreachable or
// stalled for its own connections only (CLIENT PAUSE would freeze every test sharing Redis).
// Modes: `pass` forwards; `stall` keeps the sockets open but forwards nothing (a hung Redis);
// `cut` drops every connection and resets new ones (a dead Redis). `setLatencyMs` delays every
// reply (a slow Redis that still answers).
export type ProxyMode = 'pass' | 'stall' | 'cut';

export interface TcpProxy {
  port: number;
  url: string;
  setMode(mode: ProxyMode): void;
  /** Delay added to every chunk from the target to the client (0: none). */
  setLatencyMs(ms: number): void;
  /**
   * Names (lower case) of the Redis commands clients sent through the proxy since the last call,
   * PING excepted (the clients' own health probes): "Redis saw no command" without timing anything.
   * `exceptKeys` leaves out the commands whose first argument (the key or channel) matches it: the
   * operator lists' own polling (`/\{lists\}:/`), which no lookup sends.
   */
  takeCommands(options?: { exceptKeys?: RegExp }): string[];
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  let latencyMs = 0;
  let commands: Array<{ name: string; key: string | undefined }> = [];
  // RESP: a command is an array of bulk strings, its first element the command's name, its
  // second (when there is one) the key or channel.
  const COMMAND_NAME = /\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n(?:\$\d+\r\n([^\r]*)\r\n)?/g;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();

  const server = net.createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const forward = (from: net.Socket, to: net.Socket, delayed: boolean) => {
      from.on('data', (chunk: Buffer) => {
        // A stalled proxy swallows the bytes: the request is lost, like on a hung server.
        if (mode !== 'pass') return;
        // Timers of equal delay fire in order, so replies keep their order.
        if (!delayed || latencyMs === 0) {
          to.write(chunk);
          return;
        }
        setTimeout(() => {
          if (!to.destroyed) to.write(chunk);
        }, latencyMs);
      });
    };
    client.on('data', (chunk: Buffer) => {
      for (const match of chunk.toString('latin1').matchAll(COMMAND_NAME)) {
        const name = (match[1] ?? '').toLowerCase();
        if (name !== 'ping') commands.push({ name, key: match[2] });
      }
    });
    forward(client, upstream, false);
    forward(upstream, client, true);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const port = await listenOnLoopback(server);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    setMode(next) {
      mode = next;
      if (next === 'cut') {
        for (const { client, upstream } of pairs) {
          client.resetAndDestroy();
          upstream.destroy();
        }
        pairs.clear();
      }
    },
    setLatencyMs(ms) {
      latencyMs = ms;
    },
    takeCommands(options) {
      const taken = commands;
      commands = [];
      const except = options?.exceptKeys;
      return taken
        .filter((command) => except === undefined || command.key === undefined || !except.test(command.key))
        .map((command) => command.name);
    },
    close: async () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// HTTP/1.1 over a bare TCP socket, for requests no client library sends (absolute-form request
// lines, duplicate or missing Host, bodies on GET, unknown methods) and for reading exactly
// what the server wrote back.
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything received, head included. */
  raw: string;
}

export function parseRawAnswer(raw: string): RawAnswer {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    body: split === -1 ? '' : raw.slice(split + 4),
    raw,
  };
}

/**
 * Writes `request` (text or chunks), then reads until the server closes the connection. Meant
 * for requests answered with `Connection: close` (or sent with it).
 */
export function rawExchange(
  port: number,
  request: string | Buffer,
  options: { localAddress?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(
      { port, host: '127.0.0.1', ...(options.localAddress ? { localAddress: options.localAddress } : {}) },
      () => {
        socket.write(request);
      },
    );
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while we still write (a refused body): what it sent is the answer.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (chunks.length > 0 || error.code === 'ECONNRESET' || error.code === 'EPIPE')
        resolve(parseRawAnswer(Buffer.concat(chunks).toString('latin1')));
      else reject(error);
    });
    socket.on('close', () => resolve(parseRawAnswer(Buffer.concat(chunks).toString('latin1'))));
  });
}
