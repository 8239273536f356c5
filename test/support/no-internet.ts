// Tests must never reach the internet: every outbound TCP connection to anything but
// loopback fails here, so an adapter pointed at a real upstream by mistake fails loudly.
import net from 'node:net';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/i;
/** A name under `.invalid` never resolves (RFC 6761): it ends at the resolver, never on the internet (the `dns` test). */
const NEVER_RESOLVES = /\.invalid\.?$/i;

type ConnectArgs = Parameters<net.Socket['connect']>;
// eslint-disable-next-line @typescript-eslint/unbound-method -- re-applied with the socket as `this`
const originalConnect = net.Socket.prototype.connect;

function targetHost(args: unknown[]): string | undefined {
  const first = args[0];
  if (Array.isArray(first)) return targetHost(first);
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: unknown; path?: unknown };
    if (typeof options.path === 'string') return 'localhost'; // unix socket
    return typeof options.host === 'string' ? options.host : 'localhost';
  }
  if (typeof first === 'number' || typeof first === 'string') {
    if (typeof first === 'string' && !/^\d+$/.test(first)) return 'localhost'; // unix socket path
    return typeof args[1] === 'string' ? args[1] : 'localhost';
  }
  return undefined;
}

net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: ConnectArgs) {
  const host = targetHost(args);
  if (host !== undefined && !LOOPBACK.test(host.replace(/^\[|\]$/g, '')) && !NEVER_RESOLVES.test(host)) {
    throw new Error(`test network guard: outbound connection to ${host} refused (tests stay on loopback)`);
  }
  return originalConnect.apply(this, args);
} as net.Socket['connect'];
