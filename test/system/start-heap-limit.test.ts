// `npm start` (`node dist/start.js`): the server process starts with the V8 heap limit sized from
// CACHE_MAX_MB (src/infra/runtime/heap-limit.ts), the only time Node takes it. One process: the
// server runs in a child started with the limit, and the launcher passes signals and the exit
// status through. WORKERS=2: each worker is forked with the limit for its half of the cap. A
// limit of the operator's own is kept. The processes' command lines are read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const START = fileURLToPath(new URL('../../dist/start.js', import.meta.url));

interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  printed(pattern: RegExp, times?: number): Promise<void>;
}

let started: Started | undefined;
afterEach(async () => {
  if (started && started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
  await started?.exited;
  started = undefined;
});

function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, [START], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      HASH_SECRET: 'start-test-secret-0123456789',
      NODE_OPTIONS: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const printed = async (pattern: RegExp, times = 1): Promise<void> => {
    const count = (): number => output.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
    while (count() < times) {
      if (child.exitCode !== null) throw new Error(`exited before printing ${pattern}: ${output}`);
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), exited]);
    }
  };
  started = { child, exited, output: () => output, printed };
  return started;
}

/** The process's children, from /proc. */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The Node arguments (before the script) a process was started with. */
function nodeArgsOf(pid: number): string[] {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  return args.slice(
    1,
    args.findIndex((arg) => arg.endsWith('.js')),
  );
}

const LISTENING = /Server listening at http:\/\/127\.0\.0\.1:\d+/;

describe('node dist/start.js', () => {
  // Bounded by start-up: 30–60 s on two shared cores.
  it(
    'runs one server in a child started with the heap limit (and, at a small cap, the semi-space size) for CACHE_MAX_MB, and exits as it does on SIGTERM',
    { timeout: 120_000 },
    async () => {
      const launcher = start({ CACHE_MAX_MB: '32' });
      await launcher.printed(LISTENING);
      const [server, ...others] = childrenOf(launcher.child.pid ?? 0);
      expect(others).toEqual([]);
      expect(nodeArgsOf(server ?? 0)).toEqual(['--max-old-space-size=176', '--max-semi-space-size=8']);
      expect(readFileSync(`/proc/${server}/cmdline`, 'utf8')).toContain('dist/server.js');
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(launcher.output())?.[1]);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      // A signal to the launcher alone (an orchestrator's) reaches the server, which shuts down gracefully.
      launcher.child.kill('SIGTERM');
      expect(await launcher.exited).toEqual({ code: 0, signal: null });
      expect(launcher.output()).toContain('SIGTERM received: finishing in-flight requests');
    },
  );

  it(
    'starts each of WORKERS=2 with the limit and the semi-space size for its half of the cap',
    { timeout: 120_000 },
    async () => {
      const primary = start({ CACHE_MAX_MB: '64', WORKERS: '2' });
      await primary.printed(/worker \d+ listening on port/, 2);
      const workers = childrenOf(primary.child.pid ?? 0);
      expect(workers).toHaveLength(2);
      for (const worker of workers)
        expect(nodeArgsOf(worker)).toEqual(['--max-old-space-size=176', '--max-semi-space-size=8']);
      // The primary holds no cache and runs without one.
      expect(nodeArgsOf(primary.child.pid ?? 0)).toEqual([]);
    },
  );

  it(
    'keeps a heap limit the operator gave, and then runs the server in its own process',
    { timeout: 120_000 },
    async () => {
      const launcher = start({ CACHE_MAX_MB: '32', NODE_OPTIONS: '--max-old-space-size=300' });
      await launcher.printed(LISTENING);
      expect(childrenOf(launcher.child.pid ?? 0)).toEqual([]);
    },
  );

  it('refuses a bad configuration with exit status 2 and starts nothing', async () => {
    const launcher = start({ CACHE_MAX_MB: 'lots' });
    expect(await launcher.exited).toEqual({ code: 2, signal: null });
    expect(launcher.output()).toContain('CACHE_MAX_MB');
  });
});
