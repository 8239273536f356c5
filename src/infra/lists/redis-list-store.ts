// The lists in Redis (REDIS_URL): data of record, shared by every instance (unlike the cache and
// the rate-limit counts, which Redis may lose). Keys (redis/keys.ts), under REDIS_KEY_PREFIX, all
// with the hash tag {lists} (the scripts use them together):
//   {lists}:rules    hash, rule spelling → the rule's other fields as JSON
//   {lists}:version  counter, +1 for every change, in the same script as the change
//   {lists}:changes  stream of the changes, {v, e, op: put | remove | reload, rule, value},
//                    trimmed to about STREAM_MAX_LENGTH entries (MAXLEN ~)
//   {lists}:epoch    the lists' lineage: a new one each time an instance writes the lists back
//                    after Redis lost them. A writer whose change went into a lineage since
//                    replaced sends it again before it answers (the write-back may not hold it).
//
// Every command goes through the service's shared client (redis-client.ts), bounded by its
// command timeout, a failure marking it degraded; a write while Redis is not connected is
// refused at once (503), never queued. The one exception is the blocking read of the stream (`XREAD BLOCK`), on a
// connection of its own duplicated from the shared client's options, as bullmq's QueueEvents
// does: a blocked read holds its connection until a change comes, so on the shared one it would
// stall every command queued behind it and outlast the shared command deadline.
//
// Each instance applies the changes in stream order, each carrying the version after the one it
// holds; anything else (a trimmed stream it fell behind, a `reload` made by an import or a
// restore, a lost connection) makes it read the whole hash again. Its own writes are in force
// at once, before their turn in the stream.
//
// Redis losing the lists (restarted empty, or from an older copy): a full read finds
// {lists}:version missing, or behind the state this instance holds or the file holds. The
// instance never swaps in the emptier state: it writes back the newest state it knows (its own
// or the file's), with the changes Redis took since replayed on top, and logs it. With
// LISTS_FILE set, a write is acknowledged only once the file holds a state that includes it
// (lists-file-mirror.ts), so a restart of Redis and of every instance, in any order, loses
// nothing acknowledged. docs/lists.md says the same for operators. On a primary with replicas
// (Sentinel), a change is acknowledged once a replica holds it too (redis/replica-copy.ts), so a
// failover loses nothing acknowledged either.
import { randomBytes } from 'node:crypto';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import type { RuleContext } from '../../domain/lists/rules.js';
import { isRuleSpelling } from '../../domain/lists/rule-key.js';
import { redisReadyWithin, type RedisClient } from '../redis/redis-client.js';
import type { ScriptedRedis } from '../redis/scripts.js';
import { LISTS_KEYS } from '../redis/keys.js';
import { ensureTaggedKeys } from '../redis/redis-key-migration.js';
import { compareStreamIds, followChangeStream } from '../redis/change-stream-follower.js';
import { awaitReplicaCopy } from '../redis/replica-copy.js';
import { letLoopThrough } from '../runtime/event-loop-slices.js';
import {
  buildIndexInSlices,
  createLiveIndex,
  ListStoreUnavailable,
  type ListStore,
  type ListStoreLogger,
} from './list-store.js';
import { readMirror, readMirrorVersion, writeMirror, type MirroredState } from './lists-file-mirror.js';

const { rules: RULES, version: VERSION, changes: CHANGES, epoch: EPOCH, staged: stagedKey } = LISTS_KEYS;
/** About how many changes the stream keeps: an instance further behind reads everything again. */
export const STREAM_MAX_LENGTH = 10_000;
/** How long a write waits for this instance's reader to reach it before reading everything itself. */
const CATCH_UP_MS = 2_000;
const HSCAN_COUNT = 1000;
const HSET_CHUNK = 1000;
/** A staged import or restore abandoned half-way (a crash) is dropped by Redis after this. */
const STAGED_TTL_MS = 120_000;

