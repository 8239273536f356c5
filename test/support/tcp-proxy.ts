// A TCP proxy on loopback in front of the real Redis, so a test can make Redis unreachable or
// stalled for its own connections only (CLIENT PAUSE would freeze every test sharing Redis).
// Modes: `pass` forwards; `stall` keeps the sockets open but forwards nothing (a hung Redis);
// `cut` drops every connection and resets new ones (a dead Redis).
import net from 'node:net';

export type ProxyMode = 'pass' | 'stall' | 'cut';

export interface TcpProxy {
  port: number;
  url: string;
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();

  const server = net.createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on('data', (chunk: Buffer) => {
        // A stalled proxy swallows the bytes: the request is lost, like on a hung server.
        if (mode === 'pass') to.write(chunk);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
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
    close: async () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
