// The keys the stores really send, on the real Redis: every command, script and MULTI the stores
// run is recorded on their connection (its keys as ioredis sends them, prefix applied), and each
// must keep its keys in one hash slot, as a Redis Cluster requires. Every key must also be one of
// keys.ts's groups: a store writing a key named elsewhere fails here.
import calculateSlot from 'cluster-key-slot';
import { afterAll, describe, expect, it } from 'vitest';
import { useRedisTestClients, waitFor } from '../../../test/support/redis.js';
import { createRedisBlockedCallerLog } from '../blocklist/redis-blocked-callers.js';
import { createRedisPolitenessStore } from '../http/redis-politeness-store.js';
import { openRedisListStore } from '../lists/redis-list-store.js';
import { createRedisRateLimitStore } from '../rate-limit/redis-rate-limit-store.js';
import { openRedisReportStore } from '../reports/redis-report-store.js';
import { openRedisTokenStore } from '../reports/token-store.js';
import { redisDismissals } from '../reports/report-dismissals.js';
import { createRedisScreeningRecord } from '../screening/redis-screening-record.js';
import { hashTagOf } from './keys.js';
import { ensureTaggedKeys } from './redis-key-migration.js';
import type { RedisClient } from './redis-client.js';

const { prefix, readyClient } = useRedisTestClients('key-slots');
const DAY = 86_400_000;
const NOW = Date.now();
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** The keys of every command sent on `client`'s connection, a MULTI's commands as one unit. */
function recordUnits(client: RedisClient): string[][] {
  const units: string[][] = [];
  let transaction: string[] | undefined;
  const send = client.redis.sendCommand.bind(client.redis);
  client.redis.sendCommand = (command, stream) => {
    const name = command.name.toLowerCase();
    if (name === 'multi') transaction = [];
    else if (name === 'exec' || name === 'discard') {
      if (transaction !== undefined) units.push(transaction);
      transaction = undefined;
    } else {
      const keys = command.getKeys().map(String);
      if (transaction !== undefined) transaction.push(...keys);
      else if (keys.length > 0) units.push(keys);
    }
    return send(command, stream);
  };
  return units;
}

/** The tag or family of a recorded key, after the prefix: `lists`, `polite:tellows`, `cache`… */
function familyOf(key: string): string {
  const name = key.slice(prefix.length);
  const tag = hashTagOf(name);
  if (tag !== name) return tag;
  return name.slice(0, name.indexOf(':'));
}

describe('the keys the stores send together', () => {
  it('keeps the keys of every script, MULTI and multi-key command in one slot, all named by keys.ts', async () => {
    const client = await readyClient();
    await ensureTaggedKeys(client); // the start's look for old names is not the stores' traffic
    const units = recordUnits(client);

    const lists = await openRedisListStore({ client, watch: false });
    closers.push(() => lists.close());
    await lists.put({ rule: '+33162000001', list: 'block', createdAt: '2026-11-28T10:00:00.000Z' });
    await lists.remove('+33162000001');
    await lists.importRules([{ rule: '+33612*', list: 'allow', createdAt: '2026-11-28T10:00:00.000Z' }]);
    await lists.replaceRules([{ rule: '+33199*', list: 'block', createdAt: '2026-11-28T10:00:00.000Z' }]);
    await lists.refresh();

    const settings = { halfLifeDays: 125, minReporters: 2, retentionDays: 180, maxPerTokenDay: 100 };
    const reports = await openRedisReportStore({ client, settings, watch: false, clock: () => NOW });
    closers.push(() => reports.close());
    const vote = { e164: '+33612345678', tokenId: 'tok_a', rating: 'fraud' as const, at: NOW };
    expect((await reports.record(vote, NOW)).ok).toBe(true);
    await reports.expire(NOW + 200 * DAY);
    await reports.replaceAll([vote], NOW);
    await reports.refresh();

    const tokens = await openRedisTokenStore(client, { watch: false, ownsClient: false });
    closers.push(() => tokens.close());
    const { secret, token } = await tokens.create({ label: 'PBX' }, NOW);
    expect(await tokens.authenticate(secret, NOW)).not.toBeNull();
    await tokens.revoke(token.id, NOW + 1000);
    await tokens.replaceAll([]);

    const blocked = createRedisBlockedCallerLog({ client, maxEntries: 10, retentionMs: DAY });
    blocked.record({ e164: '+33600000001', score: 90, reason: 'reports', atMs: NOW });
    blocked.record({ e164: '+33600000002', score: 80, reason: 'score', atMs: NOW });
    await waitFor(async () => (await blocked.list(NOW)).length === 2);
    blocked.forget('+33600000001');
    await waitFor(async () => (await blocked.list(NOW)).length === 1);

    const politeness = createRedisPolitenessStore({ client });
    expect(await politeness.takeBudgetSlot('tellows', 10, NOW, { cost: 1, client: 'a1b2c3', clientLimit: 5 })).toEqual({
      granted: true,
    });
    await politeness.writePause('tellows', { untilMs: NOW + 60_000, consecutiveBlocks: 1 });
    await politeness.readPause('tellows');
    await createRedisRateLimitStore({ client }).hit('client-bucket', 10, 60_000);

    const dismissals = redisDismissals(client, 180 * DAY);
    await dismissals.dismiss('+33612345678', NOW);
    await dismissals.read(NOW);
    await dismissals.undismiss('+33612345678', NOW);

    const screening = createRedisScreeningRecord({
      client,
      statsDays: 7,
      callLogRetentionDays: 7,
      callLogMaxEntries: 100,
    });
    const call = { atMs: NOW, number: '+33612345678', verdict: 'block', decidedBy: 'lists', cid: 'X' } as const;
    // Two hours in one batch: the MULTI holds both hours' hashes and the call log.
    await screening.add({ calls: [call, { ...call, atMs: NOW + 3_600_000 }], reports: [NOW] });
    await screening.hourly(NOW - 3_600_000, NOW + 3_600_000);
    await screening.calls({ limit: 10 }, NOW + 3_600_000);
    await screening.recordFeedFetch({ client: 'fritzbox', atMs: NOW, entries: 3 });
    await screening.feedFetches();

    // Every unit in one slot.
    for (const keys of units) expect(calculateSlot.generateMulti(keys), keys.join(' ')).not.toBe(-1);
    // The units of several keys are the groups the issue names: each seen, so the recording worked.
    const together = new Set(units.filter((keys) => keys.length > 1).map((keys) => familyOf(keys[0] ?? '')));
    expect([...together].sort()).toEqual(['blocked', 'lists', 'polite:tellows', 'reports', 'screening']);
    // Every key is one of keys.ts's groups.
    const families = new Set(units.flat().map(familyOf));
    for (const family of families)
      expect(['lists', 'reports', 'tokens', 'blocked', 'screening', 'polite:tellows', 'rl', 'cache', 'lock']).toContain(
        family,
      );
  });
});
