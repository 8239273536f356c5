// The built server on Redis as an operator secures it (issue 50): an ACL user and password, a
// primary found through a real redis-sentinel (followed through a failover), and TLS with an
// authority of the operator's own, to Redis and through a sentinel. Redis processes of the
// test's own on 127.0.0.1:6410-6414 and 6418, never the shared 6379. A login Redis refuses, or a
// sentinel's, stops the start with a message naming the variable to fix, and never the password.
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtServerCommand, spawnServer, type ServerProcess } from '../../harness/servers.js';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { makeTlsMaterial, startRedisSentinel, startRedisServer, type RedisNode } from '../support/redis-nodes.js';
import { waitFor } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const BEARER = { authorization: `Bearer ${ADMIN}` };
const PREFIX = 't-redis-conn:';
const COMMON = {
  HASH_SECRET: 'redis-conn-secret-0123456789',
  ADMIN_TOKEN: ADMIN,
  RATE_LIMIT_MAX: '0',
  REDIS_KEY_PREFIX: PREFIX,
};
const ACL_PORT = 6410;
const PRIMARY_PORT = 6411;
const SENTINEL_PORT = 6412;
const REPLICA_PORT = 6413;
const TLS_PORT = 6414;
const TLS_SENTINEL_PORT = 6418;

/** A connection of the test's own to one node; a failover's dropped connection is no failure of the test. */
function inspect(redis: Redis): Redis {
  redis.on('error', () => undefined);
  return redis;
}