export interface RedisListStoreOptions {
  /** The service's shared client (its key prefix applies), or the CLI's own. */
  client: RedisClient;
  /** Quit the client on close: the CLI's own client; the service's shared one is its owner's. */
  ownsClient?: boolean;
  logger?: ListStoreLogger;
  /** Follow changes made by other instances (the service); the CLI reads once. Default true. */
  watch?: boolean;
  /**
   * The lists file (LISTS_FILE): read to fill a Redis that holds no lists, or one that lost
   * changes the file holds; written after every change when `mirror` (LISTS_FILE set).
   */
  file?: { path: string; context: RuleContext; mirror: boolean };
  onChange?: () => void;
  streamMaxLength?: number;
  /** How long opening waits for Redis before it starts with no rule (default 2 s). */
  connectWaitMs?: number;
}

type Stored = Omit<ListRule, 'rule'>;

function encode(rule: ListRule): string {
  const { rule: _spelling, ...rest } = rule;
  return JSON.stringify(rest);
}

/** A rule of the hash, or undefined when its key is no rule spelling (rule-key.ts) or its value no rule. */
function decode(spelling: string, json: string): ListRule | undefined {
  if (!isRuleSpelling(spelling)) return undefined;
  try {
    const value = JSON.parse(json) as Stored;
    if ((value.list !== 'allow' && value.list !== 'block') || typeof value.createdAt !== 'string') return undefined;
    return { rule: spelling, ...value };
  } catch {
    return undefined;
  }
}

interface Change {
  id: string;
  version: number;
  epoch: string;
  op: string;
  rule?: string | undefined;
  value?: string | undefined;
}

function changeOf(id: string, fields: readonly string[]): Change {
  const named = new Map<string, string>();
  for (let at = 0; at + 1 < fields.length; at += 2) named.set(fields[at] as string, fields[at + 1] as string);
  return {
    id,
    version: Number(named.get('v') ?? Number.NaN),
    epoch: named.get('e') ?? '',
    op: named.get('op') ?? '',
    rule: named.get('rule'),
    value: named.get('value'),
  };
}

/** The value of one command of a MULTI, or its error thrown. */
function resultOf(results: Array<[Error | null, unknown]> | null, at: number): unknown {
  const entry = results?.[at];
  if (entry === undefined) throw new Error('the transaction was not run');
  if (entry[0] !== null) throw entry[0];
  return entry[1];
}

/** A change script's reply {count, version, id, epoch}, or undefined when the script refused it: {lists}:version is missing (scripts.ts's listsEpoch). */
function changeReply(reply: unknown): { count: number; version: number; id: string; epoch: string } | undefined {
  if (reply === null) return undefined;
  if (!Array.isArray(reply) || reply.length !== 4 || typeof reply[2] !== 'string' || typeof reply[3] !== 'string')
    throw new Error('unexpected reply to a change of the lists');
  return { count: Number(reply[0]), version: Number(reply[1]), id: reply[2], epoch: reply[3] };
}

const newEpoch = (): string => randomBytes(6).toString('hex');

interface RedisState {
  /** {lists}:version, null when missing (Redis never held the lists, or lost them). */
  version: number | null;
  /** The last change in the stream when the version was read. */
  streamId: string;
  epoch: string;
  rules: ListRule[];
}

