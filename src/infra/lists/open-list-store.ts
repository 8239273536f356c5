// Which store holds the lists: Redis when REDIS_URL or REDIS_SENTINELS is set (every instance shares them), else
// the file (LISTS_FILE or its default, config.ts's defaultListsFile). The service and the CLI
// both open it here, so they always agree on where the rules are. On Redis the service passes
// its shared client; the CLI gets a client of its own, closed with the store. With LISTS_FILE
// set beside REDIS_URL the file mirrors the lists in Redis (lists-file-mirror.ts).
import type { RuleContext } from '../../domain/lists/rules.js';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import { openFileListStore } from './file-list-store.js';
import { openRedisListStore } from './redis-list-store.js';
import type { ListStore, ListStoreLogger } from './list-store.js';
import { createRedisClient, type RedisClient } from '../redis/redis-client.js';
import { refusalAdvice, type RedisConnection } from '../redis/redis-connection.js';

/** Where the lists are, from the configuration (LISTS_FILE resolved to its default by the caller). */
export interface ListsLocation {
  listsFile: string;
  /** LISTS_FILE was set: with Redis, the file mirrors every change. */
  listsFileSet?: boolean;
  /** How to reach Redis (redis-connection.ts), when the lists are there. */
  redis?: RedisConnection | undefined;
  redisKeyPrefix: string;
  redisCommandTimeoutMs?: number;
}

export interface OpenListStoreOptions {
  context: RuleContext;
  logger?: ListStoreLogger;
  /** Hashes a refused rule of the file for the logs (the service's keyed hash). */
  hashKey?: KeyedHasher;
  /** Follow changes made elsewhere (the service: true; a CLI command: false). */
  watch: boolean;
  onChange?: () => void;
  /** The service's shared Redis client (its key prefix is the location's); the CLI opens its own. */
  redisClient?: RedisClient;
}

/**
 * The client a store on the location's Redis uses: the service's shared one, else one of the
 * CLI's own (owned: the store quits it on close).
 */
export function redisClientFor(
  connection: RedisConnection,
  location: ListsLocation,
  shared: RedisClient | undefined,
): { client: RedisClient; owned: boolean } {
  if (shared !== undefined) return { client: shared, owned: false };
  const client = createRedisClient(connection, {
    keyPrefix: location.redisKeyPrefix,
    ...(location.redisCommandTimeoutMs === undefined ? {} : { commandTimeoutMs: location.redisCommandTimeoutMs }),
  });
  return { client, owned: true };
}

/** How long a client of the CLI's own waits for Redis' first answer, to tell a refused login from a Redis away. */
const FIRST_CONNECTION_WAIT_MS = 2000;

/**
 * Opens a store on the location's Redis (redisClientFor); a client of its own is quit again if it
 * does not open, and one whose login or certificate Redis refuses fails with the variables to
 * check (the service checks its shared client at start, composition.ts).
 */
export async function openOnRedis<T>(
  connection: RedisConnection,
  location: ListsLocation,
  shared: RedisClient | undefined,
  open: (client: RedisClient, owned: boolean) => Promise<T>,
): Promise<T> {
  const { client, owned } = redisClientFor(connection, location, shared);
  try {
    if (owned) {
      const first = await client.firstConnection(FIRST_CONNECTION_WAIT_MS);
      if (first.state === 'refused') throw new Error(refusalAdvice(first.refused, first.error));
    }
    return await open(client, owned);
  } catch (error) {
    if (owned) await client.quit();
    throw error;
  }
}

export async function openListStore(location: ListsLocation, options: OpenListStoreOptions): Promise<ListStore> {
  const path = location.listsFile;
  const common = {
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }),
    watch: options.watch,
  };
  if (location.redis !== undefined) {
    return openOnRedis(location.redis, location, options.redisClient, (client, owned) =>
      openRedisListStore({
        client,
        ownsClient: owned,
        file: { path, context: options.context, mirror: location.listsFileSet === true },
        ...common,
      }),
    );
  }
  return openFileListStore({
    path,
    context: options.context,
    ...common,
    ...(options.hashKey === undefined ? {} : { hashKey: options.hashKey }),
  });
}
