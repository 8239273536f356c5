// A TCP proxy on loopback in front of the real Redis, so a test can make Redis unreachable or
// stalled for its own connections only (CLIENT PAUSE would freeze every test sharing Redis).
// Modes: `pass` forwards; `stall` keeps the sockets open but forwards nothing (a hung Redis);
// `cut` drops every connection and resets new ones (a dead Redis). `setLatencyMs` delays every
// reply (a slow Redis that still answers).
import net from 'node:net';

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
   */
  takeCommands(): string[];
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  let latencyMs = 0;
  let commands: string[] = [];
  // RESP: a command is an array of bulk strings, its first element the command's name.
  const COMMAND_NAME = /\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g;
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
        if (name !== 'ping') commands.push(name);
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no proxy address');
  return {
    port: address.port,
    url: `redis://127.0.0.1:${address.port}`,
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
    takeCommands() {
      const taken = commands;
      commands = [];
      return taken;
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