export async function openRedisListStore(options: RedisListStoreOptions): Promise<ListStore> {
  const { client, logger, file } = options;
  const maxLength = options.streamMaxLength ?? STREAM_MAX_LENGTH;
  const watching = options.watch !== false;
  const live = createLiveIndex();
  /** The version and the last change the index holds (-1: nothing read from Redis yet). */
  let loadedVersion = -1;
  let lastId = '0-0';
  /** The lineage of the lists held ('' before one was set). */
  let heldEpoch = '';
  let closed = false;
  /** Past the first read: from then on a lists file that does not parse is left out, not fatal. */
  let opened = false;
  const stop = new AbortController();
  const progress = new Set<() => void>();

  /**
   * A command on the shared client's connection, bounded by its command timeout. A failure is a
   * ListStoreUnavailable, and marks the client degraded for the lookups. Unlike a lookup's cache
   * read, a change is not sent to a fallback when Redis is merely slow: an operator's change may
   * wait a second, and there is no fallback for data of record but a refusal.
   */
  async function run<T>(what: string, op: (redis: ScriptedRedis) => Promise<T>): Promise<T> {
    if (client.redis.status !== 'ready')
      throw new ListStoreUnavailable(`the lists could not be ${what} in Redis: Redis is not reachable`);
    try {
      // Once per client: the keys of the layout before hash tags moved first (redis-key-migration.ts).
      await ensureTaggedKeys(client, logger);
      return await op(client.redis);
    } catch (error) {
      client.reportFailure(error);
      throw new ListStoreUnavailable(`the lists could not be ${what} in Redis: ${(error as Error).message}`);
    }
  }

  /**
   * After a write: on a primary with replicas, once one holds it (replica-copy.ts), so a failover
   * right after cannot lose it. Refused (503) otherwise; the change is sent again by the caller.
   */
  async function copied(): Promise<void> {
    try {
      await awaitReplicaCopy(client.redis);
    } catch (error) {
      throw new ListStoreUnavailable(`the lists' change is not yet on a Redis replica: ${(error as Error).message}`);
    }
  }

  function advanced(): void {
    for (const check of [...progress]) check();
  }

  async function readRedis(): Promise<RedisState> {
    const head = await run('read', (redis) =>
      redis.multi().get(VERSION).xrevrange(CHANGES, '+', '-', 'COUNT', 1).get(EPOCH).exec(),
    );
    const versionText = resultOf(head, 0) as string | null;
    const last = resultOf(head, 1) as Array<[string, string[]]>;
    const epoch = (resultOf(head, 2) as string | null) ?? '';
    const rules: ListRule[] = [];
    let cursor = '0';
    do {
      const [next, flat] = await run('read', (redis) => redis.hscan(RULES, cursor, 'COUNT', HSCAN_COUNT));
      cursor = next;
      for (let at = 0; at + 1 < flat.length; at += 2) {
        const rule = decode(flat[at] as string, flat[at + 1] as string);
        if (rule !== undefined) rules.push(rule);
      }
    } while (cursor !== '0');
    return {
      version: versionText === null ? null : Number(versionText),
      streamId: last[0]?.[0] ?? '0-0',
      epoch,
      rules,
    };
  }

  async function changesAfter(id: string): Promise<Change[]> {
    const entries = await run('read', (redis) => redis.xrange(CHANGES, `(${id}`, '+'));
    return entries.map(([entryId, fields]) => changeOf(entryId, fields));
  }

  /** Writes `rules` to a staged hash of their own, a slice at a time; returns its key. */
  async function stage(rules: Iterable<ListRule>): Promise<string> {
    const key = stagedKey(randomBytes(8).toString('hex'));
    let chunk: Record<string, string> = {};
    let size = 0;
    const flush = async (): Promise<void> => {
      const fields = chunk;
      chunk = {};
      size = 0;
      await run('written', (redis) =>
        redis
          .multi()
          .hset(key, fields)
          .pexpire(key, STAGED_TTL_MS)
          .exec()
          .then((results) => resultOf(results, 0)),
      );
      await letLoopThrough();
    };
    for (const rule of rules) {
      chunk[rule.rule] = encode(rule);
      size += 1;
      if (size === HSET_CHUNK) await flush();
    }
    if (size > 0) await flush();
    return key;
  }

  async function swapIn(rules: Iterable<ListRule>, version: number, streamId: string, epoch: string): Promise<void> {
    const { index } = await buildIndexInSlices(rules);
    live.swap(index);
    loadedVersion = version;
    lastId = streamId;
    heldEpoch = epoch;
    advanced();
    options.onChange?.();
  }

  /**
   * Reads everything and settles what this instance holds: Redis' state, or, when Redis lost
   * changes that this instance or the file holds, the newest of those written back. False when
   * someone wrote during a write-back (read again).
   */
  async function settle(): Promise<boolean> {
    const state = await readRedis();
    const redisVersion = state.version ?? 0;
    const candidates: Array<MirroredState & { from: 'instance' | 'file' }> = [];
    if (loadedVersion >= 0)
      candidates.push({ version: loadedVersion, streamId: lastId, rules: live.current().allRules(), from: 'instance' });
    if (file !== undefined) {
      try {
        if (state.version === null || (await readMirrorVersion(file.path)) > redisVersion)
          candidates.push({ ...(await readMirror(file.path, file.context)), from: 'file' });
      } catch (error) {
        // At start, a file that does not parse stops it (its rules would silently vanish);
        // later, the rules this instance holds are written back without it.
        if (!opened) throw error;
        logger?.error(
          { file: file.path, err: (error as Error).message.slice(0, 200) },
          'lists: the lists file could not be read; it is left out',
        );
      }
    }
    const best = candidates.reduce<(typeof candidates)[number] | undefined>(
      (kept, next) => (kept === undefined || next.version > kept.version ? next : kept),
      undefined,
    );
    const lost =
      best !== undefined &&
      (state.version === null ? best.version > 0 || best.rules.length > 0 : best.version > redisVersion);
    // A missing version is always set here, by the write-back below (with no rule when nothing was
    // lost): the changes are refused until then (scripts.ts's listsEpoch), so none goes into an
    // emptied Redis before the newest state known is back.
    if (state.version !== null && (best === undefined || !lost)) {
      await swapIn(state.rules, redisVersion, state.streamId, state.epoch);
      if (file?.mirror === true && loadedVersion > 0)
        void mirrorUpTo(loadedVersion).catch((error: unknown) =>
          logger?.warn(
            { err: (error as Error).message.slice(0, 200) },
            'lists: the lists file could not be brought up to date',
          ),
        );
      return true;
    }
    // Redis lost changes (or never held the lists): the newest state known, with what Redis took
    // since replayed on top.
    const merged = new Map((best?.rules ?? []).map((rule) => [rule.rule, rule]));
    for (const change of state.version === null || best === undefined ? [] : await changesAfter(best.streamId)) {
      if (change.op === 'reload') for (const rule of state.rules) merged.set(rule.rule, rule);
      else if (change.rule !== undefined && change.op === 'remove') merged.delete(change.rule);
      else if (change.rule !== undefined && change.value !== undefined) {
        const rule = decode(change.rule, change.value);
        if (rule !== undefined) merged.set(rule.rule, rule);
      }
    }
    const next = Math.max(best?.version ?? 0, redisVersion) + 1;
    const staged = await stage(merged.values());
    const epoch = newEpoch();
    const id = await run('written', (redis) =>
      redis.phonerepListsRestore(
        VERSION,
        RULES,
        staged,
        CHANGES,
        EPOCH,
        state.version === null ? '' : String(state.version),
        next,
        maxLength,
        epoch,
      ),
    );
    if (typeof id !== 'string') return false;
    // Not lost: Redis held no lists, and now holds the version they start from; nothing to say.
    if (lost) {
      if (best.from === 'file' && best.version === 0)
        logger?.info({ lists: 'imported' }, 'lists: the lists file was imported into Redis (Redis held no lists)');
      else
        logger?.warn(
          { lists: 'restored', from: best.from },
          best.from === 'instance'
            ? 'lists: Redis had lost the lists (restarted empty or from an older copy); this instance wrote back the rules it holds'
            : 'lists: Redis had lost the lists (restarted empty or from an older copy); the lists file was written back',
        );
    }
    await swapIn(merged.values(), next, id, epoch);
    if (file?.mirror === true)
      void mirrorUpTo(next).catch((error: unknown) =>
        logger?.warn(
          { err: (error as Error).message.slice(0, 200) },
          'lists: the lists file could not be brought up to date',
        ),
      );
    return true;
  }

  async function fullRead(): Promise<void> {
    for (let attempt = 1; !(await settle()); attempt += 1) {
      if (attempt >= 5)
        throw new ListStoreUnavailable('the lists in Redis kept changing during a write-back; read again later');
    }
  }

  // Full reads one at a time (the reader's, an import's, a write's that had to catch up).
  let reads: Promise<void> = Promise.resolve();
  function readAll(): Promise<void> {
    const read = reads.then(fullRead);
    reads = read.catch(() => undefined);
    return read;
  }

  // The file, written after every change (LISTS_FILE set): one write at a time in this process,
  // each of the newest state; writers waiting for an older version are served by it.
  let mirroredVersion = 0;
  let mirrorRun: Promise<void> | undefined;
  async function mirrorUpTo(version: number): Promise<void> {
    if (file === undefined) return;
    for (let tries = 0; mirroredVersion < version; tries += 1) {
      if (tries === 5) throw new ListStoreUnavailable('the lists file could not be brought up to date');
      if (mirrorRun === undefined) {
        const snapshot = { version: loadedVersion, streamId: lastId, rules: live.current().allRules() };
        mirrorRun = writeMirror(file.path, snapshot)
          .then((held) => {
            mirroredVersion = Math.max(mirroredVersion, held);
          })
          .finally(() => {
            mirrorRun = undefined;
          });
      }
      try {
        await mirrorRun;
      } catch (error) {
        throw error instanceof ListStoreUnavailable
          ? error
          : new ListStoreUnavailable(`the lists file cannot be written (${file.path}): ${(error as Error).message}`);
      }
    }
  }

  /** Resolves once the index holds the change `id` (or a later state). */
  async function catchUp(id: string): Promise<void> {
    const reached = (): boolean => compareStreamIds(lastId, id) >= 0;
    if (reached()) return;
    if (watching) {
      await new Promise<void>((resolve) => {
        const check = (): void => {
          if (!reached()) return;
          done();
        };
        const timer = setTimeout(() => done(), CATCH_UP_MS);
        const done = (): void => {
          clearTimeout(timer);
          progress.delete(check);
          resolve();
        };
        progress.add(check);
      });
    }
    if (!reached()) await readAll();
    if (!reached()) throw new ListStoreUnavailable('the change is in Redis but this instance could not read it back');
  }

  /**
   * After a change this instance made: in force here at once, and in the file before the caller
   * hears of it. False when the change went into lists that Redis lost and an instance has since
   * written back (a new epoch), which may not hold it: the caller sends it again.
   */
  async function afterChange(
    change: { version: number; id: string; epoch: string },
    apply: () => void,
  ): Promise<boolean> {
    if (change.version > loadedVersion) {
      apply();
      options.onChange?.();
    } else if (compareStreamIds(change.id, lastId) > 0) {
      // A version at or below the one held, for a newer change: Redis lost changes. The full read
      // writes back what this instance holds, with this change on top.
      await readAll();
    }
    if (file?.mirror === true) {
      await catchUp(change.id);
      if (change.epoch !== heldEpoch) return false;
      await mirrorUpTo(loadedVersion);
    }
    return true;
  }

  /** Sends a change until it is kept (afterChange); returns the first reply's count. */
  async function change(op: 'put' | 'remove', rule: string, value: string, apply: () => void): Promise<number> {
    let first: number | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const reply = changeReply(
        await run('written', (redis) =>
          redis.phonerepListsChange(RULES, VERSION, CHANGES, EPOCH, op, rule, value, maxLength, newEpoch()),
        ),
      );
      if (reply === undefined) await readAll();
      else {
        await copied();
        first ??= reply.count;
        if (await afterChange(reply, apply)) return first;
      }
      if (attempt === 5)
        throw new ListStoreUnavailable('the lists in Redis kept being written back during this change; try again');
    }
  }

  /**
   * Sends a change of many rules (an import, a restore) until it is kept: a script refused because
   * Redis holds no lists is sent again after the full read sets them (settle), and one that went
   * into lists since written back (a new epoch) is sent again too, up to 5 times in all. In force
   * here when it returns: everything is read again (each is a `reload` for every instance).
   */
  async function bulkChange(what: string, send: () => Promise<unknown>): Promise<number> {
    let first: number | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const reply = changeReply(await send());
      if (reply === undefined) await readAll();
      else {
        await copied();
        const count = (first ??= reply.count);
        await readAll();
        if (file?.mirror !== true) return count;
        await catchUp(reply.id);
        if (reply.epoch === heldEpoch) {
          await mirrorUpTo(loadedVersion);
          return count;
        }
      }
      if (attempt === 5)
        throw new ListStoreUnavailable(`the lists in Redis kept being written back during this ${what}; try again`);
    }
  }

  /** Adds the rules at once: staged a slice at a time, then added by one script, all or nothing. */
  async function importRules(rules: readonly ListRule[]): Promise<{ added: number; replaced: number }> {
    if (rules.length === 0) return { added: 0, replaced: 0 };
    const replaced = await bulkChange('import', async () => {
      const staged = await stage(rules);
      return run('written', (redis) =>
        redis.phonerepListsMerge(RULES, VERSION, CHANGES, staged, EPOCH, maxLength, newEpoch()),
      );
    });
    return { added: rules.length - replaced, replaced };
  }

  /**
   * Replaces every rule at once (a restore): staged a slice at a time, then moved in place by one
   * script with one `reload` change, so every instance goes from the old rules to the new ones in
   * one step.
   */
  async function replaceRules(rules: readonly ListRule[]): Promise<{ before: number }> {
    const before = await bulkChange('restore', async () => {
      // No rule: nothing staged, and the script deletes the rules (a key that does not exist is no hash).
      const staged = rules.length === 0 ? stagedKey(`none-${randomBytes(8).toString('hex')}`) : await stage(rules);
      return run('written', (redis) =>
        redis.phonerepListsReplace(RULES, VERSION, CHANGES, staged, EPOCH, maxLength, newEpoch()),
      );
    });
    return { before };
  }

  // Opening: wait a little for Redis. Down at start does not stop the service (the caches and
  // limits fall back to memory): the lists start empty, say so loudly, and are read (and the file
  // imported if Redis holds none) once Redis answers.
  let reachable = await redisReadyWithin(client.redis, options.connectWaitMs ?? 2000, stop.signal);
  if (reachable) {
    try {
      await readAll();
    } catch (error) {
      if (!(error instanceof ListStoreUnavailable)) throw error; // a lists file that does not parse stops the start
      reachable = false;
    }
  }
  opened = true;
  if (!reachable) {
    if (!watching) {
      throw new ListStoreUnavailable('the lists could not be read: Redis is not reachable');
    }
    logger?.error(
      { lists: 'unreadable' },
      'lists: Redis cannot be reached at start; no operator rule applies until it answers',
    );
  }

  // The reader: XREAD BLOCK on a connection of its own (change-stream-follower.ts). It fails at
  // once when its connection drops (no retry of the command), so a reconnection is a full read.
  const follower = watching
    ? followChangeStream({
        redis: client.redis,
        connectionName: 'phonerep-lists-reader',
        stream: CHANGES,
        subject: 'lists',
        logger,
        readFirst: !reachable,
        lastId: () => lastId,
        readAll,
        apply(id, fields) {
          const change = changeOf(id, fields);
          // The first epoch set by a change is taken as it comes; any other new one is a write-back.
          if (
            change.version !== loadedVersion + 1 ||
            change.op === 'reload' ||
            change.rule === undefined ||
            (heldEpoch !== '' && change.epoch !== heldEpoch)
          )
            return false;
          heldEpoch = change.epoch;
          const index = live.current();
          if (change.op === 'remove') index.delete(change.rule);
          else if (change.value !== undefined) {
            const rule = decode(change.rule, change.value);
            if (rule !== undefined) index.set(rule);
          }
          loadedVersion = change.version;
          lastId = id;
          return true;
        },
        changed() {
          advanced();
          options.onChange?.();
        },
        closed: () => closed,
        signal: stop.signal,
      })
    : undefined;

  return {
    kind: 'redis',
    location: `${client.keyPrefix}${RULES}`,
    match: (e164, now) => live.match(e164, now),
    activeRules: (now) => live.activeRules(now),
    version: (now) => live.version(now),
    async put(rule) {
      const added = await change('put', rule.rule, encode(rule), () => live.current().set(rule));
      return { replaced: added === 0 };
    },
    async remove(rule) {
      return (await change('remove', rule, '', () => live.current().delete(rule))) > 0;
    },
    importRules: (rules) => importRules(rules),
    replaceRules: (rules) => replaceRules(rules),
    storedRules: () => live.current().allRules(),
    index: () => live.current(),
    countByList: (now) => live.current().countByList(now),
    refresh: () => readAll(),
    async close() {
      closed = true;
      stop.abort();
      await follower?.stop();
      await reads;
      await mirrorRun?.catch(() => undefined);
      if (options.ownsClient === true) await client.quit();
    },
  };
}
