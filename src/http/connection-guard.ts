// Connection accounting on the HTTP server, before any byte is parsed: a global cap kept below
// the process's file-descriptor limit and a per-client-address cap, past which a new connection
// is destroyed at once, so one address holding thousands of sockets cannot starve the others
// (or the process of descriptors for Redis and upstreams). The address is the socket's: it is
// counted before any header (and so any X-Forwarded-For) exists.
//
// A connection the server ends is destroyed CLOSE_LINGER_MS after its last bytes are handed to
// the kernel, whether or not the client reads or closes its side (see lingerThenDestroy). What
// one connection may pipeline is bounded in pipelining.ts.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { responseInFlight, stopReading } from './node-http-internals.js';

export interface ConnectionGuardOptions {
  /** MAX_CONNECTIONS: lowered to the descriptor limit minus a reserve when that is smaller. */
  maxConnections: number;
  /** MAX_CONNECTIONS_PER_ADDRESS; 0 = no per-address cap. */
  maxPerAddress: number;
  onRefused?: (reason: 'total' | 'per_address') => void;
  /** How long an ended connection may wait for the client's close (default CLOSE_LINGER_MS). */
  closeLingerMs?: number;
}

export interface ConnectionGuard {
  /** The cap in force (MAX_CONNECTIONS, or less when the descriptor limit is lower). */
  readonly maxConnections: number;
  open(): number;
  /**
   * At shutdown: responses still in flight tell their client to close the connection, and the
   * connection is closed once they are sent, so the server does not wait on keep-alive
   * connections that turn idle after close() began.
   */
  closeAfterResponses(): void;
}

/** An ended connection is destroyed this long after its last bytes reached the kernel. */
export const CLOSE_LINGER_MS = 1000;

/** Descriptors kept for everything that is not a client connection (Redis, upstreams, files). */
const DESCRIPTOR_RESERVE = 256;

/** The soft RLIMIT_NOFILE of this process (Linux), or undefined where it cannot be read. */
export function descriptorLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const value = line?.[1];
    return value === undefined || value === 'unlimited' ? undefined : Number(value);
  } catch {
    return undefined;
  }
}

export function effectiveMaxConnections(configured: number, limit: number | undefined = descriptorLimit()): number {
  if (limit === undefined) return configured;
  return Math.max(1, Math.min(configured, limit - DESCRIPTOR_RESERVE));
}

interface InFlightResponse {
  headersSent: boolean;
  shouldKeepAlive: boolean;
  writableFinished: boolean;
  once(event: 'finish', listener: () => void): unknown;
}

/**
 * Node ends a connection (after a `Connection: close` answer, or our 408/400 at a missed deadline
 * or a broken request) with a half-close and then waits for the client's FIN: a client that never
 * reads or closes kept the descriptor for as long as it liked. From end() on, nothing more is
 * read (so a dribbling client no longer resets the socket's idle timeout, which then bounds an
 * answer the client never takes), and once the last bytes are with the kernel the socket is
 * destroyed after a linger that leaves a reading client the time to read the answer and close
 * first (destroying at once would make a client's late bytes reset the connection, and the
 * answer could be lost before it is read).
 */
function lingerThenDestroy(socket: Socket, lingerMs: number): void {
  const end = socket.end.bind(socket) as (...args: unknown[]) => Socket;
  let armed = false;
  socket.end = (...args: unknown[]) => {
    if (!armed) {
      armed = true;
      stopReading(socket);
      const arm = (): void => {
        const timer = setTimeout(() => socket.destroy(), lingerMs);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
      };
      socket.once('finish', arm);
    }
    return end(...args);
  };
}

function addressOf(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export function guardConnections(server: Server, options: ConnectionGuardOptions): ConnectionGuard {
  const maxConnections = effectiveMaxConnections(options.maxConnections);
  const closeLingerMs = options.closeLingerMs ?? CLOSE_LINGER_MS;
  const perAddress = new Map<string, number>();
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    const address = addressOf(socket);
    const count = (perAddress.get(address) ?? 0) + 1;
    perAddress.set(address, count);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    if (sockets.size > maxConnections) {
      options.onRefused?.('total');
      socket.destroy();
    } else if (options.maxPerAddress > 0 && count > options.maxPerAddress) {
      options.onRefused?.('per_address');
      socket.destroy();
    } else {
      lingerThenDestroy(socket, closeLingerMs);
    }
  });
  return {
    maxConnections,
    open: () => sockets.size,
    closeAfterResponses() {
      for (const socket of sockets) {
        // Node keeps the response being written on its socket; it is not in the public API.
        const response: InFlightResponse | undefined = responseInFlight(socket);
        if (!response || response.writableFinished) continue;
        if (!response.headersSent) response.shouldKeepAlive = false;
        else response.once('finish', () => socket.end());
      }
    },
  };
}
