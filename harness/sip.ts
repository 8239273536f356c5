// Real SIP software on loopback for the Kamailio system test and the `pbx` benchmark: the shipped
// examples/kamailio/kamailio.cfg run by Debian's kamailio (pointed at loopback ports with `-A`
// defines), a SIPp callee (uas) that answers every call, and SIPp callers placing one call each.
// Every port is a free one the kernel gave; every process is ended by its own pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { watchOutput } from './processes.js';

export const KAMAILIO = '/usr/sbin/kamailio';
export const SIPP = '/usr/bin/sipp';
export const KAMAILIO_CFG = fileURLToPath(new URL('../examples/kamailio/kamailio.cfg', import.meta.url));
const SCENARIOS = fileURLToPath(new URL('./sip-scenarios/', import.meta.url));

/** Whether Kamailio (with http_client) and SIPp are installed (scripts/test-prerequisites.sh installs them). */
export function sipSoftwareInstalled(): boolean {
  return (
    existsSync(KAMAILIO) && existsSync(SIPP) && existsSync('/usr/lib/x86_64-linux-gnu/kamailio/modules/http_client.so')
  );
}

/** A UDP port on 127.0.0.1 that was free a moment ago (the kernel's choice). */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

interface Watched {
  child: ChildProcess;
  output(): string;
  /** Resolves once the process printed text matching the pattern; rejects if it exits first. */
  printed(pattern: RegExp): Promise<void>;
  exited: Promise<number | null>;
  stop: () => Promise<void>;
}

