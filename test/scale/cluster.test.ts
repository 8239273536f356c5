// WORKERS=2: the shipped server (dist/server.js) becomes a cluster primary with two workers on
// one port; both answer, a killed worker is replaced, and SIGTERM stops everything gracefully.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { restartDelayMs } from '../../src/cluster.js';
import { waitFor } from '../support/redis.js';
import { builtServerCommand } from '../../harness/servers.js';

describe('restart delays', () => {
  it('doubles the restart delay with each quick crash in a row, up to the cap', () => {
    expect([1, 2, 3, 4, 10].map((crashes) => restartDelayMs(crashes, 500, 30_000))).toEqual([
      500, 1000, 2000, 4000, 30_000,
    ]);
  });
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** One request on a fresh connection, so the primary's round-robin picks a worker each time. */
function getStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.setTimeout(5000, () => request.destroy(new Error('timeout')));
  });
}

interface LogLine {
  pid?: number;
  msg?: string;
}

describe('WORKERS=2', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it(
    'serves from two workers on one port, replaces a killed worker, and stops on SIGTERM',
    { timeout: 90_000 },
    async () => {
      const port = await freePort();
      const server = builtServerCommand();
      const process_ = spawn(server.command, server.args, {
        cwd: server.cwd,
        env: {
          ...process.env,
          WORKERS: '2',
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          SHUTDOWN_GRACE_MS: '3000',
          RATE_LIMIT_MAX: '0',
          REDIS_URL: '',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      child = process_;
      const lines: LogLine[] = [];
      let stderr = '';
      let buffered = '';
      process_.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        for (const part of parts) {
          try {
            lines.push(JSON.parse(part) as LogLine);
          } catch {
            // not a log line
          }
        }
      });
      process_.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => process_.once('exit', (code) => resolve(code)));
      const listeningPids = () =>
        new Set(
          lines
            .filter((line) => line.msg?.startsWith('Server listening') && line.pid !== undefined)
            .map((line) => line.pid),
        );

      await waitFor(() => listeningPids().size >= 2, 60_000).catch(() => {
        throw new Error(`workers did not start: ${stderr}`);
      });
      const workers = [...listeningPids()];
      expect(workers).not.toContain(process_.pid);

      const servedBy = async (count: number): Promise<Set<number | undefined>> => {
        const before = lines.length;
        for (let i = 0; i < count; i += 1) expect(await getStatus(`http://127.0.0.1:${port}/health`)).toBe(200);
        // Each worker writes its access lines in batches (at most a second late): wait for all of them.
        const requestLines = () => lines.slice(before).filter((line) => line.msg === 'request');
        await waitFor(() => requestLines().length >= count, 10_000);
        return new Set(requestLines().map((line) => line.pid));
      };
      expect(await servedBy(12)).toEqual(new Set(workers));

      const killed = workers[0];
      if (killed === undefined) throw new Error('no worker');
      process.kill(killed, 'SIGKILL');
      await waitFor(() => listeningPids().size >= 3, 60_000);
      const replacement = [...listeningPids()].find((pid) => !workers.includes(pid));
      expect(stderr).toMatch(new RegExp(`worker ${killed} exited \\(SIGKILL\\); restarting in \\d+ ms`));
      const servers = await servedBy(12);
      expect(servers.has(replacement)).toBe(true);
      expect(servers.has(killed)).toBe(false);

      process_.kill('SIGTERM');
      expect(await exited).toBe(0);
      for (const pid of [workers[1], replacement]) {
        expect(() => process.kill(pid ?? 0, 0)).toThrow();
      }
    },
  );
});
