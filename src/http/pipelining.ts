// What one connection may pipeline. Node's http server parses every request a read delivers (a
// read of 64 KiB holds some 1,800 small requests), hands each to the application at once and
// queues the answers in order. It stops reading only while its queue of answers not yet written
// to the socket is large, and reads again as soon as that queue moved to the socket, however much
// the socket still holds. A client that wrote requests and never read the answers was served
// until the kernel's buffers were full, and then kept thousands of answered requests in memory
// per connection: 60 such sockets took 1.3 GB, and /health waited 25–40 s behind them.
//
// A gate in front of the application's request listener, per connection (Node's private
// fields it needs are all in node-http-internals.ts, with the test that guards them):
// - at most PIPELINE_ACTIVE requests are with the application at once; the next ones wait, in
//   order, and are handed over as answers reach the kernel (a client that does not read stops
//   being served there);
// - the connection is not read while a request waits, or while its socket holds more than
//   PIPELINE_BUFFER_BYTES the kernel did not take;
// - the read in progress is still parsed whole (Node offers no way to stop within one): when
//   more than PIPELINE_MAX_WAITING of its requests would wait, the connection is closed. A server
//   may close a connection at any time and an HTTP client retries what was not answered; no
//   client pipelines hundreds of requests without reading the answers.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  isReadingStopped,
  resumeReading as readAgain,
  stopMakingRequests,
  stopReading,
} from './node-http-internals.js';

/** Requests of one connection handled at once; the next ones wait for an answer to be sent. */
export const PIPELINE_ACTIVE = 16;
/** Requests of one connection that may wait; one more closes the connection. */
export const PIPELINE_MAX_WAITING = 256;
/** Answer bytes a socket may hold, not taken by the kernel, before the connection stops being read. */
export const PIPELINE_BUFFER_BYTES = 256 * 1024;

export interface PipelineBounds {
  active?: number;
  maxWaiting?: number;
  bufferBytes?: number;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

interface Connection {
  active: number;
  waitingRequests: IncomingMessage[];
  waitingResponses: ServerResponse[];
}

export function boundPipelining(server: Server, bounds: PipelineBounds = {}): void {
  const maxActive = bounds.active ?? PIPELINE_ACTIVE;
  const maxWaiting = bounds.maxWaiting ?? PIPELINE_MAX_WAITING;
  const bufferBytes = bounds.bufferBytes ?? PIPELINE_BUFFER_BYTES;
  // The application's listener (Fastify's) is called by the gate instead of by the server.
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  const connections = new WeakMap<Socket, Connection>();

  const mustWait = (socket: Socket, connection: Connection): boolean =>
    connection.waitingRequests.length > 0 || socket.writableLength > bufferBytes || socket.writableEnded;

  const handOver = (request: IncomingMessage, response: ServerResponse): void => {
    for (const listener of listeners) listener.call(server, request, response);
  };

  const pauseReading = (socket: Socket): void => {
    if (!isReadingStopped(socket)) stopReading(socket);
  };

  const resumeReading = (socket: Socket, connection: Connection): void => {
    if (!isReadingStopped(socket) || socket.destroyed || socket.writableNeedDrain || mustWait(socket, connection))
      return;
    readAgain(socket);
  };

  // One listener for every answer: the response's request names the connection.
  function onAnswered(this: ServerResponse): void {
    const socket = this.req.socket;
    const connection = connections.get(socket);
    if (connection === undefined) return;
    connection.active -= 1;
    const request = connection.waitingRequests.shift();
    const response = connection.waitingResponses.shift();
    if (request !== undefined && response !== undefined && !socket.destroyed) {
      connection.active += 1;
      response.on('finish', onAnswered);
      handOver(request, response);
    }
    resumeReading(socket, connection);
  }

  server.on('connection', (socket: Socket) => {
    const connection: Connection = { active: 0, waitingRequests: [], waitingResponses: [] };
    connections.set(socket, connection);
    // Node resumes reading when its own queue of answers is short (listener added before this
    // one, on the same event): paused again while this connection must still wait.
    socket.on('resume', () => {
      if (mustWait(socket, connection)) stopReading(socket);
    });
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const connection = connections.get(socket);
    // The rest of a read whose connection was closed. Destroyed here without an error: Node
    // would otherwise make one with its stack for each at the close (half the cost of a read).
    if (socket.destroyed) {
      request.destroy();
      return;
    }
    if (connection === undefined || (connection.active < maxActive && connection.waitingRequests.length === 0)) {
      if (connection) {
        connection.active += 1;
        response.on('finish', onAnswered);
      }
      handOver(request, response);
      return;
    }
    if (connection.waitingRequests.length >= maxWaiting) {
      // Node parses the rest of the read whatever happens to the socket. Left to it, each of
      // those requests would get its response and be held until the close (60 such reads at
      // once were 150 MB); the parser is told to make nothing more for this connection.
      stopMakingRequests(socket);
      for (const waiting of connection.waitingRequests) waiting.destroy();
      connection.waitingRequests.length = 0;
      connection.waitingResponses.length = 0;
      request.destroy();
      socket.destroy();
      return;
    }
    connection.waitingRequests.push(request);
    connection.waitingResponses.push(response);
    pauseReading(socket);
  });
}
