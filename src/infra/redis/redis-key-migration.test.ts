// The move from the layout before hash tags, on the real Redis under key prefixes of this file's
// own. A deployment of the previous version is made by the stores themselves (the values' formats
// did not change, only the names), its keys then renamed to the names that version used, written
// out here by hand. Each "start" is a client of its own, as a new process would have.
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, listKeys, useRedisTestClients, waitFor } from '../../../test/support/redis.js';
import type { ReportVote } from '../../domain/ports/caller-reports.js';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import { createRedisBlockedCallerLog } from '../blocklist/redis-blocked-callers.js';
import { openRedisListStore } from '../lists/redis-list-store.js';
import { openRedisReportStore } from '../reports/redis-report-store.js';
import type { ReportSettings } from '../reports/report-store.js';
import { openRedisTokenStore } from '../reports/token-store.js';
import { migrateKeyLayout, type KeyMigrationLogger } from './redis-key-migration.js';
import { createRedisClient, type RedisClient } from './redis-client.js';

const { prefix, admin } = useRedisTestClients('key-migration');
const DAY = 86_400_000;
// Real time: Redis expires the votes' hashes by it.
const NOW = Date.now();
const SETTINGS: ReportSettings = { halfLifeDays: 125, minReporters: 2, retentionDays: 180, maxPerTokenDay: 100 };
const RULES: ListRule[] = [
  { rule: '+33162000001', list: 'block', label: 'Robocall', createdAt: '2026-11-01T10:00:00.000Z' },
  { rule: '+33612*', list: 'allow', createdAt: '2026-11-02T10:00:00.000Z' },
];
const vote = (e164: string, tokenId: string, rating: ReportVote['rating'] = 'fraud'): ReportVote => ({
  e164,
  tokenId,
  rating,
  at: NOW - DAY,
});
const VOTES = [
  vote('+33612345678', 'tok_a'),
  vote('+33612345678', 'tok_b'),
  vote('+33162000009', 'tok_a', 'advertising'),
];
const BLOCKED = ['+33600000001', '+33600000002'];

/** The names of the previous version (layout 1), from the tagged ones: written by hand, not taken from redis-key-migration.ts. */
function layout1NameOf(key: string): string {
  const renames: Array<[RegExp, string]> = [
    [/^\{lists\}:/, 'lists:'],
    [/^\{reports\}:/, 'reports:'],
    [/^\{tokens\}:records$/, 'tokens'],
    [/^\{blocked\}:log$/, 'feed:blocked'],
    [/^\{blocked\}:caller:/, 'feed:caller:'],
  ];
  for (const [tagged, old] of renames) if (tagged.test(key)) return key.replace(tagged, old);
  throw new Error(`no layout-1 name for ${key}`);
}

const clients: RedisClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
});

/** A client under `keyPrefix`: one "start" of an instance. */
async function start(keyPrefix: string): Promise<RedisClient> {
  const client = createRedisClient(TEST_REDIS_URL, { keyPrefix });
  clients.push(client);
  await waitFor(() => client.isReady());
  return client;
}

