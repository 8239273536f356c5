// Which store holds the lists: Redis when REDIS_URL is set (every instance shares them), else
// the file (LISTS_FILE or its default, config.ts's defaultListsFile). The service and the CLI
// both open it here, so they always agree on where the rules are.
import { readFile } from 'node:fs/promises';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import { ListCsvError } from '../../domain/lists/list-csv.js';
import { ListsFileError, openFileListStore } from './file-list-store.js';
import { openRedisListStore } from './redis-list-store.js';
import { readListCsvInSlices, type ListStore, type ListStoreLogger } from './list-store.js';

/** Where the lists are, from the configuration (LISTS_FILE resolved to its default by the caller). */
export interface ListsLocation {
  listsFile: string;
  redisUrl?: string | undefined;
  redisKeyPrefix: string;
}

/** The rules of the lists file, or none when it does not exist; a file that does not parse is a ListsFileError naming it. */
export async function readListsFile(path: string, context: RuleContext, hashKey?: KeyedHasher): Promise<ListRule[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  try {
    return await readListCsvInSlices(text, { context, trustNormalForm: true });
  } catch (error) {
    if (!(error instanceof ListCsvError)) throw error;
    const reason = error.rule === undefined || error.rule === '' || hashKey === undefined ? error.reason : error.reason.split(JSON.stringify(error.rule)).join(`rule hashed ${hashKey(error.rule)}`);
    throw new ListsFileError(path, error.line, reason);
  }
}

export interface OpenListStoreOptions {
  context: RuleContext;
  logger?: ListStoreLogger;
  /** Hashes a refused rule of the file for the logs (the service's keyed hash). */
  hashKey?: KeyedHasher;
  /** Follow changes made elsewhere (the service: true; a CLI command: false). */
  watch: boolean;
  onChange?: () => void;
}

export async function openListStore(location: ListsLocation, options: OpenListStoreOptions): Promise<ListStore> {
  const path = location.listsFile;
  const common = { ...(options.logger === undefined ? {} : { logger: options.logger }), ...(options.onChange === undefined ? {} : { onChange: options.onChange }), watch: options.watch };
  if (location.redisUrl !== undefined) {
    return openRedisListStore({ url: location.redisUrl, keyPrefix: location.redisKeyPrefix, seed: () => readListsFile(path, options.context, options.hashKey), ...common });
  }
  return openFileListStore({ path, context: options.context, ...common, ...(options.hashKey === undefined ? {} : { hashKey: options.hashKey }) });
}