function watch(child: ChildProcess): Watched {
  const { output, printed } = watchOutput(child);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  return {
    child,
    output,
    exited,
    printed: (pattern) =>
      Promise.race([
        printed(pattern),
        exited.then((code) => {
          throw new Error(`exited (${String(code)}) before printing ${String(pattern)}:\n${output().slice(-2000)}`);
        }),
      ]),
    stop: async () => {
      if (exitCode === undefined && child.pid !== undefined) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface KamailioOptions {
  serviceUrl: string;
  nextHopPort: number;
  waitMs?: number;
  httpTimeoutSeconds?: number;
  /** The config's ASYNC_WORKERS (processes that ask the service); default the config's own. */
  asyncWorkers?: number;
  /** Another config (the benchmark's baseline); default the shipped one. */
  cfg?: string;
}

export interface Kamailio extends Watched {
  port: number;
  /** Lines the script logged for each screened call (`screening <call-id>: verdict <word>`). */
  verdicts(): string[];
}

/** The shipped config, listening on a free loopback port, asking `serviceUrl`, relaying to `nextHopPort`. */
export async function startKamailio(options: KamailioOptions): Promise<Kamailio> {
  const port = await freeUdpPort();
  const workdir = mkdtempSync(join(tmpdir(), 'kamailio-'));
  const defines = [
    `LISTEN=udp:127.0.0.1:${port}`,
    `REPUTATION_URL="${options.serviceUrl}"`,
    `NEXT_HOP="sip:127.0.0.1:${options.nextHopPort}"`,
    `WAIT_MS="${options.waitMs ?? 800}"`,
    `HTTP_TIMEOUT_S=${options.httpTimeoutSeconds ?? 2}`,
    ...(options.asyncWorkers === undefined ? [] : [`ASYNC_WORKERS=${options.asyncWorkers}`]),
  ];
  const child = spawn(
    KAMAILIO,
    [
      '-f',
      options.cfg ?? KAMAILIO_CFG,
      '-DD',
      '-E',
      '-n',
      '2',
      '-w',
      workdir,
      '-Y',
      workdir,
      ...defines.flatMap((define) => ['-A', define]),
    ],
    {
      cwd: workdir,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const watched = watch(child);
  const stop = watched.stop;
  // The UDP socket is bound before the receive buffer is probed; requests sent from then on
  // wait in the socket until a worker reads them.
  await watched.printed(/SO_RCVBUF is finally/);
  return {
    ...watched,
    port,
    verdicts: () => [...watched.output().matchAll(/screening \S+: verdict (\S+)/g)].map((match) => match[1] ?? ''),
    async stop() {
      await stop();
      rmSync(workdir, { recursive: true, force: true });
    },
  };
}

export interface Callee extends Watched {
  port: number;
}

/** A SIPp user agent that answers every call with 180 then 200 (harness/sip-scenarios/callee.xml). */
export async function startCallee(): Promise<Callee> {
  const port = await freeUdpPort();
  const child = spawn(
    SIPP,
    [
      '-sf',
      join(SCENARIOS, 'callee.xml'),
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-nostdin',
      '-trace_err',
      '-error_file',
      '/dev/null',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const watched = watch(child);
  return { ...watched, port };
}

export interface CallOutcome {
  /** SIPp's exit code: 0 when every call went as the scenario says. */
  exitCode: number | null;
  /** Wall time of the SIPp run, ms. */
  elapsedMs: number;
  /** Time from each call's first INVITE to its final answer, ms, from SIPp's message log (µs timestamps). */
  setupMs: number[];
  output: string;
}

const SCENARIO_FILES = {
  answered: 'call-answered.xml',
  declined: 'call-declined.xml',
  // The INVITE sent again (same branch) after the proxy's 100 Trying, as a caller does whose
  // 100 was lost; then answered like `answered`.
  retransmitted: 'call-retransmitted.xml',
} as const;

/**
 * Places `calls` calls from `caller` through the proxy with SIPp and waits for them to end.
 * `expect` picks the scenario: `answered` (200, then hang up), `declined` (603) or
 * `retransmitted` (the INVITE sent twice, then answered). `rate` is new calls a second,
 * `limit` the most calls at once (default 1: one after the other).
 */
export async function placeCalls(
  proxyPort: number,
  caller: string,
  expect: keyof typeof SCENARIO_FILES,
  options: { calls?: number; rate?: number; limit?: number; timeoutSeconds?: number } = {},
): Promise<CallOutcome> {
  const port = await freeUdpPort();
  const workdir = mkdtempSync(join(tmpdir(), 'sipp-'));
  const calls = options.calls ?? 1;
  const started = performance.now();
  const child = spawn(
    SIPP,
    [
      `127.0.0.1:${proxyPort}`,
      '-sf',
      join(SCENARIOS, SCENARIO_FILES[expect]),
      '-key',
      'caller',
      caller,
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-m',
      String(calls),
      '-l',
      String(options.limit ?? 1),
      '-r',
      String(options.rate ?? 10),
      '-timeout',
      `${options.timeoutSeconds ?? 20}s`,
      '-timeout_error',
      '-nostdin',
      '-trace_msg',
      '-message_file',
      join(workdir, 'messages.log'),
      '-trace_err',
      '-error_file',
      join(workdir, 'errors.log'),
      // A phone ignores a provisional answer that comes late: the callee's 180 and 200 go back
      // through different Kamailio processes, so the 180 may arrive after the 200 (and the
      // proxy's answer to a retransmitted INVITE after the call's). Anything else unexpected
      // still fails the call, by its final answer never coming (the -timeout below).
      '-default_behaviors',
      'all,-abortunexp',
    ],
    { cwd: workdir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const watched = watch(child);
  const exitCode = await watched.exited;
  const elapsedMs = performance.now() - started;
  const setupMs = existsSync(join(workdir, 'messages.log'))
    ? setupTimes(readFileSync(join(workdir, 'messages.log'), 'utf8'))
    : [];
  // SIPp's own account of a failed call (an unexpected message, a timeout) ends the output.
  const errors =
    exitCode !== 0 && existsSync(join(workdir, 'errors.log'))
      ? `\nSIPp errors:\n${readFileSync(join(workdir, 'errors.log'), 'utf8').slice(-1500)}`
      : '';
  rmSync(workdir, { recursive: true, force: true });
  return { exitCode, elapsedMs, setupMs, output: watched.output() + errors };
}

// SIPp's message log: each message under a line of dashes and its time (`2026-11-24
// 22:02:56.320882`, microseconds), then `UDP message sent` or `received`, then the message.
export function setupTimes(log: string): number[] {
  const invited = new Map<string, number>();
  const answered = new Map<string, number>();
  for (const block of log.split(/^-{10,} /m).slice(1)) {
    const stamp = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}\.\d+)/.exec(block);
    const callId = /^Call-ID:\s*(\S+)/im.exec(block)?.[1];
    if (stamp === null || callId === undefined || !/^CSeq:\s*\d+ INVITE/im.test(block)) continue;
    const [, date = '', time = ''] = stamp;
    const [whole = '', fraction = '0'] = time.split('.');
    const atMs = Date.parse(`${date}T${whole}Z`) + Number(`0.${fraction}`) * 1000;
    if (/UDP message sent[^\n]*\n\s*INVITE /.test(block)) {
      if (!invited.has(callId)) invited.set(callId, atMs);
    } else if (/received[^\n]*\n\s*SIP\/2\.0 [2-6]\d\d /.test(block) && !answered.has(callId)) {
      answered.set(callId, atMs);
    }
  }
  return [...answered].flatMap(([callId, atMs]) => {
    const start = invited.get(callId);
    return start === undefined ? [] : [atMs - start];
  });
}
