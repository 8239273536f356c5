// The container image for tests, where no OCI runtime can start a container (docs/testing.md,
// "The container image"): scripts/test-image.sh builds it from the real Dockerfile on a
// stand-in base, and `buildah run --isolation=chroot --network=host` runs the image's own
// entrypoint and command from a working container of it, on this machine's loopback.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { watchOutput } from '../../harness/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The image's volume, where everything it writes goes. */
export const VOLUME = '/var/lib/phone-reputation';

export interface BuiltImage {
  image: string;
  base: string;
  /** The script's own lines (what it built or found cached, and how long each took). */
  log: string;
}

/** Runs scripts/test-image.sh: the image, or why it cannot be built here (exit 77: the packages cannot be installed). */
export async function buildTestImage(): Promise<{ built: BuiltImage } | { skipped: string }> {
  const { code, stdout, stderr } = await run('bash', [join(ROOT, 'scripts/test-image.sh')], { timeoutMs: 15 * 60_000 });
  if (code === 77) return { skipped: stderr.trim() };
  if (code !== 0) throw new Error(`scripts/test-image.sh failed (exit ${code}):\n${stderr}`);
  const image = /^IMAGE=(.+)$/m.exec(stdout)?.[1];
  const base = /^BASE=(.+)$/m.exec(stdout)?.[1];
  if (image === undefined || base === undefined)
    throw new Error(`scripts/test-image.sh printed no IMAGE= and BASE= lines:\n${stdout}`);
  return { built: { image, base, log: stderr } };
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command to its end (or until `timeoutMs`, then killed), its output collected. */
export function run(
  command: string,
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024, env: options.env ?? process.env },
      (error, stdout, stderr) => {
        const code = child.exitCode ?? (error ? -1 : 0);
        resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
      },
    );
  });
}