/** The built server's output and exit code when it stops at start. */
async function startUpFailure(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const server = builtServerCommand();
  const child = spawn(server.command, server.args, {
    cwd: server.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, output };
}

async function stopServer(server: ServerProcess | undefined): Promise<void> {
  if (server === undefined || server.child.exitCode !== null) return;
  server.child.kill('SIGTERM');
  await server.exited;
}

/** PUT of a list rule through the admin API: the status, and Retry-After when refused. */
async function putRule(server: ServerProcess, rule: string): Promise<{ status: number; retryAfter: string | null }> {
  const response = await fetch(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent(rule)}`, {
    method: 'PUT',
    headers: { ...BEARER, 'content-type': 'application/json' },
    body: JSON.stringify({ list: 'block' }),
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

async function redisReadiness(server: ServerProcess): Promise<string | undefined> {
  const response = await fetch(`${server.baseUrl}/health/ready`);
  const body = (await response.json()) as { dependencies: { redis?: { status: string } } };
  return body.dependencies.redis?.status;
}

/** The keys under the test's prefix on a Redis of the test. */
async function keysOn(admin: Redis): Promise<string[]> {
  return admin.keys(`${PREFIX}*`);
}

/** The service at work on Redis: a list rule acknowledged and kept there, a lookup cached there. */
async function expectListsAndCacheOn(server: ServerProcess, admin: Redis, rule: string): Promise<void> {
  await waitFor(async () => (await redisReadiness(server)) === 'ok', 10_000);
  expect([200, 201]).toContain((await putRule(server, rule)).status);
  const rules = (await (await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: BEARER })).json()) as Array<{
    rule: string;
  }>;
  expect(rules.map((entry) => entry.rule)).toContain(rule);
  expect((await keysOn(admin)).some((key) => key.includes('lists'))).toBe(true);
  const lookup = await fetch(`${server.baseUrl}/api/phone/0612345678`);
  expect(lookup.status).toBe(200);
  await lookup.arrayBuffer();
  await waitFor(async () => (await keysOn(admin)).some((key) => key.includes('v3:')), 10_000);
}

let sites: FakeUpstreamSites;
beforeAll(async () => {
  sites = await startFakeUpstreamSites();
});
afterAll(async () => {
  await sites.close();
});

describe('an ACL user and a password (REDIS_USERNAME, REDIS_PASSWORD)', () => {
  let redis: RedisNode;
  let admin: Redis;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    redis = await startRedisServer(ACL_PORT, ['--requirepass', 'default-user-pass']);
    admin = inspect(
      new Redis({ port: ACL_PORT, host: '127.0.0.1', password: 'default-user-pass', maxRetriesPerRequest: 1 }),
    );
    // The user docs/operations.md suggests: its own keys and channels, no dangerous command but INFO.
    await admin.call(
      'ACL',
      'SETUSER',
      'phonerep',
      'on',
      '>acl-pass-5d2e',
      `~${PREFIX}*`,
      `&${PREFIX}*`,
      '+@all',
      '-@dangerous',
      '+info',
    );
  });
  afterAll(async () => {
    await stopServer(server);
    admin.disconnect();
    await redis.stop();
  });

  it('serves the lists and the cache with every connection logged in as that user', async () => {
    server = await spawnServer({
      ...sites.env(),
      ...COMMON,
      REDIS_URL: `redis://127.0.0.1:${ACL_PORT}`,
      REDIS_USERNAME: 'phonerep',
      REDIS_PASSWORD: 'acl-pass-5d2e',
    });
    await expectListsAndCacheOn(server, admin, '+33163000001');
    // The shared connection and the stores' own (the lists' and reports' readers, the tokens' subscriber).
    const clients = ((await admin.call('CLIENT', 'LIST')) as string).split('\n').filter((line) => line.length > 0);
    const service = clients.filter((line) => !/\bcmd=client\|list\b/.test(line));
    expect(service.length).toBeGreaterThanOrEqual(4);
    for (const line of service) expect(line).toMatch(/\buser=phonerep\b/);
    expect(clients.join('\n')).toMatch(/name=phonerep-lists-reader/);
    expect(clients.join('\n')).toMatch(/name=phonerep-tokens-subscriber/);
    expect(server.output()).not.toContain('acl-pass-5d2e');
    // Nothing the service sends is outside what the user may run.
    expect(server.output()).not.toMatch(/NOPERM/);
    await stopServer(server);
  });

  it('stops the start on a password Redis refuses, naming the variables and never the password', async () => {
    const { code, output } = await startUpFailure({
      ...COMMON,
      REDIS_URL: `redis://127.0.0.1:${ACL_PORT}`,
      REDIS_USERNAME: 'phonerep',
      REDIS_PASSWORD: 'not-the-acl-pass-77',
    });
    expect(code).toBe(1);
    expect(output).toContain('Redis refused the login: check REDIS_USERNAME and REDIS_PASSWORD');
    expect(output).toContain('WRONGPASS');
    expect(output).not.toContain('not-the-acl-pass-77');
    expect(output).not.toMatch(/Server listening/);
  });

  it('stops the start when Redis needs a password and none is given', async () => {
    const { code, output } = await startUpFailure({ ...COMMON, REDIS_URL: `redis://127.0.0.1:${ACL_PORT}` });
    expect(code).toBe(1);
    expect(output).toContain('Redis requires a password: set REDIS_PASSWORD');
  });
});

