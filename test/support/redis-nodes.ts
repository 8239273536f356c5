// Redis processes a test starts on ports of its own (never the shared 6379): a `redis-server` with
// whatever options the test gives (a password, an ACL user, TLS, a replica of another), a
// `redis-sentinel` from a config file written here, and the TLS material openssl makes for them.
// Each is killed by `stop()`; the test waits on their own lines, never on time.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchOutput } from '../../harness/processes.js';

export interface RedisNode {
  readonly port: number;
  /** Everything it printed (for assertion messages). */
  output(): string;
  stop(): Promise<void>;
}

async function startNode(command: string, args: string[], port: number, ready: RegExp): Promise<RedisNode> {
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const { output, printed } = watchOutput(child);
  const exited = once(child, 'exit');
  const failed = exited.then(() => {
    throw new Error(`${command} on port ${port} exited before it was ready: ${output().slice(-800)}`);
  });
  await Promise.race([printed(ready), failed]);
  failed.catch(() => undefined);
  return {
    port,
    output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A redis-server on 127.0.0.1:`port` keeping nothing on disk, with the test's own options (`--requirepass x`…). */
export function startRedisServer(port: number, options: string[] = []): Promise<RedisNode> {
  const dir = mkdtempSync(join(tmpdir(), `redis-${port}-`));
  return startNode(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...options],
    port,
    /Ready to accept connections/,
  );
}

/**
 * A redis-sentinel on 127.0.0.1:`port` monitoring the primary `name` at 127.0.0.1:`primaryPort`
 * (quorum 1); with `tls`, on TLS only, and speaking TLS to the primary.
 */
export function startRedisSentinel(
  port: number,
  options: { name: string; primaryPort: number; requirepass?: string; primaryPassword?: string; tls?: TlsMaterial },
): Promise<RedisNode> {
  const dir = mkdtempSync(join(tmpdir(), `sentinel-${port}-`));
  const { tls } = options;
  const lines = [
    ...(tls === undefined
      ? [`port ${port}`]
      : [
          'port 0',
          `tls-port ${port}`,
          `tls-cert-file ${tls.certFile}`,
          `tls-key-file ${tls.keyFile}`,
          `tls-ca-cert-file ${tls.caFile}`,
          'tls-auth-clients no',
          // The sentinel speaks TLS to the primary too.
          'tls-replication yes',
        ]),
    'bind 127.0.0.1',
    `dir ${dir}`,
    `sentinel monitor ${options.name} 127.0.0.1 ${options.primaryPort} 1`,
    `sentinel down-after-milliseconds ${options.name} 1000`,
    `sentinel failover-timeout ${options.name} 5000`,
    ...(options.primaryPassword === undefined ? [] : [`sentinel auth-pass ${options.name} ${options.primaryPassword}`]),
    ...(options.requirepass === undefined ? [] : [`requirepass ${options.requirepass}`]),
  ];
  const file = join(dir, 'sentinel.conf');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return startNode('redis-sentinel', [file], port, /\+monitor master/);
}

export interface TlsMaterial {
  /** The authority's certificate (what REDIS_TLS_CA names). */
  caFile: string;
  /** Redis' certificate (for 127.0.0.1) and key, signed by the authority. */
  certFile: string;
  keyFile: string;
}

/** A throwaway authority and a server certificate for 127.0.0.1 signed by it, made by openssl. */
export function makeTlsMaterial(): TlsMaterial {
  const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
  const path = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: 'ignore' });
  };
  const key = ['-newkey', 'rsa:2048', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...key,
    '-days',
    '1',
    '-subj',
    '/CN=phone-rep test CA',
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.pem'),
  );
  openssl('req', ...key, '-subj', '/CN=127.0.0.1', '-keyout', path('server.key'), '-out', path('server.csr'));
  writeFileSync(path('san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-days',
    '1',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.pem'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-extfile',
    path('san.cnf'),
    '-out',
    path('server.pem'),
  );
  return { caFile: path('ca.pem'), certFile: path('server.pem'), keyFile: path('server.key') };
}
