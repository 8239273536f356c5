// Connection accounting on the HTTP server, before any byte is parsed: a global cap kept below
// the process's file-descriptor limit and a per-client-address cap, past which a new connection
// is destroyed at once, so one address holding thousands of sockets cannot starve the others
// (or the process of descriptors for Redis and upstreams). The address is the socket's: it is
// counted before any header (and so any X-Forwarded-For) exists.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionGuardOptions {
  /** MAX_CONNECTIONS: lowered to the descriptor limit minus a reserve when that is smaller. */
  maxConnections: number;
  /** MAX_CONNECTIONS_PER_ADDRESS; 0 = no per-address cap. */
  maxPerAddress: number;
  onRefused?: (reason: 'total' | 'per_address') => void;
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

function addressOf(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export function guardConnections(server: Server, options: ConnectionGuardOptions): ConnectionGuard {
  const maxConnections = effectiveMaxConnections(options.maxConnections);
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
    }
  });
  return {
    maxConnections,
    open: () => sockets.size,
    closeAfterResponses() {
      for (const socket of sockets) {
        // Node keeps the response being written on its socket; it is not in the public API.
        const response = (socket as Socket & { _httpMessage?: InFlightResponse | null })._httpMessage;
        if (!response || response.writableFinished) continue;
        if (!response.headersSent) response.shouldKeepAlive = false;
        else response.once('finish', () => socket.end());
      }
    },
  };
}