function recordingLogger(): KeyMigrationLogger & {
  error: KeyMigrationLogger['warn'];
  lines: Array<{ level: string; obj: object; msg: string }>;
} {
  const lines: Array<{ level: string; obj: object; msg: string }> = [];
  return {
    lines,
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
}

let area = 0;

/**
 * A deployment of the previous version under a prefix of its own: lists, votes, a token and
 * blocked callers written by the stores, then every key renamed to its layout-1 name (RENAME
 * keeps values and expiries). Returns the prefix and the token's secret.
 */
async function deployLayout1(): Promise<{ keyPrefix: string; secret: string; tokenId: string }> {
  area += 1;
  const keyPrefix = `${prefix}d${area}:`;
  const client = await start(keyPrefix);
  const lists = await openRedisListStore({ client, watch: false });
  for (const rule of RULES) await lists.put(rule);
  await lists.close();
  const reports = await openRedisReportStore({ client, settings: SETTINGS, watch: false, clock: () => NOW });
  for (const one of VOTES) expect((await reports.record(one, NOW)).ok).toBe(true);
  await reports.close();
  const tokens = await openRedisTokenStore(client, { watch: false, ownsClient: false });
  const { secret, token } = await tokens.create({ label: 'Front desk PBX' }, NOW);
  await tokens.close();
  const blocked = createRedisBlockedCallerLog({ client, maxEntries: 100, retentionMs: 30 * DAY });
  for (const [at, e164] of BLOCKED.entries()) blocked.record({ e164, score: 90, reason: 'reports', atMs: NOW - at });
  await waitFor(async () => (await blocked.list(NOW)).length === BLOCKED.length);
  for (const key of await listKeys(admin, keyPrefix)) {
    const name = key.slice(keyPrefix.length);
    await admin.rename(key, `${keyPrefix}${layout1NameOf(name)}`);
  }
  expect((await listKeys(admin, keyPrefix)).filter((key) => key.includes('{'))).toEqual([]);
  return { keyPrefix, secret, tokenId: token.id };
}

/** What a starting instance reads through its stores: the rules, the votes, whether the token holds, the blocked callers. */
async function readBack(client: RedisClient, secret: string) {
  const lists = await openRedisListStore({ client, watch: false });
  const reports = await openRedisReportStore({ client, settings: SETTINGS, watch: false, clock: () => NOW });
  const tokens = await openRedisTokenStore(client, { watch: false, ownsClient: false });
  const blocked = createRedisBlockedCallerLog({ client, maxEntries: 100, retentionMs: 30 * DAY });
  const held = {
    rules: lists.storedRules().sort((a, b) => a.rule.localeCompare(b.rule)),
    votes: reports.allVotes().sort((a, b) => `${a.e164}${a.tokenId}`.localeCompare(`${b.e164}${b.tokenId}`)),
    token: await tokens.authenticate(secret, NOW),
    blocked: (await blocked.list(NOW)).map((caller) => caller.e164).sort(),
  };
  // A change after the move continues the lists' versions, so the version moved too.
  await lists.put({ rule: '+33199*', list: 'block', createdAt: '2026-11-28T12:00:00.000Z' });
  await lists.remove('+33199*');
  await Promise.all([lists.close(), reports.close(), tokens.close()]);
  return held;
}

const sortedVotes = [...VOTES].sort((a, b) => `${a.e164}${a.tokenId}`.localeCompare(`${b.e164}${b.tokenId}`));
const LAYOUT_1_PATTERN = /^(lists:|reports:|tokens$|feed:)/;

describe('the move of the keys to their tagged names', () => {
  it('moves the data of record when an instance starts, and the stores read it back whole under the tagged names', async () => {
    const { keyPrefix, secret, tokenId } = await deployLayout1();
    const hashBefore = await admin.pexpiretime(`${keyPrefix}reports:n:+33612345678`);
    const versionBefore = Number(await admin.get(`${keyPrefix}lists:version`));
    expect(hashBefore).toBeGreaterThan(NOW);
    const logger = recordingLogger();

    const client = await start(keyPrefix);
    const lists = await openRedisListStore({ client, watch: false, logger });
    expect(lists.storedRules().sort((a, b) => a.rule.localeCompare(b.rule))).toEqual(RULES);
    await lists.close();
    const held = await readBack(client, secret);
    expect(held).toEqual({
      rules: RULES,
      votes: sortedVotes,
      token: expect.objectContaining({ id: tokenId }),
      blocked: BLOCKED,
    });

    const names = (await listKeys(admin, keyPrefix)).map((key) => key.slice(keyPrefix.length));
    expect(names.filter((name) => LAYOUT_1_PATTERN.test(name))).toEqual([]);
    expect(names.sort()).toEqual(
      expect.arrayContaining([
        '{lists}:rules',
        '{lists}:version',
        '{lists}:changes',
        '{lists}:epoch',
        '{reports}:n:+33612345678',
        '{reports}:n:+33162000009',
        '{reports}:expiry',
        '{reports}:version',
        '{reports}:changes',
        '{tokens}:records',
        '{blocked}:log',
        '{blocked}:caller:+33600000001',
      ]),
    );
    // Values and expiries kept: the votes' hash expires as before; the lists went on from their version.
    expect(await admin.pexpiretime(`${keyPrefix}{reports}:n:+33612345678`)).toBe(hashBefore);
    expect(await admin.pttl(`${keyPrefix}{blocked}:caller:+33600000001`)).toBeGreaterThan(0);
    expect(await admin.pttl(`${keyPrefix}{lists}:rules`)).toBe(-1);
    expect(Number(await admin.get(`${keyPrefix}{lists}:version`))).toBe(versionBefore + 2);
    expect(await admin.keys(`${keyPrefix}{reports}:cap:*`)).toHaveLength(2);
    // Counts in the log, never a key's name (they hold numbers).
    expect(logger.lines.filter((line) => line.level === 'info')).toHaveLength(1);
    expect(JSON.stringify(logger.lines)).not.toContain('+33');
  });

  it('does nothing more on a second start: the data read the same, nothing found to move', async () => {
    const { keyPrefix, secret } = await deployLayout1();
    const first = await start(keyPrefix);
    expect((await migrateKeyLayout(first.redis, keyPrefix)).found).toBe(true);
    const keysAfterFirst = (await listKeys(admin, keyPrefix)).sort();

    const second = await start(keyPrefix);
    expect(await migrateKeyLayout(second.redis, keyPrefix)).toEqual({ found: false, groups: {} });
    expect((await listKeys(admin, keyPrefix)).sort()).toEqual(keysAfterFirst);
    const held = await readBack(second, secret);
    expect(held.rules).toEqual(RULES);
    expect(held.votes).toEqual(sortedVotes);
    expect(held.token).not.toBeNull();
    expect(held.blocked).toEqual(BLOCKED);
  });

  it('moves every key once when two instances start at once, over many keys', async () => {
    const { keyPrefix, secret } = await deployLayout1();
    // Many numbers voted on and blocked, so the two passes' scans and moves overlap.
    const extra = Array.from({ length: 1500 }, (_, index) => `+3361${String(index).padStart(7, '0')}`);
    const pipeline = admin.pipeline();
    for (const e164 of extra) {
      pipeline.hset(`${keyPrefix}reports:n:${e164}`, 'tok_c', JSON.stringify({ r: 'fraud', at: NOW - DAY }));
      pipeline.pexpireat(`${keyPrefix}reports:n:${e164}`, NOW + 179 * DAY);
      pipeline.zadd(`${keyPrefix}reports:expiry`, NOW - DAY, `${e164} tok_c`);
      pipeline.set(
        `${keyPrefix}feed:caller:${e164}`,
        JSON.stringify({ score: 80, reason: 'score', atMs: NOW }),
        'PX',
        DAY,
      );
    }
    await pipeline.exec();
    const oldKeys = (await listKeys(admin, keyPrefix)).length;

    const [one, two] = await Promise.all([start(keyPrefix), start(keyPrefix)]);
    const results = await Promise.all([migrateKeyLayout(one.redis, keyPrefix), migrateKeyLayout(two.redis, keyPrefix)]);
    const moved = results
      .flatMap((result) => Object.values(result.groups))
      .reduce((sum, tally) => sum + tally.moved + tally.merged, 0);
    const left = results.flatMap((result) => Object.values(result.groups)).reduce((sum, tally) => sum + tally.left, 0);
    expect({ moved, left }).toEqual({ moved: oldKeys, left: 0 });

    const names = (await listKeys(admin, keyPrefix)).map((key) => key.slice(keyPrefix.length));
    expect(names).toHaveLength(oldKeys);
    expect(names.filter((name) => LAYOUT_1_PATTERN.test(name))).toEqual([]);
    const held = await readBack(one, secret);
    expect(held.votes).toHaveLength(VOTES.length + extra.length);
    expect(held.rules).toEqual(RULES);
    expect(held.token).not.toBeNull();
  });

  it('opens two stores at once on old keys: both read the same rules', async () => {
    const { keyPrefix } = await deployLayout1();
    const [one, two] = await Promise.all([start(keyPrefix), start(keyPrefix)]);
    const stores = await Promise.all([
      openRedisListStore({ client: one, watch: false }),
      openRedisListStore({ client: two, watch: false }),
    ]);
    for (const store of stores) expect(store.storedRules().sort((a, b) => a.rule.localeCompare(b.rule))).toEqual(RULES);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('leaves a key held under both names (an older instance still writing), merging only the blocked callers’ log', async () => {
    area += 1;
    const keyPrefix = `${prefix}both${area}:`;
    await admin.hset(`${keyPrefix}tokens`, 'tok_old', '{"old":true}');
    await admin.hset(`${keyPrefix}{tokens}:records`, 'tok_new', '{"new":true}');
    await admin.zadd(`${keyPrefix}feed:blocked`, 10, '+33600000001', 30, '+33600000003');
    await admin.zadd(`${keyPrefix}{blocked}:log`, 20, '+33600000001', 5, '+33600000002');
    await admin.pexpire(`${keyPrefix}{blocked}:log`, DAY);
    const logger = recordingLogger();

    const client = await start(keyPrefix);
    const result = await migrateKeyLayout(client.redis, keyPrefix, logger);
    expect(result.groups.tokens).toEqual({ moved: 0, merged: 0, left: 1 });
    expect(result.groups.blocked).toEqual({ moved: 0, merged: 1, left: 0 });
    expect(await admin.hgetall(`${keyPrefix}tokens`)).toEqual({ tok_old: '{"old":true}' });
    expect(await admin.hgetall(`${keyPrefix}{tokens}:records`)).toEqual({ tok_new: '{"new":true}' });
    expect(await admin.zrange(`${keyPrefix}{blocked}:log`, 0, -1, 'WITHSCORES')).toEqual([
      '+33600000002',
      '5',
      '+33600000001',
      '20',
      '+33600000003',
      '30',
    ]);
    expect(await admin.exists(`${keyPrefix}feed:blocked`)).toBe(0);
    expect(await admin.pttl(`${keyPrefix}{blocked}:log`)).toBeGreaterThan(0);
    expect(logger.lines.map((line) => line.level)).toEqual(['info', 'warn']);
  });

  it('finds the old keys under a prefix holding SCAN’s pattern characters only', async () => {
    area += 1;
    const keyPrefix = `${prefix}glob*?[${area}]:`;
    const neighbour = `${prefix}globX?[${area}]:`;
    await admin.set(`${keyPrefix}feed:blocked`, 'x');
    await admin.set(`${keyPrefix}feed:caller:+33600000001`, 'a');
    await admin.set(`${neighbour}feed:caller:+33600000002`, 'b');
    const client = await start(keyPrefix);
    await migrateKeyLayout(client.redis, keyPrefix);
    expect(await admin.get(`${keyPrefix}{blocked}:caller:+33600000001`)).toBe('a');
    expect(await admin.get(`${neighbour}feed:caller:+33600000002`)).toBe('b');
  });
});
