// A Redis of a test's own: a `redis-server` child on a free loopback port, in a temporary
// directory, that the test may kill and start again (the shared Redis on 6379 must never be
// restarted). `persistent` runs it as compose.yaml does (append-only file); otherwise it keeps
// nothing (`--save "" --appendonly no`), so a restart brings it back empty. `replicaOf` starts it as
// a replica of another one (by port).
import { freeTcpPort } from '../../harness/redis-sentinel.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OwnRedis {
  readonly url: string;
  readonly port: number;
  /** Kills it (SIGKILL: no chance to save anything but what it already wrote) and starts it again on the same port. */
  restart(): Promise<void>;
  /** Kills it, leaving it stopped until `start()`. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Sends a signal to the running process (SIGSTOP freezes it: connected, but answering nothing; SIGCONT resumes it). */
  signal(signal: NodeJS.Signals): void;
  close(): Promise<void>;
}

export async function startOwnRedis(options: { persistent: boolean; replicaOf?: number }): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-redis-'));
  const port = await freeTcpPort();
  const persistence = options.persistent
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']
    : ['--appendonly', 'no', '--save', ''];
  const replication = options.replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(options.replicaOf)];
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--protected-mode',
        'no',
        ...persistence,
        ...replication,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        if (output.includes('Ready to accept connections')) {
          started.stdout?.off('data', onData);
          started.stdout?.resume();
          resolve();
        }
      };
      started.stdout?.on('data', onData);
      started.stderr?.resume();
      started.once('exit', (code) => reject(new Error(`redis-server exited (${String(code)}): ${output.slice(-500)}`)));
    });
  }

  async function kill(): Promise<void> {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await kill();
      await start();
    },
    kill,
    start,
    signal: (signal) => void child?.kill(signal),
    close: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
