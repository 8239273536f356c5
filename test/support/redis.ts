// Real Redis for tests: every test file works under its own random key prefix and deletes its
// keys afterwards, so files run in parallel (and other projects' keys) never interfere.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, expect } from 'vitest';
import { createRedisClient, type RedisClient } from '../../src/infra/redis/redis-client.js';
import type { TcpProxy } from '../../harness/loopback.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function uniqueKeyPrefix(label: string): string {
  return `test:${label}:${randomBytes(5).toString('hex')}:`;
}

/** A plain connection without prefix, for inspecting and cleaning what the code under test wrote. */
export function connectAdmin(): Redis {
  return new Redis(TEST_REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

export async function listKeys(admin: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

export async function deleteKeys(admin: Redis, prefix: string): Promise<void> {
  const keys = await listKeys(admin, prefix);
  if (keys.length > 0) await admin.del(...keys);
}

/**
 * Records the commands the code under test sends on `client`'s connection (the client's own
 * health-probe PING excluded), so a test can say "Redis saw no command" instead of timing it.
 */
export function recordCommands(client: RedisClient): { names: () => string[]; clear: () => void } {
  const names: string[] = [];
  const send = client.redis.sendCommand.bind(client.redis);
  client.redis.sendCommand = (command, stream) => {
    if (command.name.toLowerCase() !== 'ping') names.push(command.name.toLowerCase());
    return send(command, stream);
  };
  return { names: () => [...names], clear: () => void names.splice(0) };
}

/** Resolves when `check` holds, polling every 20 ms; rejects after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The usual set-up of a Redis test file: a random key prefix, an admin connection, and
 * `readyClient()` for clients under that prefix (ready when the URL is the test Redis). Every
 * client is quit and every key deleted after the file's tests.
 */
export function useRedisTestClients(label: string): {
  prefix: string;
  admin: Redis;
  readyClient: (url?: string) => Promise<RedisClient>;
} {
  const prefix = uniqueKeyPrefix(label);
  const admin = connectAdmin();
  const clients: RedisClient[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });
  return {
    prefix,
    admin,
    readyClient: async (url = TEST_REDIS_URL) => {
      const client = createRedisClient(url, { keyPrefix: prefix });
      clients.push(client);
      if (url === TEST_REDIS_URL) await waitFor(() => client.isReady());
      return client;
    },
  };
}

/**
 * A count kept in Redis (budget, rate limit) of 30 per window, through an outage mid-window:
 * 20 granted while Redis is up; with Redis cut, memory starts from the 20 Redis last reported
 * and grants only 10 more; once Redis is back (it holds 20, memory 30) none. `attempt` asks
 * for one unit and says whether it was granted.
 */
export async function expectCountKeptThroughOutage(
  proxy: TcpProxy,
  client: RedisClient,
  attempt: () => Promise<boolean>,
): Promise<void> {
  const granted = async (times: number): Promise<number> => {
    let count = 0;
    for (let i = 0; i < times; i += 1) if (await attempt()) count += 1;
    return count;
  };
  expect(await granted(20)).toBe(20);
  proxy.setMode('cut');
  await waitFor(() => client.health() === 'degraded');
  expect(await granted(30)).toBe(10);
  proxy.setMode('pass');
  await waitFor(() => client.isReady(), 8000);
  expect(await granted(30)).toBe(0);
}
