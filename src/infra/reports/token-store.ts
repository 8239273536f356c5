// The reporters' tokens (docs/reports.md, "Tokens"), kept where the lists are kept: with
// REDIS_URL in Redis, else in a file beside the lists file. Only a token's record and the SHA-256
// of its secret are stored; the secret is shown once, by `create`, and never again.
//
// Every instance holds the tokens in memory (a few dozen records: one per phone, PBX or CRM),
// so `anyInForce` is synchronous and `authenticate` costs no round trip. It compares the hash of
// the secret given with every token's in constant time (timingSafeEqual, no early exit).
// A use is noted as lastUsedAt rounded down to the hour, written at most once an hour per token.
//
// - File (`dirname(LISTS_FILE)/tokens.json`, JSON a person can read): every change is made under
//   the lists' lock discipline (takeLock on `tokens.json.lock`), on the file as it is then, and
//   written atomically (writeFileAtomically, mode 0600). Changes by another process (the CLI
//   creating a token while the service runs) are seen by fs.watch on the directory and, where
//   that says nothing, by a read every POLL_MS (file-list-store.ts does the same for the lists).
// - Redis (hash `{tokens}:records` under REDIS_KEY_PREFIX, field the id, value the record with its
//   hash as JSON): each change is one script that also PUBLISHes the token's id on
//   `<prefix>{tokens}:changed`; every instance subscribes (a connection of its own, duplicated from
//   the shared client's options) and reads the hash again on a message, and after every
//   (re)subscription, so a change made while it was cut off is not missed.
//   While Redis is not connected, `authenticate` throws ReportStoreUnavailable (a 503), never
//   null (a 401): a token revoked during the outage could not be told from one in force, and
//   the vote could not be recorded anyway.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import {
  checkNewToken,
  hashTokenSecret,
  inForce,
  lastUsedAtToWrite,
  makeToken,
  publicToken,
  readStoredToken,
  type RandomBytes,
  type StoredToken,
  type TokenProblem,
} from '../../domain/reports/tokens.js';
import { ReportStoreUnavailable, type ReporterToken, type ReporterTokens } from '../../domain/ports/caller-reports.js';
import { POLL_MS, readListsFile, takeLock, writeFileAtomically } from '../lists/file-list-store.js';
import { createSerialReloader, type ListStoreLogger } from '../lists/list-store.js';
import { openOnRedis, type ListsLocation } from '../lists/open-list-store.js';
import { redisReadyWithin, type RedisClient } from '../redis/redis-client.js';
import { CHANNELS, TOKENS_KEYS } from '../redis/keys.js';
import { ensureTaggedKeys } from '../redis/redis-key-migration.js';
import { watchFileWithPoll, type FileWatch } from '../watch-file.js';
import { awaitReplicaCopy } from '../redis/replica-copy.js';

export const TOKENS_FILE_NAME = 'tokens.json';
/** The Redis hash of the tokens (under REDIS_KEY_PREFIX; redis/keys.ts). */
export const TOKENS_KEY = TOKENS_KEYS.records;
/** The channel a change is announced on, after REDIS_KEY_PREFIX (channels take no key prefix of their own). */
export const TOKENS_CHANNEL = CHANNELS.tokens;
const FILE_FORMAT = 'phone-rep-tokens';
const FILE_VERSION = 1;
/** After a failed read of Redis, the next try. */
const RETRY_MS = 1000;

/** The tokens file beside the lists file (the lists' own path, not a link's target: what the operator named). */
export function tokensFileOf(listsFile: string): string {
  return join(dirname(listsFile), TOKENS_FILE_NAME);
}

