// Pipelining within the bounds of src/http/pipelining.ts, against the real application on
// loopback: a client that pipelines and reads gets every answer, in order, across the pauses
// the gate makes (at most PIPELINE_ACTIVE requests handled at once, reading paused while others
// wait); one that sends more requests in one go than may wait is closed, and the server goes on
// answering. The memory and latency bound under a flood of clients that never read is shown on
// the shipped process in test/system/connection-bounds.test.ts.
import net from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PIPELINE_ACTIVE, PIPELINE_MAX_WAITING } from '../../src/http/pipelining.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const HEALTH = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';

const countAnswers = (received: string): number => received.match(/HTTP\/1\.1 200 OK\r\n/g)?.length ?? 0;

describe('pipelined requests', () => {
  let server: TestServer;
  let port: number;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
    port = Number(new URL(server.baseUrl).port);
  });
  afterAll(async () => server.close());

  it('answers every request of a client that reads, in order, batch after batch on one connection', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    let wanted = 0;
    let reached: () => void = () => {};
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (countAnswers(received) >= wanted) reached();
    });
    // Deeper than the requests handled at once and than one wait: the gate pauses and resumes.
    const batch = PIPELINE_ACTIVE * 8;
    for (const round of [1, 2]) {
      wanted = batch * round;
      const arrived = new Promise<void>((resolve) => (reached = resolve));
      socket.write(
        Array.from(
          { length: batch },
          (_, i) => `GET /health?n=${round}-${i} HTTP/1.1\r\nHost: x\r\nX-Request-Id: r${round}-${i}\r\n\r\n`,
        ).join(''),
      );
      await arrived;
    }
    socket.destroy();
    expect(countAnswers(received)).toBe(batch * 2);
    // In order: the request ids come back in the order the requests were sent.
    const ids = [...received.matchAll(/x-request-id: (r\d-\d+)\r\n/gi)].map((match) => match[1]);
    expect(ids).toEqual([1, 2].flatMap((round) => Array.from({ length: batch }, (_, i) => `r${round}-${i}`)));
  });

  it('closes a connection that sends more requests at once than may wait, and goes on serving others', async () => {
    // Far more than PIPELINE_ACTIVE + PIPELINE_MAX_WAITING in one write: the first read alone holds more.
    const count = (PIPELINE_ACTIVE + PIPELINE_MAX_WAITING) * 20;
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    // The server resets it (its unread requests are dropped): an error, then the close.
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(HEALTH.repeat(count));
    await closed;
    expect(countAnswers(received)).toBeLessThan(PIPELINE_ACTIVE + PIPELINE_MAX_WAITING);

    const after = await fetch(`${server.baseUrl}/health`);
    expect(after.status).toBe(200);
  });
});
