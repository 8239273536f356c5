// The lists in Redis (REDIS_URL): the store of record for every instance, unlike the caches,
// for which Redis is only an accelerator. Keys (under REDIS_KEY_PREFIX):
//   lists:rules    hash, rule spelling → the rule's other fields as JSON
//   lists:version  counter, incremented by every change in the same MULTI as the change
//   lists:seeded   set once the lists were first written (or the file imported)
// and the channel `<prefix>lists:changed`, on which each change is published with its new
// version. An instance that holds version v and hears of v+1 applies that one change in place;
// any other gap (a missed message, an import) makes it read the whole hash again, in slices.
// A poll of lists:version every POLL_MS catches what pub/sub missed (a reconnection), so every
// instance applies a change within a second. Changes are single HSET/HDEL commands: two
// instances adding rules at the same time lose none.
//
// The file (LISTS_FILE) is imported once, on start, only when Redis holds no rule and was never
// written (no lists:seeded): docs/lists.md.
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import { buildIndexInSlices, createLiveIndex, createSerialReloader, ListStoreUnavailable, type ListStore, type ListStoreLogger } from './list-store.js';

export const REDIS_POLL_MS = 500;
const RULES = 'lists:rules';
const VERSION = 'lists:version';
const SEEDED = 'lists:seeded';
const HSET_CHUNK = 1000;
/** How long a change heard ahead of its turn waits for the ones before it before a full read. */
const GAP_MS = 300;

export interface RedisListStoreOptions {
  url: string;
  keyPrefix: string;
  logger?: ListStoreLogger;
  /** Follow changes made by other instances (the service); the CLI reads once. Default true. */
  watch?: boolean;
  /** Rules to import once when Redis holds none and was never written (the file's). */
  seed?: () => Promise<readonly ListRule[]>;
  onChange?: () => void;
  commandTimeoutMs?: number;
}

type Stored = Omit<ListRule, 'rule'>;

function encode(rule: ListRule): string {
  const { rule: _spelling, ...rest } = rule;
  return JSON.stringify(rest);
}

function decode(spelling: string, json: string): ListRule | undefined {
  try {
    const value = JSON.parse(json) as Stored;
    if ((value.list !== 'allow' && value.list !== 'block') || typeof value.createdAt !== 'string') return undefined;
    return { rule: spelling, ...value };
  } catch {
    return undefined;
  }
}

interface ChangeMessage {
  version: number;
  op: 'put' | 'remove' | 'reload';
  rule?: string;
  value?: string;
  from: string;
}