async function mustRun(command: string, args: string[]): Promise<string> {
  const result = await run(command, args);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.code}): ${result.stderr}`);
  return result.stdout.trim();
}

export interface ImageConfig {
  Entrypoint: string[];
  Cmd: string[];
  User: string;
  Env: string[];
  ExposedPorts?: Record<string, unknown>;
  Volumes?: Record<string, unknown>;
  Labels?: Record<string, string>;
  WorkingDir: string;
}

/** `podman image inspect`: the image's configuration; its HEALTHCHECK (docker format only) is beside it. */
export async function inspectImage(
  image: string,
): Promise<{ Size: number; Config: ImageConfig; Healthcheck?: { Test: string[] } }> {
  const [inspected] = JSON.parse(await mustRun('podman', ['image', 'inspect', image])) as Array<{
    Size: number;
    Config: ImageConfig;
    Healthcheck?: { Test: string[] };
  }>;
  if (!inspected) throw new Error(`podman image inspect ${image}: nothing`);
  return inspected;
}

/**
 * A working container of the image (`buildah from`): what `buildah run` runs in. With
 * `readOnly`, its root file system is remounted read-only, as `docker run --read-only` has it.
 */
export class WorkingContainer {
  private constructor(
    readonly name: string,
    private readonly config: ImageConfig,
    private readonly mountPoint: string | undefined,
  ) {}

  static async create(image: string, options: { readOnly?: boolean } = {}): Promise<WorkingContainer> {
    const { Config } = await inspectImage(image);
    const name = `phone-rep-test-${randomBytes(4).toString('hex')}`;
    await mustRun('buildah', ['from', '--quiet', '--name', name, image]);
    if (!options.readOnly) return new WorkingContainer(name, Config, undefined);
    const mountPoint = await mustRun('buildah', ['mount', name]);
    // buildah run binds /run/.containerenv over a file it creates first: create it while the root can be written.
    writeFileSync(join(mountPoint, 'run/.containerenv'), '');
    await mustRun('mount', ['-o', 'remount,ro', mountPoint]);
    return new WorkingContainer(name, Config, mountPoint);
  }

  /** The image's ENTRYPOINT followed by `command`, or by its CMD when `command` is not given. */
  argv(command?: string[]): string[] {
    return [...this.config.Entrypoint, ...(command ?? this.config.Cmd)];
  }

  /**
   * `buildah run` of argv(command), as the image's user, in its working directory, on the host's
   * network, `volume` (a host directory) mounted on the image's volume. `env` adds to the image's.
   */
  spawn(options: { env?: Record<string, string>; volume?: string; command?: string[] }): ChildProcess {
    const args = ['run', '--isolation=chroot', '--network=host'];
    for (const [name, value] of Object.entries(options.env ?? {})) args.push('-e', `${name}=${value}`);
    if (options.volume !== undefined) args.push('-v', `${options.volume}:${VOLUME}`);
    args.push(this.name, '--', ...this.argv(options.command));
    return spawn('buildah', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** A command through the image's entrypoint, to its end. */
  async exec(options: {
    env?: Record<string, string>;
    volume?: string;
    command: string[];
    timeoutMs?: number;
  }): Promise<CommandResult> {
    if (options.command.length === 0) throw new Error('exec: no command');
    const child = this.spawn(options);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
    clearTimeout(timer);
    return { code, stdout, stderr };
  }

  async remove(): Promise<void> {
    if (this.mountPoint !== undefined) await run('mount', ['-o', 'remount,rw', this.mountPoint]);
    await run('buildah', ['rm', this.name]);
  }
}

/** Pids of every descendant of `pid`, read from /proc, with each one's command name. */
export function descendants(pid: number): Array<{ pid: number; comm: string; uid: number }> {
  const parentOf = new Map<number, number>();
  const commOf = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so split after its last ')'.
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
      commOf.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
    } catch {
      // The process ended while being read.
    }
  }
  const found: Array<{ pid: number; comm: string; uid: number }> = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [child, ppid] of parentOf) {
      if (ppid !== parent) continue;
      queue.push(child);
      found.push({ pid: child, comm: commOf.get(child) ?? '', uid: processUid(child) });
    }
  }
  return found;
}

function processUid(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((each) => each.startsWith('Uid:'));
    return Number(line?.split(/\s+/)[1] ?? -1);
  } catch {
    return -1;
  }
}

export interface ImageServer {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** Resolves with `buildah run`'s exit status once it has ended. */
  exited: Promise<number | null>;
  output(): string;
  printed(pattern: RegExp): Promise<void>;
  /** The image's init (tini) and the server under it, as this machine sees them. */
  processes(): { init?: { pid: number; uid: number }; node?: { pid: number; uid: number }; nodeCount: number };
  /** SIGTERM to the image's init, as `docker stop` sends it. */
  terminate(): void;
  /** SIGKILL to everything the run started, when a test left it running. */
  kill(): void;
}

/**
 * The image's default command (ENTRYPOINT + CMD) run in `container`, on 127.0.0.1 at a port the
 * system picks (PORT=0), resolved once it listens.
 */
export async function startImageServer(
  container: WorkingContainer,
  options: { env?: Record<string, string>; volume?: string; startTimeoutMs?: number },
): Promise<ImageServer> {
  const child = container.spawn({
    env: { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...options.env },
    ...(options.volume === undefined ? {} : { volume: options.volume }),
  });
  const { output, printed } = watchOutput(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      printed(listening),
      exited.then((code) =>
        Promise.reject(new Error(`the image's server exited (${code}) before listening: ${output()}`)),
      ),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the image's server did not start: ${output()}`)),
          options.startTimeoutMs ?? 150_000,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const port = Number(listening.exec(output())?.[1]);
  const processes = (): ReturnType<ImageServer['processes']> => {
    const tree = child.pid === undefined ? [] : descendants(child.pid);
    const init = tree.find((each) => each.comm === 'tini');
    const nodes = tree.filter((each) => each.comm === 'node' || each.comm === 'MainThread');
    const node = nodes[0];
    return {
      ...(init ? { init: { pid: init.pid, uid: init.uid } } : {}),
      ...(node ? { node: { pid: node.pid, uid: node.uid } } : {}),
      nodeCount: nodes.length,
    };
  };
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    exited,
    output,
    printed,
    processes,
    terminate() {
      const init = processes().init;
      if (!init)
        throw new Error(
          `no tini under buildah run: ${JSON.stringify(child.pid === undefined ? [] : descendants(child.pid))}`,
        );
      process.kill(init.pid, 'SIGTERM');
    },
    kill() {
      for (const each of child.pid === undefined ? [] : descendants(child.pid).reverse()) {
        try {
          process.kill(each.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      child.kill('SIGKILL');
    },
  };
}