export interface TokenStore extends ReporterTokens {
  readonly kind: 'file' | 'redis';
  /** The file's path, or the Redis hash's key (prefix included). */
  readonly location: string;
  /** Adds a token; resolves with its secret (to be shown once) and its record. Throws TokenInputError on a bad label or expiry. */
  create(input: { label: string; expiresAt?: string }, now?: number): Promise<{ secret: string; token: ReporterToken }>;
  /** Every token held, revoked and expired ones included, oldest first; never a secret nor a hash. */
  list(): ReporterToken[];
  /** How many tokens are in force at `now`. */
  countInForce(now?: number): number;
  /** Revokes the token; false when there is no such token. Revoking twice keeps the first revokedAt. */
  revoke(id: string, now?: number): Promise<boolean>;
  /** Reads the store again, once this instance's uses noted so far are written. */
  refresh(): Promise<void>;
  /** Every token held with its hash (a backup: a restored token works again for the phone holding its secret). */
  storedTokens(): StoredToken[];
  /**
   * Makes the tokens exactly these, in one change every instance follows (a restore); resolves
   * with how many were held before. Throws ReportStoreUnavailable when the store cannot be written.
   */
  replaceAll(tokens: readonly StoredToken[]): Promise<{ before: number }>;
  close(): Promise<void>;
}

/** A label or an expiry refused (nothing stored): `field` is `label` or `expiresAt`. */
export class TokenInputError extends Error {
  override name = 'TokenInputError';
  constructor(readonly problem: TokenProblem) {
    super(`${problem.field}: ${problem.reason}`);
  }
}

/** The tokens file does not parse: the start stops with it, as with the lists file. */
export class TokensFileError extends Error {
  override name = 'TokensFileError';
}

export interface TokenStoreOptions {
  /** Follow changes made elsewhere (the service: true; a CLI command: false). */
  watch: boolean;
  logger?: ListStoreLogger;
  /** Called after the tokens held changed (a change here, or one seen made elsewhere). */
  onChange?: () => void;
  /** The randomness of secrets and ids (tests); crypto.randomBytes by default. */
  random?: RandomBytes;
  /** The service's shared Redis client (its key prefix is the location's); the CLI opens its own. */
  redisClient?: RedisClient;
  /** How long opening waits for Redis before it starts with no token (default 2 s). */
  connectWaitMs?: number;
}

/** What the two stores differ in: where the records are, and how a change is made there. */
interface TokenBackend {
  readonly kind: 'file' | 'redis';
  readonly location: string;
  /** Throws ReportStoreUnavailable when the tokens held may not be the store's (Redis not connected). */
  checkAvailable(): void;
  readAll(): Promise<StoredToken[]>;
  /** False when the id is taken (then nothing is stored). */
  add(token: StoredToken): Promise<boolean>;
  /** False when there is no such token. */
  revoke(id: string, revokedAt: string): Promise<boolean>;
  touch(id: string, lastUsedAt: string): Promise<void>;
  /** Puts these tokens in place of every token; how many the store held before. */
  replaceAll(tokens: readonly StoredToken[]): Promise<number>;
}

interface Held {
  token: StoredToken;
  hash: Buffer;
}