export async function openRedisListStore(options: RedisListStoreOptions): Promise<ListStore> {
  const { logger, keyPrefix } = options;
  const channel = `${keyPrefix}lists:changed`;
  const instanceId = randomBytes(6).toString('hex');
  const redisOptions = { keyPrefix, connectTimeout: 2000, commandTimeout: options.commandTimeoutMs ?? 5000, maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: true };
  const redis = new Redis(options.url, redisOptions);
  redis.on('error', (error: Error) => logger?.warn({ err: error.message.slice(0, 200) }, 'lists: redis connection error'));
  const live = createLiveIndex();
  let loadedVersion = -1;
  let closed = false;
  // Changes heard ahead of their turn (versions arrive out of order when instances write at
  // once), applied in version order; a gap that lasts past GAP_MS makes a full read.
  const pending = new Map<number, { message: ChangeMessage; heardAt: number }>();

  // Redis down at start does not stop the service (the caches and limits fall back to memory):
  // the lists start empty, say so loudly, and are read (and the file seeded) once Redis answers,
  // ioredis reconnecting on its own.
  let reachable = true;
  try {
    await redis.connect();
  } catch (error) {
    reachable = false;
    logger?.error({ err: (error as Error).message.slice(0, 200) }, 'lists: Redis cannot be reached at start; no operator rule applies until it answers');
  }

  async function readVersion(): Promise<number> {
    return Number((await redis.get(VERSION)) ?? 0);
  }

  /** Reads the whole hash in slices and swaps the index. */
  async function loadAll(): Promise<void> {
    const version = await readVersion();
    if (version === loadedVersion) return;
    const rules: ListRule[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await redis.hscan(RULES, cursor, 'COUNT', 2000);
      cursor = next;
      for (let at = 0; at + 1 < flat.length; at += 2) {
        const rule = decode(flat[at] as string, flat[at + 1] as string);
        if (rule !== undefined) rules.push(rule);
      }
    } while (cursor !== '0');
    const { index } = await buildIndexInSlices(rules);
    live.swap(index);
    loadedVersion = version;
    for (const at of [...pending.keys()]) if (at <= version) pending.delete(at);
    drain();
    options.onChange?.();
  }

  /** Applies the pending changes that come next, in version order. */
  function drain(): void {
    for (let next = pending.get(loadedVersion + 1); next !== undefined; next = pending.get(loadedVersion + 1)) {
      if (next.message.op === 'reload') {
        void scheduleReload();
        return;
      }
      pending.delete(loadedVersion + 1);
      applyInPlace(live.current(), next.message);
      loadedVersion += 1;
    }
  }

  function applyInPlace(index: ReturnType<typeof live.current>, message: ChangeMessage): void {
    if (message.rule === undefined) return;
    if (message.op === 'put' && message.value !== undefined) {
      const rule = decode(message.rule, message.value);
      if (rule !== undefined) index.set(rule);
    } else if (message.op === 'remove') index.delete(message.rule);
  }

  /** A change heard (or made here) at its version. */
  function accept(message: ChangeMessage): void {
    if (message.version <= loadedVersion) return;
    pending.set(message.version, { message, heardAt: Date.now() });
    if (reloader.running() === undefined) drain();
    options.onChange?.();
  }

  /** One of this instance's own changes: in force here at once, then in its turn among the others'. */
  function applyOwn(message: ChangeMessage): void {
    applyInPlace(live.current(), message);
    accept(message);
  }

  const reloader = createSerialReloader(() => loadAll().catch((error: unknown) => logger?.warn({ err: (error as Error).message }, 'lists: reading Redis failed; the rules in force stay')), () => closed);
  const scheduleReload = (): Promise<void> => reloader.reload();

  async function publish(message: ChangeMessage): Promise<void> {
    await redis.publish(channel, JSON.stringify(message)).catch(() => undefined);
  }

  // Seed from the file once: only when Redis holds no rule and was never written. WATCH makes
  // two instances starting at once import it at most once.
  async function seedAndLoad(): Promise<void> {
    if (options.seed !== undefined) {
      await redis.watch(RULES, SEEDED);
      const [count, seeded] = await Promise.all([redis.hlen(RULES), redis.exists(SEEDED)]);
      if (count === 0 && seeded === 0) {
        const rules = await options.seed();
        const multi = redis.multi();
        for (let at = 0; at < rules.length; at += HSET_CHUNK) {
          multi.hset(RULES, Object.fromEntries(rules.slice(at, at + HSET_CHUNK).map((rule) => [rule.rule, encode(rule)])));
        }
        multi.set(SEEDED, new Date().toISOString());
        multi.incr(VERSION);
        const done = await multi.exec();
        if (done !== null && rules.length > 0) logger?.info({ rules: rules.length }, 'lists: the lists file was imported into Redis (once: Redis held no lists)');
      } else await redis.unwatch();
    }
    await loadAll();
  }
  if (reachable) await seedAndLoad();
  else {
    redis.once('ready', () => {
      void seedAndLoad().then(
        () => logger?.info({}, 'lists: Redis answers again; the lists are read'),
        (error: unknown) => logger?.error({ err: (error as Error).message.slice(0, 200) }, 'lists: reading Redis failed; retried on the next poll'),
      );
    });
  }

  let subscriber: Redis | undefined;
  let poll: NodeJS.Timeout | undefined;
  if (options.watch !== false) {
    subscriber = new Redis(options.url, { connectTimeout: 2000, lazyConnect: true, maxRetriesPerRequest: null });
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, text: string) => {
      let message: ChangeMessage;
      try {
        message = JSON.parse(text) as ChangeMessage;
      } catch {
        return;
      }
      if (message.from === instanceId) return;
      accept(message);
    });
    // After a reconnection, messages may have been missed: read again.
    subscriber.on('ready', () => void scheduleReload());
    await subscriber.connect().catch(() => undefined);
    // Unreachable: ioredis subscribes once it connects (and again after every reconnection).
    const subscribed = subscriber.subscribe(channel).catch(() => undefined);
    if (reachable) await subscribed;
    poll = setInterval(() => {
      // A change missed (a reconnection) or a gap that did not fill: read everything again.
      const stuck = [...pending.values()].some((entry) => Date.now() - entry.heardAt > GAP_MS);
      if (stuck) {
        void scheduleReload();
        return;
      }
      void readVersion().then(
        (version) => {
          if (version > loadedVersion && pending.size === 0) void scheduleReload();
        },
        () => undefined,
      );
    }, REDIS_POLL_MS);
    poll.unref();
  }

  async function run<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (error) {
      throw new ListStoreUnavailable(`the lists could not be ${what} in Redis: ${(error as Error).message}`);
    }
  }

  return {
    kind: 'redis',
    location: `${keyPrefix}${RULES}`,
    match: (e164, now) => live.match(e164, now),
    activeRules: (now) => live.activeRules(now),
    version: (now) => live.version(now),
    async put(rule) {
      const value = encode(rule);
      const result = await run('written', () => redis.multi().hset(RULES, rule.rule, value).set(SEEDED, '1', 'NX').incr(VERSION).exec());
      const created = Number(result?.[0]?.[1] ?? 0);
      const version = Number(result?.[2]?.[1] ?? 0);
      applyOwn({ version, op: 'put', rule: rule.rule, value, from: instanceId });
      await publish({ version, op: 'put', rule: rule.rule, value, from: instanceId });
      return { replaced: created === 0 };
    },
    async remove(rule) {
      const result = await run('written', () => redis.multi().hdel(RULES, rule).incr(VERSION).exec());
      const removed = Number(result?.[0]?.[1] ?? 0) > 0;
      const version = Number(result?.[1]?.[1] ?? 0);
      applyOwn({ version, op: 'remove', rule, from: instanceId });
      await publish({ version, op: 'remove', rule, from: instanceId });
      return removed;
    },
    async importRules(rules) {
      if (rules.length === 0) return { added: 0, replaced: 0 };
      const existing = await run('read', async () => {
        const flags: number[] = [];
        for (let at = 0; at < rules.length; at += HSET_CHUNK) {
          const pipeline = redis.pipeline();
          for (const rule of rules.slice(at, at + HSET_CHUNK)) pipeline.hexists(RULES, rule.rule);
          for (const [, flag] of (await pipeline.exec()) ?? []) flags.push(Number(flag));
        }
        return flags.filter((flag) => flag === 1).length;
      });
      // The fields encoded a chunk at a time, yielding between chunks (100,000 at once would hold the loop).
      const chunks: Array<Record<string, string>> = [];
      for (let at = 0; at < rules.length; at += HSET_CHUNK) {
        chunks.push(Object.fromEntries(rules.slice(at, at + HSET_CHUNK).map((rule) => [rule.rule, encode(rule)])));
        await nextTurn();
      }
      // One MULTI: the whole import is applied at once, or not at all.
      const result = await run('written', () => {
        const multi = redis.multi();
        for (const chunk of chunks) multi.hset(RULES, chunk);
        multi.set(SEEDED, '1', 'NX').incr(VERSION);
        return multi.exec();
      });
      const version = Number(result?.[result.length - 1]?.[1] ?? 0);
      loadedVersion = -1;
      await scheduleReload();
      await publish({ version, op: 'reload', from: instanceId });
      return { added: rules.length - existing, replaced: existing };
    },
    storedRules: () => live.current().allRules(),
    index: () => live.current(),
    countByList: (now) => live.current().countByList(now),
    refresh: async () => {
      loadedVersion = -1;
      await scheduleReload();
    },
    async close() {
      closed = true;
      if (poll !== undefined) clearInterval(poll);
      await reloader.running();
      subscriber?.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
