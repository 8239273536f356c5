// The guard of node-http-internals.ts: Node's private fields of its http server, on a real server
// on loopback. Each failure names the Node version, so an upgrade that moves a field fails here,
// loudly, and not as a pipelining gate that silently stops bounding anything.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  isReadingStopped,
  resumeReading,
  responseInFlight,
  stopMakingRequests,
  stopReading,
} from './node-http-internals.js';

const NODE = `Node ${process.version}`;
const request = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

/** One event-loop turn with a poll in between: what a loopback write takes to be read, if the socket is read at all. */
const nextTurns = async (): Promise<void> => {
  for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

let server: Server | undefined;
let client: Socket | undefined;
afterEach(async () => {
  client?.destroy();
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
  client = undefined;
});

async function listen(
  onRequest: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ connected: Promise<Socket> }> {
  server = createServer(onRequest);
  const connected = new Promise<Socket>((resolve) => server?.once('connection', resolve));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  return { connected };
}

describe(`Node's http server internals (${NODE})`, () => {
  it('keeps a boolean pause flag and a parser with pause, resume and onIncoming on each server socket', async () => {
    const { connected } = await listen((_request, response) => response.end());
    const socket = (await connected) as Socket & Record<string, unknown>;
    expect(typeof socket._paused, `${NODE}: socket._paused (Node's flow-control flag) is gone or changed`).toBe(
      'boolean',
    );
    expect(socket._paused).toBe(false);
    const parser = socket.parser as Record<string, unknown> | null | undefined;
    expect(typeof parser, `${NODE}: socket.parser is gone`).toBe('object');
    expect(typeof parser?.pause, `${NODE}: socket.parser.pause() is gone`).toBe('function');
    expect(typeof parser?.resume, `${NODE}: socket.parser.resume() is gone`).toBe('function');
    expect(typeof parser?.onIncoming, `${NODE}: socket.parser.onIncoming is gone`).toBe('function');
    expect(isReadingStopped(socket)).toBe(false);
  });

  it('names the response being written on the socket', async () => {
    const seen: Array<ServerResponse | undefined> = [];
    let answered: ServerResponse | undefined;
    await listen((incoming, response) => {
      answered = response;
      seen.push(responseInFlight(incoming.socket));
      response.end('ok');
    });
    client?.write(request('/'));
    await once(client as Socket, 'data');
    expect(seen, `${NODE}: socket._httpMessage no longer holds the response in flight`).toEqual([answered]);
  });

  it('makes no request of the rest of a read once told so, where it otherwise makes every one', async () => {
    const paths: string[] = [];
    await listen((incoming, response) => {
      paths.push(incoming.url ?? '');
      if (incoming.url === '/stop') stopMakingRequests(incoming.socket);
      response.end();
    });
    // One write, so one read: the parser runs over all of it at once.
    client?.write(request('/first') + request('/stop') + request('/after'));
    await once(client as Socket, 'data');
    await nextTurns();
    expect(paths, `${NODE}: replacing socket.parser.onIncoming no longer stops the requests of a read`).toEqual([
      '/first',
      '/stop',
    ]);
  });

  it("reads no request while reading is stopped, Node's own resume included, and reads again once resumed", async () => {
    const paths: string[] = [];
    let socket: Socket | undefined;
    await listen((incoming, response) => {
      paths.push(incoming.url ?? '');
      socket = incoming.socket;
      if (incoming.url === '/one') stopReading(incoming.socket);
      response.end();
    });
    client?.write(request('/one'));
    await once(client as Socket, 'data');
    expect(isReadingStopped(socket as Socket)).toBe(true);
    // Node resumes a socket on its own when its queue of answers drains; its 'resume' listener
    // pauses it again while the flag is set.
    socket?.resume();
    await once(socket as Socket, 'resume');
    await new Promise<void>((resolve) => client?.write(request('/two'), () => resolve()));
    await nextTurns();
    expect(paths, `${NODE}: setting socket._paused no longer stops reading`).toEqual(['/one']);
    const two = new Promise<void>((resolve) => server?.once('request', () => resolve()));
    resumeReading(socket as Socket);
    await two;
    expect(paths).toEqual(['/one', '/two']);
    expect(isReadingStopped(socket as Socket)).toBe(false);
  });

  it('reads the same second request at once when reading was not stopped (the wait above is long enough)', async () => {
    const paths: string[] = [];
    await listen((incoming, response) => {
      paths.push(incoming.url ?? '');
      response.end();
    });
    client?.write(request('/one'));
    await once(client as Socket, 'data');
    await new Promise<void>((resolve) => client?.write(request('/two'), () => resolve()));
    await nextTurns();
    expect(paths).toEqual(['/one', '/two']);
  });
});
