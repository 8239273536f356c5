// A Sentinel-managed Redis of a test's own, on loopback, with Debian's binaries (redis-server and
// redis-sentinel, installed by scripts/test-prerequisites.sh): a primary, a replica and three
// sentinels (quorum 2), each on a free port the kernel gave (never 6379, the shared Redis), in a
// temporary directory removed by `stop()`. Data nodes persist as compose.yaml's do (append-only
// file), so a node killed and started again comes back with what it had written.
//
// Nothing here sleeps to synchronise: starting waits for each process to say it is ready and for
// the sentinels to know the replica and each other (polled, bounded by a deadline); a failover
// is awaited through the sentinels' own `+switch-master` event (SUBSCRIBE on every sentinel),
// and a node's rejoining through its INFO replication (polled, bounded).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { watchOutput, type WatchedOutput } from './processes.js';

export const REDIS_SERVER = '/usr/bin/redis-server';
export const REDIS_SENTINEL = '/usr/bin/redis-sentinel';

export interface SentinelGroupOptions {
  /** The primary's name the sentinels monitor (REDIS_SENTINEL_NAME). Default `phonerep`. */
  name?: string;
  /** The sentinels' down-after-milliseconds: how long a silent primary takes to be judged down. Default 1000. */
  downAfterMs?: number;
  /** The sentinels' failover-timeout. Default 3000. */
  failoverTimeoutMs?: number;
  /** requirepass and masterauth of the data nodes (and the sentinels' auth-pass). Default none. */
  password?: string;
  /** How long `startSentinelGroup` may take before it fails. Default 20 s. */
  startDeadlineMs?: number;
}

export interface NodeAddress {
  host: string;
  port: number;
}

export interface DataNode {
  readonly port: number;
  /** Running now (not killed). */
  running(): boolean;
  /** SIGKILL: no chance to write anything but what it already wrote. */
  kill(): Promise<void>;
  /** Starts it again on its port, from its own files, as it was first started (a primary, for the first one). */
  start(): Promise<void>;
  output(): string;
}

export interface SentinelGroup {
  readonly name: string;
  /** The sentinels' addresses as REDIS_SENTINELS takes them: `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`. */
  readonly sentinelsSetting: string;
  readonly sentinelPorts: readonly number[];
  /** The down-after-milliseconds the group was started with. */
  readonly downAfterMs: number;
  /** The data nodes, the first started as the primary, the second as its replica. */
  readonly nodes: readonly DataNode[];
  /** Sets every sentinel's down-after-milliseconds (`SENTINEL SET`), for what follows. */
  setDownAfter(ms: number): Promise<void>;
  /** The primary a majority of the sentinels name now (`SENTINEL get-master-addr-by-name`); throws when no two agree. */
  primary(): Promise<NodeAddress>;
  /** The data node on that port. */
  node(port: number): DataNode;
  /**
   * Resolves with the new primary once a sentinel announced `+switch-master` away from `fromPort`
   * (or at once if one already did), as that event names it; rejects after `deadlineMs`.
   */
  switchedFrom(fromPort: number, deadlineMs: number): Promise<NodeAddress>;
  /** Resolves once the node on `port` is a replica of `primaryPort` with its link up; rejects after `deadlineMs`. */
  replicating(port: number, primaryPort: number, deadlineMs: number): Promise<void>;
  /** A plain connection to one data node (the caller disconnects it). */
  connect(port: number): Redis;
  /** INFO replication of one data node, as fields. */
  replication(port: number): Promise<Record<string, string>>;
  /** Every sentinel event seen so far (`<channel> <message>`), for assertion messages. */
  events(): readonly string[];
  /** Kills every process and removes the directory. */
  stop(): Promise<void>;
}

/** Whether Debian's redis-server and redis-sentinel are installed (scripts/test-prerequisites.sh installs them). */
export function sentinelSoftwareInstalled(): boolean {
  return existsSync(REDIS_SERVER) && existsSync(REDIS_SENTINEL);
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice). */
export async function freeTcpPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

