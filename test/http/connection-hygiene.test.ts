// Connection hygiene against the real server over loopback: a client dribbling its headers is
// cut at the headers deadline (plus at most Node's check interval), one client address holding
// thousands of sockets keeps at most MAX_CONNECTIONS_PER_ADDRESS of them while other addresses
// are answered, and past MAX_CONNECTIONS new connections are closed at once. Loopback aliases
// (127.0.0.x) stand for distinct clients; socket counts stay far below `ulimit -n`.
import net from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { parseRawAnswer } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const portOf = (server: TestServer): number => Number(new URL(server.baseUrl).port);

/** What a socket's outcome is when the server closed it without answering (no HTTP answer starts so). */
const CLOSED = '(closed)';

interface HeldSocket {
  socket: net.Socket;
  /** Resolves with the first bytes the server sent, or CLOSED if it closed without a word. */
  outcome: Promise<string>;
}

/** Connects from `localAddress` and sends one keep-alive request. */
function openAndAsk(port: number, localAddress: string): Promise<HeldSocket> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    const outcome = new Promise<string>((settle) => {
      socket.once('data', (chunk: Buffer) => settle(chunk.toString('latin1')));
      socket.once('close', () => settle(CLOSED));
      socket.on('error', () => settle(CLOSED));
    });
    socket.once('connect', () => {
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      resolve({ socket, outcome });
    });
    socket.once('error', () => resolve({ socket, outcome }));
  });
}

/** Opens `count` sockets in bounded batches (the listen backlog is finite). */
async function openMany(port: number, localAddress: string, count: number): Promise<HeldSocket[]> {
  const held: HeldSocket[] = [];
  for (let start = 0; start < count; start += 200) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(200, count - start) }, () => openAndAsk(port, localAddress)),
    );
    held.push(...batch);
    await Promise.all(batch.map((h) => h.outcome));
  }
  return held;
}

describe('connection hygiene: deadlines', () => {
  const HEADERS_TIMEOUT_MS = 2000;
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '0', HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), REQUEST_TIMEOUT_MS: '3000' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(async () => server.close());

  it('cuts a client dribbling its headers within a second of the headers deadline, with 408 in the problem shape', async () => {
    const socket = net.connect(portOf(server), '127.0.0.1');
    await once(socket, 'connect');
    const startedAt = Date.now();
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    // One header line every 200 ms: the connection is never idle, the headers never end.
    const dribble = setInterval(() => socket.write(`X-Slow-${Date.now()}: y\r\n`), 200);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => {});
    await once(socket, 'close');
    clearInterval(dribble);
    const livedMs = Date.now() - startedAt;
    // The deadline is the behaviour under test: not before it, and at most about a second after.
    expect(livedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(livedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 1000 + 500);
    const answer = parseRawAnswer(received);
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 408, title: 'Request timeout', success: false });
  }, 20_000);

  it('destroys the socket of a refused request about a second after its answer, though the client keeps writing and never reads', async () => {
    const before = server.app.connections.open();
    const socket = net.connect(portOf(server), '127.0.0.1');
    socket.pause();
    socket.on('error', () => {});
    await once(socket, 'connect');
    const closedByServer = new Promise<number>((resolve) => {
      const poll = setInterval(() => {
        if (server.app.connections.open() > before) return;
        clearInterval(poll);
        resolve(Date.now());
      }, 20);
    });
    // A broken request line: answered 400 and ended at once; the client goes on sending bytes.
    const answeredAt = Date.now();
    socket.write('GARBAGE\x01 / HTTP/1.1\r\n\r\n');
    const dribble = setInterval(() => socket.writable && socket.write('x'), 100);
    try {
      const goneAt = await closedByServer;
      // The linger is the behaviour under test: the socket is kept for it, then destroyed.
      expect(goneAt - answeredAt).toBeGreaterThanOrEqual(900);
      expect(goneAt - answeredAt).toBeLessThan(4000);
    } finally {
      clearInterval(dribble);
      socket.destroy();
    }
  }, 20_000);
});

describe('connection hygiene: caps', () => {
  it('keeps at most MAX_CONNECTIONS_PER_ADDRESS sockets of one address out of 2,000, closing the rest at once, while another address is answered', async () => {
    const PER_ADDRESS = 256;
    const server = await startTestServer({
      env: { RATE_LIMIT_MAX: '0', MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS) },
      overrides: { sources: healthyFakeSources() },
    });
    let held: HeldSocket[] = [];
    try {
      held = await openMany(portOf(server), '127.0.0.2', 2000);
      const outcomes = await Promise.all(held.map((h) => h.outcome));
      const answered = outcomes.filter((outcome) => outcome.startsWith('HTTP/1.1 200'));
      const closed = outcomes.filter((outcome) => outcome === CLOSED);
      expect(answered).toHaveLength(PER_ADDRESS);
      expect(closed).toHaveLength(2000 - PER_ADDRESS);
      expect(server.app.connections.open()).toBeLessThanOrEqual(PER_ADDRESS);
      // While 127.0.0.2 holds its 256 sockets, 127.0.0.1 is served as usual.
      const response = await fetch(`${server.baseUrl}/api/phone/0612345678/score`);
      expect(response.status).toBe(200);
    } finally {
      for (const h of held) h.socket.destroy();
      await server.close();
    }
  }, 60_000);

  it('closes new connections at once past MAX_CONNECTIONS, and accepts again once held ones are gone', async () => {
    const MAX = 40;
    const server = await startTestServer({
      env: { RATE_LIMIT_MAX: '0', MAX_CONNECTIONS: String(MAX), MAX_CONNECTIONS_PER_ADDRESS: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    const serverSideClosed: Array<Promise<unknown>> = [];
    server.app.server.on('connection', (socket: net.Socket) => serverSideClosed.push(once(socket, 'close')));
    let held: HeldSocket[] = [];
    try {
      held = await openMany(portOf(server), '127.0.0.3', 100);
      const outcomes = await Promise.all(held.map((h) => h.outcome));
      expect(outcomes.filter((outcome) => outcome.startsWith('HTTP/1.1 200'))).toHaveLength(MAX);
      expect(outcomes.filter((outcome) => outcome === CLOSED)).toHaveLength(100 - MAX);
      for (const h of held) h.socket.destroy();
      await Promise.all(serverSideClosed);
      expect(server.app.connections.open()).toBe(0);
      expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
    } finally {
      for (const h of held) h.socket.destroy();
      await server.close();
    }
  }, 60_000);
});