describe('a primary found through a sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME)', () => {
  const nodes: RedisNode[] = [];
  let primary: Redis;
  let sentinel: Redis;
  let server: ServerProcess | undefined;
  const auth = ['--requirepass', 'data-pass-91c4', '--masterauth', 'data-pass-91c4'];
  const env = (): Record<string, string> => ({
    ...sites.env(),
    ...COMMON,
    REDIS_SENTINELS: `127.0.0.1:${SENTINEL_PORT}`,
    REDIS_SENTINEL_NAME: 'phonerep-primary',
    REDIS_SENTINEL_PASSWORD: 'sentinel-pass-3a7f',
    REDIS_PASSWORD: 'data-pass-91c4',
  });

  beforeAll(async () => {
    nodes.push(await startRedisServer(PRIMARY_PORT, auth));
    const replica = await startRedisServer(REPLICA_PORT, [...auth, '--replicaof', '127.0.0.1', String(PRIMARY_PORT)]);
    nodes.push(replica);
    await waitFor(() => /MASTER <-> REPLICA sync: Finished with success/.test(replica.output()), 15_000);
    nodes.push(
      await startRedisSentinel(SENTINEL_PORT, {
        name: 'phonerep-primary',
        primaryPort: PRIMARY_PORT,
        requirepass: 'sentinel-pass-3a7f',
        primaryPassword: 'data-pass-91c4',
      }),
    );
    primary = inspect(
      new Redis({ port: PRIMARY_PORT, host: '127.0.0.1', password: 'data-pass-91c4', maxRetriesPerRequest: 1 }),
    );
    sentinel = inspect(
      new Redis({
        port: SENTINEL_PORT,
        host: '127.0.0.1',
        password: 'sentinel-pass-3a7f',
        maxRetriesPerRequest: 1,
      }),
    );
  });
  afterAll(async () => {
    await stopServer(server);
    primary.disconnect();
    sentinel.disconnect();
    for (const node of nodes) await node.stop();
  });

  it('serves the lists and the cache on the primary the sentinel names', async () => {
    server = await spawnServer(env());
    await expectListsAndCacheOn(server, primary, '+33163000002');
    await server.printed(
      new RegExp(`Redis primary phonerep-primary through sentinels 127\\.0\\.0\\.1:${SENTINEL_PORT}`),
    );
  });

  it('follows a failover: writes go to the new primary, a refused one says when to retry, lookups go on', async () => {
    if (server === undefined) throw new Error('the service did not start');
    const running = server;
    // The sentinel knows the replica (and it is in sync) before it is asked to promote it.
    await waitFor(async () => {
      const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', 'phonerep-primary')) as string[][];
      return replicas.some(
        (fields) => fields.join(' ').includes(`port ${REPLICA_PORT}`) && !fields.join(' ').includes('s_down'),
      );
    }, 20_000);
    const lookupStatuses: number[] = [];
    let looking = true;
    const lookups = (async () => {
      while (looking) {
        const response = await fetch(`${running.baseUrl}/api/phone/0612345678/verdict`);
        await response.arrayBuffer();
        lookupStatuses.push(response.status);
      }
    })();
    try {
      await sentinel.call('SENTINEL', 'FAILOVER', 'phonerep-primary');
      await waitFor(async () => {
        const address = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'phonerep-primary')) as string[];
        return address[1] === String(REPLICA_PORT);
      }, 20_000);
      // A manual failover leaves the old primary writable until the sentinel demotes it (a write
      // there then would be Redis' loss, not the service's): the writes below start once it is a
      // replica, so one that reaches it is refused READONLY and must be sent again to the new one.
      await waitFor(async () => ((await primary.call('ROLE')) as string[])[0] === 'slave', 20_000);
      // Until the connection has moved, a write is refused (503 with Retry-After) or goes to the new primary.
      const refusals: Array<string | null> = [];
      await waitFor(async () => {
        const { status, retryAfter } = await putRule(running, '+33163000003');
        if (status === 503) refusals.push(retryAfter);
        else expect([200, 201]).toContain(status);
        return status !== 503;
      }, 20_000);
      for (const retryAfter of refusals) expect(retryAfter).toMatch(/^\d+$/);
    } finally {
      looking = false;
      await lookups;
    }
    expect(lookupStatuses.length).toBeGreaterThan(0);
    expect(lookupStatuses.filter((status) => status !== 200)).toEqual([]);
    // Both rules, the one before and the one after, are on the new primary.
    const promoted = inspect(
      new Redis({
        port: REPLICA_PORT,
        host: '127.0.0.1',
        password: 'data-pass-91c4',
        maxRetriesPerRequest: 1,
      }),
    );
    try {
      expect(((await promoted.call('ROLE')) as string[])[0]).toBe('master');
      const rules = (await (await fetch(`${running.baseUrl}/admin/lists/rules`, { headers: BEARER })).json()) as Array<{
        rule: string;
      }>;
      expect(rules.map((entry) => entry.rule)).toEqual(expect.arrayContaining(['+33163000002', '+33163000003']));
      const listKeys = (await promoted.keys(`${PREFIX}*`)).filter((key) => key.includes('lists'));
      const dump = (
        await Promise.all(
          listKeys.map((key) => promoted.type(key).then((type) => (type === 'hash' ? promoted.hkeys(key) : []))),
        )
      ).flat();
      expect(dump).toEqual(expect.arrayContaining(['+33163000002', '+33163000003']));
      // Every connection of the service followed: its stream readers and subscriber are on the
      // new primary, and none is left on the old one.
      const named = async (node: Redis): Promise<string[]> =>
        ((await node.call('CLIENT', 'LIST')) as string)
          .split('\n')
          .flatMap((line) => /\bname=(phonerep-[a-z-]+)/.exec(line)?.[1] ?? []);
      const readers = ['phonerep-lists-reader', 'phonerep-reports-reader', 'phonerep-tokens-subscriber'];
      await waitFor(async () => {
        const names = await named(promoted);
        return readers.every((name) => names.includes(name));
      }, 15_000).catch(() => undefined);
      expect((await named(promoted)).sort()).toEqual(expect.arrayContaining(readers));
      await waitFor(async () => (await named(primary)).length === 0, 15_000).catch(() => undefined);
      expect(await named(primary)).toEqual([]);
    } finally {
      promoted.disconnect();
    }
    await waitFor(async () => (await redisReadiness(running)) === 'ok', 10_000);
    await stopServer(server);
  });

  it('stops the start on a sentinel password the sentinel refuses, naming REDIS_SENTINEL_PASSWORD', async () => {
    const { code, output } = await startUpFailure({ ...env(), REDIS_SENTINEL_PASSWORD: 'wrong-sentinel-pass-12' });
    expect(code).toBe(1);
    expect(output).toContain('the sentinels refused the login: check REDIS_SENTINEL_PASSWORD');
    expect(output).not.toContain('wrong-sentinel-pass-12');
    expect(output).not.toContain('data-pass-91c4');
  });
});

