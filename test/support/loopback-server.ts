// A real node:http server on 127.0.0.1 standing in for an upstream in tests. It records what
// it received (method, URL, headers, body) so tests can assert on the requests an adapter made.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