function createTokenStore(
  backend: TokenBackend,
  options: TokenStoreOptions,
  closeBackend: () => Promise<void>,
): TokenStore & { reload(): Promise<void>; readFirst(): Promise<void> } {
  const random = options.random ?? ((size: number) => randomBytes(size));
  const { logger } = options;
  let held: Held[] = [];
  let heldText = '[]';
  let closed = false;
  const touches = new Set<Promise<void>>();

  /** Holds `tokens` from now on; onChange only when they differ from those held (a read of an unchanged store is no change). */
  function swap(tokens: StoredToken[], notify = true): void {
    const sorted = [...tokens].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
    );
    const text = JSON.stringify(sorted);
    if (text === heldText) return;
    held = sorted.map((token) => ({ token, hash: Buffer.from(token.hash, 'hex') }));
    heldText = text;
    if (notify) options.onChange?.();
  }

  /**
   * The tokens read from the store, each keeping a later use this process noted (authenticate
   * notes it in memory at once and writes it behind the answer): a reload of what was read
   * before that write landed must not take the use back.
   */
  function keepingUsesNotedHere(read: StoredToken[]): StoredToken[] {
    const noted = new Map(held.map((entry) => [entry.token.id, entry.token.lastUsedAt]));
    return read.map((token) => {
      const here = noted.get(token.id);
      return here !== undefined && lastUsedAtAfter(token, here) ? { ...token, lastUsedAt: here } : token;
    });
  }

  // A failed read is logged once (the file's poll would repeat it every second), and on Redis
  // tried again a second later: the subscription may come back before the shared connection,
  // and a change made meanwhile would otherwise wait for the next one to be seen.
  let failure: string | undefined;
  let retry: NodeJS.Timeout | undefined;
  const reloader = createSerialReloader(
    async () => {
      try {
        swap(keepingUsesNotedHere(await backend.readAll()));
        if (failure !== undefined) logger?.info({ tokens: 'read' }, 'tokens: the store is read again');
        failure = undefined;
      } catch (error) {
        const message = (error instanceof Error ? error.message : String(error)).slice(0, 200);
        if (message !== failure)
          logger?.error(
            { tokens: 'unread', err: message },
            'tokens: the store could not be read; the tokens held stay',
          );
        failure = message;
        if (backend.kind === 'redis' && retry === undefined && !closed) {
          retry = setTimeout(() => {
            retry = undefined;
            void reloader.reload();
          }, RETRY_MS);
          retry.unref();
        }
      }
    },
    () => closed,
  );

  /** Applies a change made in the store here at once, then reads the store again (a change made elsewhere meanwhile). */
  async function afterChange(apply: (tokens: StoredToken[]) => StoredToken[]): Promise<void> {
    swap(apply(held.map((entry) => entry.token)));
    await reloader.reload();
  }

  return {
    kind: backend.kind,
    location: backend.location,
    anyInForce(now = Date.now()) {
      return held.some((entry) => inForce(entry.token, now));
    },
    countInForce(now = Date.now()) {
      return held.filter((entry) => inForce(entry.token, now)).length;
    },
    async authenticate(secret, now = Date.now()) {
      backend.checkAvailable();
      const given = Buffer.from(hashTokenSecret(secret), 'hex');
      let found: StoredToken | undefined;
      // Every token compared, whichever matches: the time taken says nothing of which one did.
      for (const entry of held) if (timingSafeEqual(entry.hash, given) && found === undefined) found = entry.token;
      if (found === undefined || !inForce(found, now)) return null;
      const hour = lastUsedAtToWrite(found, now);
      if (hour === undefined) return publicToken(found);
      const used: StoredToken = { ...found, lastUsedAt: hour };
      const id = found.id;
      // Noted here at once, so the other uses of this hour write nothing. Written behind the
      // answer (a report never waits on the tokens file's lock); a failed write is only logged.
      swap(
        held.map((entry) => (entry.token.id === id ? used : entry.token)),
        false,
      );
      const touch = backend
        .touch(id, hour)
        .catch((error: unknown) =>
          logger?.warn(
            { tokens: 'use not noted', err: (error instanceof Error ? error.message : String(error)).slice(0, 200) },
            'tokens: a token’s last use could not be written',
          ),
        );
      touches.add(touch);
      void touch.finally(() => touches.delete(touch));
      return publicToken(used);
    },
    async create(input, now = Date.now()) {
      const checked = checkNewToken(input, now);
      if (!checked.ok) throw new TokenInputError(checked.problem);
      for (let attempt = 1; ; attempt += 1) {
        const made = makeToken(checked.value, now, random);
        if (await backend.add(made.token)) {
          await afterChange((tokens) => [...tokens, made.token]);
          return { secret: made.secret, token: publicToken(made.token) };
        }
        // 40 random bits taken already: try another id.
        if (attempt === 5) throw new ReportStoreUnavailable('tokens: no free id found; try again');
      }
    },
    list() {
      return held.map((entry) => publicToken(entry.token));
    },
    async revoke(id, now = Date.now()) {
      const revokedAt = new Date(now).toISOString();
      if (!(await backend.revoke(id, revokedAt))) return false;
      await afterChange((tokens) =>
        tokens.map((token) => (token.id === id && token.revokedAt === undefined ? { ...token, revokedAt } : token)),
      );
      return true;
    },
    async refresh() {
      await Promise.all([...touches]);
      await reloader.reload();
    },
    storedTokens: () => held.map((entry) => ({ ...entry.token })),
    async replaceAll(tokens) {
      await Promise.all([...touches]);
      const before = await backend.replaceAll(tokens);
      await afterChange(() => [...tokens]);
      return { before };
    },
    reload: () => reloader.reload(),
    /** The first read, whose failure is the caller's (a file that does not parse stops the start). */
    async readFirst() {
      swap(keepingUsesNotedHere(await backend.readAll()));
    },
    async close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      await reloader.running();
      await Promise.all([...touches]);
      await closeBackend();
    },
  };
}