function fields(info: string): Record<string, string> {
  const named: Record<string, string> = {};
  for (const line of info.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) named[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return named;
}

/** Polls `check` every 50 ms until it holds; rejects with `what` (and the last error) after `deadlineMs`. */
async function until(what: string, deadlineMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let lastError = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${deadlineMs} ms${lastError ? ` (${lastError})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Started {
  child: ChildProcess;
  watched: WatchedOutput;
  exited: Promise<void>;
}

/** Spawns a Redis binary and resolves once it printed `ready`; rejects if it exits first. */
async function startProcess(binary: string, args: string[], ready: RegExp): Promise<Started> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchOutput(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([
    watched.printed(ready),
    exited.then(() => {
      throw new Error(`${binary} exited before it was ready:\n${watched.output().slice(-2000)}`);
    }),
  ]);
  return { child, watched, exited };
}

async function killProcess(started: Started | undefined): Promise<void> {
  if (started === undefined) return;
  const { child } = started;
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await started.exited;
}

export async function startSentinelGroup(options: SentinelGroupOptions = {}): Promise<SentinelGroup> {
  const name = options.name ?? 'phonerep';
  const downAfterMs = options.downAfterMs ?? 1000;
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 3000;
  const startDeadlineMs = options.startDeadlineMs ?? 20_000;
  const { password } = options;
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-sentinel-'));
  const processes = new Set<Started>();
  const subscribers: Redis[] = [];
  const seen: string[] = [];
  let switchWaiters: Array<() => void> = [];
  const clients: Redis[] = [];

  const auth = password === undefined ? [] : ['--requirepass', password, '--masterauth', password];
  const connect = (port: number): Redis => {
    const redis = new Redis({
      host: '127.0.0.1',
      port,
      ...(password === undefined ? {} : { password }),
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 100,
    });
    redis.on('error', () => undefined);
    return redis;
  };
  const sentinelConnection = (port: number): Redis => {
    const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: false, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    return redis;
  };

  function dataNode(port: number, replicaOf: number | undefined): DataNode {
    const nodeDir = join(dir, `redis-${port}`);
    mkdirSync(nodeDir);
    let started: Started | undefined;
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      nodeDir,
      '--protected-mode',
      'no',
      '--appendonly',
      'yes',
      // A SIGKILLed node keeps every write it answered: Redis writes the append-only file before it
      // replies, and the kernel keeps what was written. `always` would add an fsync per write,
      // which on a loaded disk can hold a node past the sentinels' down-after (a false failover).
      '--appendfsync',
      'everysec',
      '--save',
      '',
      ...auth,
      ...(replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(replicaOf)]),
    ];
    return {
      port,
      running: () => started !== undefined,
      async kill() {
        const was = started;
        started = undefined;
        await killProcess(was);
        if (was) processes.delete(was);
      },
      async start() {
        started = await startProcess(REDIS_SERVER, args, /Ready to accept connections/);
        processes.add(started);
      },
      output: () => started?.watched.output() ?? '',
    };
  }

  async function stop(): Promise<void> {
    for (const redis of [...subscribers, ...clients]) redis.disconnect();
    await Promise.all([...processes].map((started) => killProcess(started)));
    processes.clear();
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    const primaryPort = await freeTcpPort();
    const replicaPort = await freeTcpPort();
    const primary = dataNode(primaryPort, undefined);
    const replica = dataNode(replicaPort, primaryPort);
    const nodes = [primary, replica];
    await primary.start();
    await replica.start();
    const admin = connect(replicaPort);
    clients.push(admin);
    await until('the replica in sync with the primary', startDeadlineMs, async () => {
      const info = fields(await admin.info('replication'));
      return info.master_link_status === 'up';
    });

    const sentinelPorts: number[] = [];
    for (let at = 0; at < 3; at += 1) {
      const port = await freeTcpPort();
      sentinelPorts.push(port);
      const config = join(dir, `sentinel-${port}.conf`);
      // The sentinel rewrites its own file (what it learnt: replicas, other sentinels, epochs).
      writeFileSync(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          'protected-mode no',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
          `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
          `sentinel parallel-syncs ${name} 1`,
          ...(password === undefined ? [] : [`sentinel auth-pass ${name} ${password}`]),
          '',
        ].join('\n'),
      );
      processes.add(await startProcess(REDIS_SENTINEL, [config], /Sentinel ID is|monitor master/));
    }

    // Every sentinel's events, kept for assertion messages; +switch-master wakes the waiters.
    for (const port of sentinelPorts) {
      const subscriber = sentinelConnection(port);
      subscribers.push(subscriber);
      subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
        seen.push(`${channel} ${message}`);
        if (channel === '+switch-master') {
          const waiting = switchWaiters;
          switchWaiters = [];
          for (const wake of waiting) wake();
        }
      });
      await subscriber.psubscribe('*');
    }

    // Ready when every sentinel knows the replica and the two other sentinels: before that a
    // sentinel could not gather the votes of a failover.
    const asked = sentinelPorts.map((port) => sentinelConnection(port));
    clients.push(...asked);
    await until('the sentinels knowing the replica and each other', startDeadlineMs, async () => {
      for (const sentinel of asked) {
        const flat = (await sentinel.call('SENTINEL', 'MASTER', name)) as string[];
        const master: Record<string, string> = {};
        for (let at = 0; at + 1 < flat.length; at += 2) master[flat[at] as string] = flat[at + 1] as string;
        if (Number(master['num-slaves']) < 1 || Number(master['num-other-sentinels']) < 2) return false;
      }
      return true;
    });

    // The primary a majority of the sentinels name (one may not have heard of a failover yet).
    const primaryNow = async (): Promise<NodeAddress> => {
      const named = new Map<string, number>();
      const errors: string[] = [];
      for (const sentinel of asked) {
        try {
          const reply = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string] | null;
          if (reply !== null) named.set(`${reply[0]}:${reply[1]}`, (named.get(`${reply[0]}:${reply[1]}`) ?? 0) + 1);
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
      const agreed = [...named].find(([, votes]) => votes >= 2)?.[0];
      if (agreed === undefined)
        throw new Error(
          `no two sentinels name the same primary ${name}: ${JSON.stringify([...named])} ${errors.join('; ')}`,
        );
      const colon = agreed.lastIndexOf(':');
      return { host: agreed.slice(0, colon), port: Number(agreed.slice(colon + 1)) };
    };

    const replication = async (port: number): Promise<Record<string, string>> => {
      const redis = connect(port);
      try {
        return fields(await redis.info('replication'));
      } finally {
        redis.disconnect();
      }
    };

    return {
      name,
      sentinelsSetting: sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
      sentinelPorts,
      downAfterMs,
      nodes,
      primary: primaryNow,
      node(port) {
        const found = nodes.find((node) => node.port === port);
        if (found === undefined) throw new Error(`no data node on port ${port}`);
        return found;
      },
      async switchedFrom(fromPort, deadlineMs) {
        let timer: NodeJS.Timeout | undefined;
        // `+switch-master <name> <old ip> <old port> <new ip> <new port>`: the new primary is the event's.
        const switched = (): NodeAddress | undefined => {
          const event = seen.find((line) => line.startsWith(`+switch-master ${name} 127.0.0.1 ${fromPort} `));
          if (event === undefined) return undefined;
          const [, , , , host, port] = event.split(' ');
          return { host: host ?? '', port: Number(port) };
        };
        try {
          return await Promise.race([
            new Promise<NodeAddress>((resolve) => {
              const check = (): void => {
                const found = switched();
                if (found !== undefined) resolve(found);
                else switchWaiters.push(check);
              };
              check();
            }),
            new Promise<never>((_resolve, reject) => {
              timer = setTimeout(
                () =>
                  reject(
                    new Error(
                      `no +switch-master from ${fromPort} within ${deadlineMs} ms; events:\n${seen.join('\n')}`,
                    ),
                  ),
                deadlineMs,
              );
            }),
          ]);
        } finally {
          clearTimeout(timer);
        }
      },
      replicating: (port, primaryPortNow, deadlineMs) =>
        until(`127.0.0.1:${port} replicating 127.0.0.1:${primaryPortNow}`, deadlineMs, async () => {
          const info = await replication(port);
          return (
            info.role === 'slave' && info.master_port === String(primaryPortNow) && info.master_link_status === 'up'
          );
        }),
      async setDownAfter(ms) {
        for (const sentinel of asked)
          await sentinel.call('SENTINEL', 'SET', name, 'down-after-milliseconds', String(ms));
      },
      connect: (port) => connect(port),
      replication,
      events: () => seen,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
