// What a hostile connection may hold in the shipped server (`node dist/server.js`), measured on
// the process itself (its resident memory and its open descriptors, from /proc):
// - pipelining: 60 sockets from one address (under MAX_CONNECTIONS_PER_ADDRESS), each writing
//   20,000 pipelined `GET /health` and never reading. Before the bound the process grew by
//   1.2 GB and /health waited 25–40 s; now RSS stays within 150 MB of idle, another client is
//   answered throughout, and the descriptors are returned;
// - a deadline that closes: 40 clients that send a request line and then one header byte a
//   second and never read. Before, each kept its descriptor after the 408 for as long as it
//   dribbled; now every one is gone within the headers deadline + 0.5 s sweep + 1 s linger.
// Loopback only; the clients use their own loopback addresses (127.0.0.3, 127.0.0.4), the
// witness client 127.0.0.1. Every wait is bounded.
import net from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../harness/servers.js';

const MiB = 1024 * 1024;

function residentBytes(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

function openDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One `GET /health` on a new connection from 127.0.0.1: its status and how long the answer took. */
function witness(port: number): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.1' });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the witness got no answer within 10 s'));
    }, 10_000);
    socket.on('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      if (status === undefined || !received.includes('\r\n\r\n')) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(status), ms: performance.now() - startedAt });
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

async function idleOf(server: ServerProcess): Promise<{ rss: number; fds: number }> {
  const pid = server.child.pid;
  if (pid === undefined) throw new Error('no pid');
  // One answer first, so that what a first request loads lazily is part of the idle figure.
  expect((await witness(server.port)).status).toBe(200);
  await pause(500);
  return { rss: residentBytes(pid), fds: openDescriptors(pid) };
}

describe('a pipelined flood from clients that never read', () => {
  const SOCKETS = 60;
  const REQUESTS_PER_SOCKET = 20_000;
  /** How long the flood is watched; the attack's first reads are all parsed well within it. */
  const WATCH_MS = 6000;
  let server: ServerProcess;
  beforeAll(async () => {
    server = await spawnServer({ RATE_LIMIT_MAX: '0' });
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('keeps the process within 150 MB of its idle RSS, answers another client throughout, and returns the descriptors', async () => {
    const pid = server.child.pid;
    if (pid === undefined) throw new Error('no pid');
    const idle = await idleOf(server);
    const pipelined = Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(REQUESTS_PER_SOCKET));
    const flood: net.Socket[] = [];
    const connected: Array<Promise<void>> = [];
    for (let i = 0; i < SOCKETS; i += 1) {
      const socket = net.connect({ port: server.port, host: '127.0.0.1', localAddress: '127.0.0.3' });
      // Never read: nothing the server sends is taken off this side's kernel buffer.
      socket.pause();
      socket.on('error', () => {});
      connected.push(
        new Promise((resolve) =>
          socket.once('connect', () => {
            socket.write(pipelined);
            resolve();
          }),
        ),
      );
      flood.push(socket);
    }
    await Promise.all(connected);
    let peak = residentBytes(pid);
    const witnessed: Array<{ status: number; ms: number }> = [];
    const until = Date.now() + WATCH_MS;
    while (Date.now() < until) {
      witnessed.push(await witness(server.port));
      peak = Math.max(peak, residentBytes(pid));
      await pause(200);
      peak = Math.max(peak, residentBytes(pid));
    }
    for (const socket of flood) socket.destroy();

    expect(witnessed.length).toBeGreaterThan(5);
    expect(witnessed.every((answer) => answer.status === 200)).toBe(true);
    // The target is one second; the slack is for a loaded machine (it was 25–40 s before).
    expect(
      Math.max(...witnessed.map((answer) => answer.ms)),
      JSON.stringify(witnessed.map((answer) => Math.round(answer.ms))),
    ).toBeLessThan(2000);
    expect(
      (peak - idle.rss) / MiB,
      `idle ${Math.round(idle.rss / MiB)} MB, peak ${Math.round(peak / MiB)} MB`,
    ).toBeLessThan(150);

    // Every socket of the flood is closed on the server's side too: no descriptor is kept.
    const deadline = Date.now() + 5000;
    while (openDescriptors(pid) > idle.fds && Date.now() < deadline) await pause(100);
    expect(openDescriptors(pid)).toBeLessThanOrEqual(idle.fds);
    expect((residentBytes(pid) - idle.rss) / MiB).toBeLessThan(150);
    expect((await witness(server.port)).status).toBe(200);
  });
});

describe('clients that dribble their headers and never read', () => {
  const CLIENTS = 40;
  // Shorter than the default 10 s to keep the test short; the bound is the same sum with the default.
  const HEADERS_TIMEOUT_MS = 5000;
  let server: ServerProcess;
  beforeAll(async () => {
    server = await spawnServer({
      RATE_LIMIT_MAX: '0',
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: '6000',
    });
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('loses every one of their descriptors within 12 s, answering another client meanwhile', async () => {
    const pid = server.child.pid;
    if (pid === undefined) throw new Error('no pid');
    const idle = await idleOf(server);
    const startedAt = Date.now();
    const clients: net.Socket[] = [];
    const dribbles: NodeJS.Timeout[] = [];
    const connected: Array<Promise<void>> = [];
    for (let i = 0; i < CLIENTS; i += 1) {
      const socket = net.connect({ port: server.port, host: '127.0.0.1', localAddress: '127.0.0.4' });
      socket.pause();
      socket.on('error', () => {});
      connected.push(
        new Promise((resolve) =>
          socket.once('connect', () => {
            socket.write('GET /health HTTP/1.1\r\n');
            dribbles.push(setInterval(() => socket.writable && socket.write('X'), 1000));
            resolve();
          }),
        ),
      );
      clients.push(socket);
    }
    try {
      await Promise.all(connected);
      // Every dribbler is held by the server before its deadline (accepted on its next turn)…
      const acceptedBy = Date.now() + 3000;
      while (openDescriptors(pid) < idle.fds + CLIENTS && Date.now() < acceptedBy) await pause(50);
      expect(openDescriptors(pid)).toBeGreaterThanOrEqual(idle.fds + CLIENTS);
      // …while another client is served.
      const answer = await witness(server.port);
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(2000);

      const deadline = startedAt + 12_000;
      while (openDescriptors(pid) > idle.fds && Date.now() < deadline) await pause(100);
      const leftAfterMs = Date.now() - startedAt;
      expect(
        openDescriptors(pid),
        `descriptors still open ${leftAfterMs} ms after the clients connected`,
      ).toBeLessThanOrEqual(idle.fds);
      // Not before the deadline: it is the deadline (plus the linger) that closed them.
      expect(leftAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 500);
      expect((await witness(server.port)).status).toBe(200);
    } finally {
      for (const timer of dribbles) clearInterval(timer);
      for (const socket of clients) socket.destroy();
    }
  });
});