describe('TLS (rediss:// and REDIS_TLS_CA)', () => {
  let redis: RedisNode;
  let admin: Redis;
  let server: ServerProcess | undefined;
  const tls = makeTlsMaterial();

  beforeAll(async () => {
    redis = await startRedisServer(0, [
      '--tls-port',
      String(TLS_PORT),
      '--tls-cert-file',
      tls.certFile,
      '--tls-key-file',
      tls.keyFile,
      '--tls-ca-cert-file',
      tls.caFile,
      '--tls-auth-clients',
      'no',
    ]);
    admin = inspect(
      new Redis(`rediss://127.0.0.1:${TLS_PORT}`, {
        tls: { ca: (await import('node:fs')).readFileSync(tls.caFile, 'utf8') },
        maxRetriesPerRequest: 1,
      }),
    );
  });
  afterAll(async () => {
    await stopServer(server);
    admin.disconnect();
    await redis.stop();
  });

  it('serves the lists and the cache over TLS, trusting the authority REDIS_TLS_CA names', async () => {
    server = await spawnServer({
      ...sites.env(),
      ...COMMON,
      REDIS_URL: `rediss://127.0.0.1:${TLS_PORT}`,
      REDIS_TLS_CA: tls.caFile,
    });
    await expectListsAndCacheOn(server, admin, '+33163000004');
    await stopServer(server);
  });

  it('finds the primary through a sentinel on TLS, with REDIS_TLS_CA alone turning TLS on for both', async () => {
    // What the test before wrote is gone, so what is found below is this instance's.
    const before = await keysOn(admin);
    if (before.length > 0) await admin.del(...before);
    const sentinel = await startRedisSentinel(TLS_SENTINEL_PORT, { name: 'phonerep-tls', primaryPort: TLS_PORT, tls });
    try {
      server = await spawnServer({
        ...sites.env(),
        ...COMMON,
        REDIS_SENTINELS: `127.0.0.1:${TLS_SENTINEL_PORT}`,
        REDIS_SENTINEL_NAME: 'phonerep-tls',
        REDIS_TLS_CA: tls.caFile,
      });
      await expectListsAndCacheOn(server, admin, '+33163000005');
      await server.printed(/Redis primary phonerep-tls through sentinels [^ ]+ \(TLS\)/);
      await stopServer(server);
    } finally {
      await sentinel.stop();
    }
  });

  it('stops the start when Redis’ certificate is not trusted, naming REDIS_TLS_CA', async () => {
    const { code, output } = await startUpFailure({ ...COMMON, REDIS_URL: `rediss://127.0.0.1:${TLS_PORT}` });
    expect(code).toBe(1);
    expect(output).toContain('REDIS_TLS_CA');
  });
});