// ---- The file

interface TokensFile {
  format: typeof FILE_FORMAT;
  version: typeof FILE_VERSION;
  tokens: StoredToken[];
}

/** The tokens of the file's text; throws TokensFileError naming what is wrong. */
function readTokensText(path: string, text: string): StoredToken[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TokensFileError(`the tokens file ${path} is not JSON: ${(error as Error).message}`);
  }
  const file = value as Partial<TokensFile> | null;
  if (file === null || typeof file !== 'object' || file.format !== FILE_FORMAT || file.version !== FILE_VERSION)
    throw new TokensFileError(
      `the tokens file ${path} is not a phone-rep tokens file of version ${FILE_VERSION} ({"format":"${FILE_FORMAT}","version":${FILE_VERSION},"tokens":[…]})`,
    );
  if (!Array.isArray(file.tokens)) throw new TokensFileError(`the tokens file ${path} holds no "tokens" array`);
  return file.tokens.map((entry: unknown, at) => {
    const token = readStoredToken(entry);
    if (token === undefined)
      throw new TokensFileError(`the tokens file ${path}: token ${at + 1} is not a token record`);
    return token;
  });
}

async function readTokensFile(path: string): Promise<StoredToken[]> {
  const { text, signature } = await readListsFile(path);
  return signature === 'absent' ? [] : readTokensText(path, text);
}

function formatTokensFile(tokens: readonly StoredToken[]): string {
  const file: TokensFile = { format: FILE_FORMAT, version: FILE_VERSION, tokens: [...tokens] };
  return `${JSON.stringify(file, null, 2)}\n`;
}

export async function openFileTokenStore(path: string, options: TokenStoreOptions): Promise<TokenStore> {
  const lockPath = `${path}.lock`;

  /** Runs a change under the lock on the file as it is now; writes it when `change` says it changed. */
  async function write<T>(change: (tokens: StoredToken[]) => { result: T; next?: StoredToken[] }): Promise<T> {
    let lock;
    try {
      lock = await takeLock(lockPath);
    } catch (error) {
      throw new ReportStoreUnavailable(`the tokens file cannot be locked: ${(error as Error).message}`);
    }
    try {
      let current: StoredToken[];
      try {
        current = await readTokensFile(path);
      } catch (error) {
        throw new ReportStoreUnavailable(
          error instanceof TokensFileError
            ? `${error.message}; fix it before changing the tokens`
            : `the tokens file cannot be read: ${(error as Error).message}`,
        );
      }
      const { result, next } = change(current);
      if (next !== undefined) {
        try {
          await writeFileAtomically(path, formatTokensFile(next), { mode: 0o600 });
        } catch (error) {
          throw new ReportStoreUnavailable(`the tokens file cannot be written (${path}): ${(error as Error).message}`);
        }
      }
      return result;
    } finally {
      await lock.release();
    }
  }

  const backend: TokenBackend = {
    kind: 'file',
    location: path,
    checkAvailable: () => undefined,
    readAll: () => readTokensFile(path),
    add: (token) =>
      write((tokens) =>
        tokens.some((other) => other.id === token.id) ? { result: false } : { result: true, next: [...tokens, token] },
      ),
    revoke: (id, revokedAt) =>
      write((tokens) => {
        const token = tokens.find((other) => other.id === id);
        if (token === undefined) return { result: false };
        if (token.revokedAt !== undefined) return { result: true };
        return { result: true, next: tokens.map((other) => (other === token ? { ...token, revokedAt } : other)) };
      }),
    touch: (id, lastUsedAt) =>
      write((tokens) => {
        const token = tokens.find((other) => other.id === id);
        if (token === undefined || lastUsedAtAfter(token, lastUsedAt) === false) return { result: undefined };
        return { result: undefined, next: tokens.map((other) => (other === token ? { ...token, lastUsedAt } : other)) };
      }),
    // The file as it is then, under the lock: replaced whole by one atomic write.
    replaceAll: (replacement) => write((tokens) => ({ result: tokens.length, next: [...replacement] })),
  };

  let watching: FileWatch | undefined;
  const store = createTokenStore(backend, options, async () => {
    watching?.close();
  });
  // The first read: a file that does not parse stops the start (its tokens would silently stop working).
  try {
    await store.readFirst();
  } catch (error) {
    if (error instanceof TokensFileError) throw error;
    throw new TokensFileError(`the tokens file ${path} cannot be read: ${(error as Error).message}`);
  }
  if (options.watch) watching = watchFileWithPoll(path, () => store.reload(), POLL_MS);
  return store;
}

