// The screening record on real Redis (docs/console.md): two instances' counts are summed in one
// hash per hour, their calls go to one log trimmed to its size and its age, the feed clients'
// fetches are shared; with Redis unusable a batch stays in the instance's memory and is read from
// there. Every key under this file's own prefix; nothing holds a number but the log.
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, type ScreenedCall } from '../../domain/ports/screening-record.js';
import { createRedisClient } from '../redis/redis-client.js';
import { listKeys, useRedisTestClients } from '../../../test/support/redis.js';
import { createRedisScreeningRecord } from './redis-screening-record.js';

const { prefix, admin, readyClient } = useRedisTestClients('screening');
const HOUR = Date.parse('2026-11-30T14:00:00Z');

const call = (atMs: number, number: string, more: Partial<ScreenedCall> = {}): ScreenedCall => ({
  atMs,
  number,
  verdict: 'block',
  decidedBy: 'score',
  cid: 'SPAM 9/10',
  ...more,
});

const options = { statsDays: 7, callLogRetentionDays: 7, callLogMaxEntries: 5, now: () => HOUR + 60_000 };

describe('the Redis screening record', () => {
  it('sums two instances’ counts per hour and keeps one log for both, newest first', async () => {
    const one = createRedisScreeningRecord({ ...options, client: await readyClient() });
    const two = createRedisScreeningRecord({ ...options, client: await readyClient() });
    await one.add({ calls: [call(HOUR + 1000, '+33612345678'), call(HOUR + 2000, '+33612345679')], reports: [HOUR] });
    await two.add({
      calls: [call(HOUR + 3000, '+33162123456', { verdict: 'warn', decidedBy: 'npv', cid: 'Démarchage (NPV)' })],
      reports: [HOUR + 10, HOUR - HOUR_MS],
    });
    for (const record of [one, two]) {
      const [previous, current] = await record.hourly(HOUR - HOUR_MS, HOUR);
      expect(current?.verdicts).toEqual({ block: 2, warn: 1, allow: 0, unknown: 0 });
      expect(current?.decidedBy).toMatchObject({ score: 2, npv: 1, lists: 0, none: 0 });
      expect(current?.reports).toBe(2);
      expect(previous?.reports).toBe(1);
      expect((await record.calls({ limit: 10 }, HOUR + 60_000)).map((entry) => entry.number)).toEqual([
        '+33162123456',
        '+33612345679',
        '+33612345678',
      ]);
      expect(await record.calls({ limit: 10, decidedBy: 'npv' }, HOUR + 60_000)).toEqual([
        call(HOUR + 3000, '+33162123456', { verdict: 'warn', decidedBy: 'npv', cid: 'Démarchage (NPV)' }),
      ]);
    }
    // The hour's hash expires STATS_DAYS after the hour ends; it holds no number.
    const key = `${prefix}stats:hour:${HOUR}`;
    const expiresAt = await admin.pexpiretime(key);
    expect(expiresAt).toBe(HOUR + HOUR_MS + 7 * DAY_MS);
    expect(Object.keys(await admin.hgetall(key)).sort()).toEqual(['d:npv', 'd:score', 'reports', 'v:block', 'v:warn']);
  });

  it('trims the log to CALL_LOG_MAX_ENTRIES and to the retention', async () => {
    const client = await readyClient();
    const record = createRedisScreeningRecord({ ...options, client });
    await admin.del(`${prefix}calls:log`);
    const old = HOUR - 8 * DAY_MS;
    await record.add({ calls: [call(old, '+33600000000')], reports: [] });
    const calls = Array.from({ length: 7 }, (_, index) => call(HOUR + index, `+3361000000${index}`));
    await record.add({ calls, reports: [] });
    expect(await admin.zcard(`${prefix}calls:log`)).toBe(5);
    const listed = await record.calls({ limit: 100 }, HOUR + 60_000);
    expect(listed.map((entry) => entry.number)).toEqual([
      '+33610000006',
      '+33610000005',
      '+33610000004',
      '+33610000003',
      '+33610000002',
    ]);
    // Read at a time past the retention, nothing is listed.
    expect(await record.calls({ limit: 100 }, HOUR + 8 * DAY_MS)).toEqual([]);
    expect(await admin.pttl(`${prefix}calls:log`)).toBeGreaterThan(6 * DAY_MS);
  });

  it('logs nothing when the retention is 0, and still counts', async () => {
    const client = await readyClient();
    await admin.del(`${prefix}calls:log`);
    const record = createRedisScreeningRecord({ ...options, callLogRetentionDays: 0, client });
    await record.add({ calls: [call(HOUR + 5, '+33612345678')], reports: [] });
    expect(await admin.exists(`${prefix}calls:log`)).toBe(0);
    expect(await record.calls({ limit: 10 }, HOUR + 60_000)).toEqual([]);
    const [counts] = await record.hourly(HOUR, HOUR);
    expect(counts?.verdicts.block).toBeGreaterThan(0);
  });

  it('shares the feed clients’ last fetches', async () => {
    const one = createRedisScreeningRecord({ ...options, client: await readyClient() });
    const two = createRedisScreeningRecord({ ...options, client: await readyClient() });
    await one.recordFeedFetch({ client: 'fritzbox', atMs: HOUR, entries: 12 });
    await two.recordFeedFetch({ client: 'davx5', atMs: HOUR + 5, entries: 13 });
    await two.recordFeedFetch({ client: 'fritzbox', atMs: HOUR + 9, entries: 14 });
    expect(await one.feedFetches()).toEqual([
      { client: 'fritzbox', atMs: HOUR + 9, entries: 14 },
      { client: 'davx5', atMs: HOUR + 5, entries: 13 },
    ]);
  });

  it('keeps a batch in memory while Redis is unusable, and reads it from there', async () => {
    // A port nothing listens on: the client is never ready, so every attempt takes its fallback.
    const client = createRedisClient('redis://127.0.0.1:1', { keyPrefix: `${prefix}down:` });
    try {
      const record = createRedisScreeningRecord({ ...options, client });
      await record.add({
        calls: [call(HOUR + 7, '+33612345670', { verdict: 'unknown', decidedBy: 'none' })],
        reports: [HOUR],
      });
      await record.recordFeedFetch({ client: 'spamblocker', atMs: HOUR, entries: 3 });
      const [counts] = await record.hourly(HOUR, HOUR);
      expect(counts?.verdicts).toEqual({ block: 0, warn: 0, allow: 0, unknown: 1 });
      expect(counts?.reports).toBe(1);
      expect((await record.calls({ limit: 10 }, HOUR + 60_000)).map((entry) => entry.number)).toEqual(['+33612345670']);
      expect(await record.feedFetches()).toEqual([{ client: 'spamblocker', atMs: HOUR, entries: 3 }]);
      expect(await listKeys(admin, `${prefix}down:`)).toEqual([]);
    } finally {
      await client.quit();
    }
  });
});
