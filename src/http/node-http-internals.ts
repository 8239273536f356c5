// Every private field of Node's http server this service reads or writes, and nothing else. No
// public API does these jobs (checked against Node 20's http documentation):
// - stop reading a connection, and read it again, in step with Node's own flow control, which
//   keeps its pause flag in `socket._paused` and pauses or resumes the connection's parser with
//   it (lib/_http_server.js: onParserExecuteCommon, socketOnDrain, onSocketResume);
// - tell the parser to make nothing more of a read already in progress (`parser.onIncoming`,
//   which makes each parsed request's response and emits 'request');
// - find the response being written on a socket (`socket._httpMessage`).
// node-http-internals.test.ts checks on a real server that each field is where and what this
// module expects, and fails naming the Node version when one moves: passed on Node 20.20.2,
// 24.21.0 (the floor, `engines` >=24) and 26. Used by the pipelining gate (pipelining.ts), the connection guard
// (connection-guard.ts) and the raw-socket error answers (app.ts).
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A server socket as Node's http server keeps it. */
type ServerSocket = Socket & {
  _paused?: boolean;
  parser?: { resume(): void; pause(): void; onIncoming: unknown } | null;
  _httpMessage?: ServerResponse | null;
};

/** What the rest of a closed connection's read is handed to instead: nothing is made for it. */
const ignoreRequest = (): number => 0;

/** True while the connection is not read, by Node's flow control or by stopReading(). */
export function isReadingStopped(socket: Socket): boolean {
  return (socket as ServerSocket)._paused === true;
}

/** Stops reading the connection: Node pauses its parser after the read in progress when it sees the flag, and keeps the socket paused until it is cleared. */
export function stopReading(socket: Socket): void {
  (socket as ServerSocket)._paused = true;
  socket.pause();
}

/** Reads the connection again (what Node does itself when its queue of answers drains). */
export function resumeReading(socket: Socket): void {
  const serverSocket = socket as ServerSocket;
  serverSocket._paused = false;
  serverSocket.parser?.resume();
  socket.resume();
}

/** The parser makes no request of what is left of the read in progress (the connection is being closed). */
export function stopMakingRequests(socket: Socket): void {
  const parser = (socket as ServerSocket).parser;
  if (parser) parser.onIncoming = ignoreRequest;
}

/** The response Node is writing on the socket, if any. */
export function responseInFlight(socket: Socket): ServerResponse | undefined {
  return (socket as ServerSocket)._httpMessage ?? undefined;
}