/** Whether `lastUsedAt` is later than the one the token holds (ISO 8601 of toISOString: ordered as text). */
function lastUsedAtAfter(token: StoredToken, lastUsedAt: string): boolean {
  return token.lastUsedAt === undefined || token.lastUsedAt < lastUsedAt;
}

// ---- Redis

// Each change in one script, with its announcement: no instance hears of a change not made.
const ADD_LUA = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1`;
const REVOKE_LUA = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local token = cjson.decode(value)
if token.revokedAt == nil then
  token.revokedAt = ARGV[2]
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(token))
  redis.call('PUBLISH', ARGV[3], ARGV[1])
end
return 1`;
const TOUCH_LUA = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local token = cjson.decode(value)
if token.lastUsedAt ~= nil and token.lastUsedAt >= ARGV[2] then return 0 end
token.lastUsedAt = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(token))
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1`;

// The hash replaced whole (ARGV: the channel, then id and record pairs): one change, announced once.
const REPLACE_LUA = `
local before = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1])
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('PUBLISH', ARGV[1], 'restore')
return before`;

export async function openRedisTokenStore(
  client: RedisClient,
  options: TokenStoreOptions & { ownsClient: boolean },
): Promise<TokenStore> {
  const channel = `${client.keyPrefix}${TOKENS_CHANNEL}`;
  const stop = new AbortController();

  async function run<T>(what: string, op: (redis: Redis) => Promise<T>): Promise<T> {
    if (client.redis.status !== 'ready')
      throw new ReportStoreUnavailable(`the tokens could not be ${what} in Redis: Redis is not reachable`);
    try {
      // Once per client: the keys of the layout before hash tags moved first (redis-key-migration.ts).
      await ensureTaggedKeys(client, options.logger);
      return await op(client.redis);
    } catch (error) {
      client.reportFailure(error);
      throw new ReportStoreUnavailable(`the tokens could not be ${what} in Redis: ${(error as Error).message}`);
    }
  }

  /** A token created, revoked or restored: acknowledged once a replica holds it, when the primary has replicas (replica-copy.ts). */
  async function copied<T>(result: T): Promise<T> {
    try {
      await awaitReplicaCopy(client.redis);
    } catch (error) {
      throw new ReportStoreUnavailable(`the tokens' change is not yet on a Redis replica: ${(error as Error).message}`);
    }
    return result;
  }

  const backend: TokenBackend = {
    kind: 'redis',
    location: `${client.keyPrefix}${TOKENS_KEY}`,
    checkAvailable() {
      if (client.redis.status !== 'ready')
        throw new ReportStoreUnavailable('the tokens cannot be checked: Redis is not reachable');
    },
    async readAll() {
      const fields = await run('read', (redis) => redis.hgetall(TOKENS_KEY));
      const tokens: StoredToken[] = [];
      for (const value of Object.values(fields)) {
        let token: StoredToken | undefined;
        try {
          token = readStoredToken(JSON.parse(value));
        } catch {
          token = undefined;
        }
        if (token === undefined)
          options.logger?.warn({ tokens: 'refused' }, 'tokens: a field of the tokens hash is not a token; left out');
        else tokens.push(token);
      }
      return tokens;
    },
    async add(token) {
      return (
        Number(
          await copied(
            await run('written', (redis) =>
              redis.eval(ADD_LUA, 1, TOKENS_KEY, token.id, JSON.stringify(token), channel),
            ),
          ),
        ) === 1
      );
    },
    async revoke(id, revokedAt) {
      return (
        Number(
          await copied(await run('written', (redis) => redis.eval(REVOKE_LUA, 1, TOKENS_KEY, id, revokedAt, channel))),
        ) === 1
      );
    },
    async touch(id, lastUsedAt) {
      await run('written', (redis) => redis.eval(TOUCH_LUA, 1, TOKENS_KEY, id, lastUsedAt, channel));
    },
    async replaceAll(tokens) {
      const pairs = tokens.flatMap((token) => [token.id, JSON.stringify(token)]);
      return Number(
        await copied(await run('written', (redis) => redis.eval(REPLACE_LUA, 1, TOKENS_KEY, channel, ...pairs))),
      );
    },
  };

  let subscriber: Redis | undefined;
  const store = createTokenStore(backend, options, async () => {
    stop.abort();
    subscriber?.disconnect();
    if (options.ownsClient) await client.quit();
  });

  // Opening: wait a little for Redis, as the lists do. Down at start does not stop the service:
  // no token is held (reports are refused with 503 meanwhile) until Redis answers.
  if (await redisReadyWithin(client.redis, options.connectWaitMs ?? 2000, stop.signal)) {
    try {
      await store.readFirst();
    } catch (error) {
      if (!options.watch) {
        await store.close();
        throw error;
      }
      options.logger?.error(
        { tokens: 'unread', err: (error instanceof Error ? error.message : String(error)).slice(0, 200) },
        'tokens: the tokens could not be read from Redis at start; reports are refused (503) until they are',
      );
    }
  } else if (!options.watch) {
    await store.close();
    throw new ReportStoreUnavailable('the tokens could not be read: Redis is not reachable');
  } else {
    options.logger?.error(
      { tokens: 'unreadable' },
      'tokens: Redis cannot be reached at start; reports are refused (503) until it answers',
    );
  }

  if (options.watch) {
    // A connection of its own: a subscribed connection takes no other command.
    const listener = client.redis.duplicate({
      commandTimeout: undefined,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      lazyConnect: true,
      connectionName: 'phonerep-tokens-subscriber',
    });
    subscriber = listener;
    listener.on('error', () => undefined); // the shared client logs Redis' outages
    listener.on('message', (from: string) => {
      if (from === channel) void store.reload();
    });
    // On every (re)connection: subscribed first, then read, so nothing published in between is missed.
    listener.on('ready', () => {
      listener.subscribe(channel).then(
        () => void store.reload(),
        () => undefined,
      );
    });
    listener.connect().catch(() => undefined);
  }
  return store;
}

// ---- Which one

/**
 * Opens the tokens' store beside the lists' (open-list-store.ts): Redis with REDIS_URL (the
 * service's shared client, or the CLI's own, closed with the store), else the file beside the
 * lists file.
 */
export async function openTokenStore(location: ListsLocation, options: TokenStoreOptions): Promise<TokenStore> {
  if (location.redis === undefined) return openFileTokenStore(tokensFileOf(location.listsFile), options);
  return openOnRedis(location.redis, location, options.redisClient, (client, owned) =>
    openRedisTokenStore(client, { ...options, ownsClient: owned }),
  );
}
