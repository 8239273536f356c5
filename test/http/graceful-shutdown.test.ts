// The real server process: SIGTERM while a request is in flight lets that request finish,
// then the process exits on its own within the grace period.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const UPSTREAM_DELAY_MS = 700;

describe('graceful shutdown', () => {
  let upstream: http.Server;
  let upstreamUrl: string;
  beforeAll(async () => {
    // Every upstream answers "unknown number" slowly, so a lookup is in flight for a while.
    upstream = http.createServer((request, response) => {
      request.resume();
      setTimeout(() => response.writeHead(404, { 'content-type': 'text/html' }).end('<html>404</html>'), UPSTREAM_DELAY_MS);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('completes a request in flight when SIGTERM arrives, then exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        SHUTDOWN_GRACE_MS: '5000',
        TELLOWS_API_URL: upstreamUrl,
        TELLOWS_WEB_URL: upstreamUrl,
        NUMEROINCONNU_URL: upstreamUrl,
        TELGUARDER_URL: upstreamUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let output = '';
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 45_000);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    });

    const inFlight = fetch(`${baseUrl}/api/phone/0612345678/score`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalledAt = Date.now();
    child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, data: { number: '0612345678', score: null, risk: 'unknown' } });
    expect(await exited, output).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5000);
    // After shutdown nothing listens any more.
    await expect(fetch(`${baseUrl}/health`)).rejects.toThrow();
  }, 90_000);
});
