// Which store holds the lists: Redis when REDIS_URL is set (every instance shares them), else
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

/** Where the lists are, from the configuration (LISTS_FILE resolved to its default by the caller). */
export interface ListsLocation {
  listsFile: string;
  /** LISTS_FILE was set: with Redis, the file mirrors every change. */
  listsFileSet?: boolean;
  redisUrl?: string | undefined;
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

export async function openListStore(location: ListsLocation, options: OpenListStoreOptions): Promise<ListStore> {
  const path = location.listsFile;
  const common = {
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }),
    watch: options.watch,
  };
  if (location.redisUrl !== undefined) {
    const owned = options.redisClient === undefined;
    const client =
      options.redisClient ??
      createRedisClient(location.redisUrl, {
        keyPrefix: location.redisKeyPrefix,
        ...(location.redisCommandTimeoutMs === undefined ? {} : { commandTimeoutMs: location.redisCommandTimeoutMs }),
      });
    try {
      return await openRedisListStore({
        client,
        ownsClient: owned,
        file: { path, context: options.context, mirror: location.listsFileSet === true },
        ...common,
      });
    } catch (error) {
      if (owned) await client.quit();
      throw error;
    }
  }
  return openFileListStore({
    path,
    context: options.context,
    ...common,
    ...(options.hashKey === undefined ? {} : { hashKey: options.hashKey }),
  });
}
