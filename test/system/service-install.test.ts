// The service as an operator installs it: the built launcher (dist/start.js) started from `/` and
// from `/tmp` finds its own files and answers a lookup; `npm start` reads the package's `.env`
// (the environment already set winning over it), and SIGTERM to the `npm start` process drains
// the request in flight, closes the port within SHUTDOWN_GRACE_MS + 2 s and leaves no process.
// `npm start` runs in a copy of the package in a temporary folder (package.json, dist/, and
// links to data/ and node_modules/), so the test's `.env` is never the checkout's.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { watchOutput, type WatchedOutput } from '../../harness/processes.js';
import { startSlowUnknownUpstream, type SlowUpstream } from '../../harness/servers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const START = join(ROOT, 'dist', 'start.js');
const FEED_SECRET = 'dotenv-feed-secret-4b7e1';
const GRACE_MS = 3000;

interface Started extends WatchedOutput {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  port: number;
  /** The server process's pid, from its log lines. */
  serverPid: number;
}

const running: Started[] = [];
let upstream: SlowUpstream;
let workDir = '';

beforeAll(async () => {
  upstream = await startSlowUnknownUpstream(1500);
  workDir = mkdtempSync(join(tmpdir(), 'phone-rep-install-'));
});
afterEach(async () => {
  for (const started of running.splice(0)) {
    if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
    if (isAlive(started.serverPid)) process.kill(started.serverPid, 'SIGKILL');
    await started.exited;
  }
});
afterAll(async () => {
  await upstream.close();
  rmSync(workDir, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts a command and resolves once its server listens, with the port and the server's pid. */
async function startListening(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Started> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      NODE_OPTIONS: '',
      ...upstream.env,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watched = watchOutput(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = /"pid":(\d+),"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/;
  await Promise.race([
    watched.printed(listening),
    exited.then(() => {
      throw new Error(`exited before listening: ${watched.output()}`);
    }),
  ]);
  const [, pid, port] = listening.exec(watched.output()) ?? [];
  const started = { ...watched, child, exited, port: Number(port), serverPid: Number(pid) };
  running.push(started);
  return started;
}

/** True once a connection to the port is refused. */
function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('the built launcher started from another directory', () => {
  for (const cwd of ['/', '/tmp']) {
    it(`answers a lookup when started from ${cwd}, and says what is on in one start-up line`, async () => {
      const server = await startListening(process.execPath, [START], {
        cwd,
        env: { HASH_SECRET: 'install-test-secret-0123456789' },
      });
      const answer = await fetch(`http://127.0.0.1:${server.port}/api/phone/0612345678?wait=100`);
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { data: { phoneInfo: { e164: string } } }).data.phoneInfo.e164).toBe(
        '+33612345678',
      );
      const health = (await (await fetch(`http://127.0.0.1:${server.port}/health`)).json()) as { version: string };
      expect(health.version).toBe(
        (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
      );
      await server.printed(
        /phone-reputation \S+ on Node 24\.\S+: state in \S+, lists: file \S+lists\.csv, feed off, admin API off, Redis none, ARCEP data of \d{4}-\d{2}-\d{2} \(shipped snapshot /,
      );
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    });
  }
});

describe('npm start', () => {
  let packageCopy = '';
  beforeAll(() => {
    packageCopy = join(workDir, 'package');
    cpSync(join(ROOT, 'dist'), join(packageCopy, 'dist'), { recursive: true });
    copyFileSync(join(ROOT, 'package.json'), join(packageCopy, 'package.json'));
    symlinkSync(join(ROOT, 'data'), join(packageCopy, 'data'));
    symlinkSync(join(ROOT, 'node_modules'), join(packageCopy, 'node_modules'));
    // The file's HOST cannot be listened on: the environment's must win. Its FEED_PASSWORD is
    // unset in the environment, so the file's turns the feed on.
    writeFileSync(
      join(packageCopy, '.env'),
      `HOST=203.0.113.7\nFEED_PASSWORD=${FEED_SECRET}\nSHUTDOWN_GRACE_MS=${GRACE_MS}\n`,
    );
  });

  function npmStart(): Promise<Started> {
    // --ignore-scripts skips prestart's build: dist/ is the one just built (the system project's globalSetup).
    return startListening('npm', ['start', '--ignore-scripts'], { cwd: packageCopy, env: { FEED_PASSWORD: '' } });
  }

  it("reads the package's .env, the environment set winning over it, and never prints the password it holds", async () => {
    const server = await startListening('npm', ['start', '--ignore-scripts'], { cwd: packageCopy, env: {} });
    expect(existsSync(join(packageCopy, '.env'))).toBe(true);
    await server.printed(/feed on, admin API off/);
    const feed = await fetch(`http://127.0.0.1:${server.port}/feed/blocklist.csv`, {
      headers: { authorization: `Basic ${Buffer.from(`blocklist:${FEED_SECRET}`).toString('base64')}` },
    });
    expect(feed.status).toBe(200);
    await feed.arrayBuffer();
    server.child.kill('SIGTERM');
    await server.exited;
    expect(server.output()).not.toContain(FEED_SECRET);
  });

  it('passes SIGTERM on: the request in flight is answered, the port closes within SHUTDOWN_GRACE_MS + 2 s, no process is left', async () => {
    const server = await npmStart();
    const npmPid = server.child.pid ?? 0;
    const launcherPids = readFileSync(`/proc/${npmPid}/task/${npmPid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(launcherPids).toHaveLength(1);
    // A lookup held by the slow upstream (1.5 s) is in flight when the signal comes.
    const reached = upstream.nextRequest();
    const inFlight = fetch(`http://127.0.0.1:${server.port}/api/phone/0612345679`);
    await reached;
    const signalledAt = Date.now();
    process.kill(npmPid, 'SIGTERM');
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    // The deadline is the behaviour under test: npm exits only once the server has.
    expect(await portClosed(server.port)).toBe(true);
    expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS + 2000);
    for (const pid of [server.serverPid, ...launcherPids])
      expect(isAlive(pid), `process ${pid} left running`).toBe(false);
  });
});
