// The screening record in memory and the recorder in front of it (docs/console.md): hours kept
// STATS_DAYS, the log a ring of CALL_LOG_MAX_ENTRIES whose expired calls are not listed, nothing
// logged with a retention of 0; a noted call is worked out only when flushed, never as it is noted.
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, feedClientOf, type PendingCall } from '../../domain/ports/screening-record.js';
import { createMemoryScreeningRecord } from './memory-screening-record.js';
import { createScreeningRecorder } from './screening-recorder.js';

const HOUR = Date.parse('2026-11-30T14:00:00Z');

const pending = (atMs: number, number: string, worked: string[] = []): PendingCall => ({
  atMs,
  number,
  decision: () => {
    worked.push(`decision ${number}`);
    return { verdict: 'allow', decidedBy: 'score' };
  },
  cidLine: () => {
    worked.push(`cid ${number}`);
    return 'Fiable 2/10';
  },
});

describe('the memory screening record', () => {
  it('keeps a ring of the newest calls and lists none past the retention', async () => {
    const clock = { nowMs: HOUR };
    const record = createMemoryScreeningRecord({
      statsDays: 7,
      callLogRetentionDays: 1,
      callLogMaxEntries: 3,
      now: () => clock.nowMs,
    });
    for (let index = 0; index < 5; index += 1)
      await record.add({
        calls: [{ atMs: HOUR + index, number: `+3361000000${index}`, verdict: 'block', decidedBy: 'lists', cid: 'x' }],
        reports: [],
      });
    expect(record.logSize()).toBe(3);
    expect((await record.calls({ limit: 10 }, HOUR + 10)).map((call) => call.number)).toEqual([
      '+33610000004',
      '+33610000003',
      '+33610000002',
    ]);
    expect(await record.calls({ limit: 10 }, HOUR + DAY_MS + 10)).toEqual([]);
  });

  it('forgets hours older than STATS_DAYS', async () => {
    const clock = { nowMs: HOUR };
    const record = createMemoryScreeningRecord({
      statsDays: 7,
      callLogRetentionDays: 0,
      callLogMaxEntries: 3,
      now: () => clock.nowMs,
    });
    await record.add({ calls: [], reports: [HOUR] });
    clock.nowMs = HOUR + 7 * DAY_MS + HOUR_MS;
    await record.add({ calls: [], reports: [clock.nowMs] });
    const [first] = await record.hourly(HOUR, HOUR);
    expect(first?.reports).toBe(0);
    expect(await record.calls({ limit: 10 }, clock.nowMs)).toEqual([]);
  });
});

describe('the screening recorder', () => {
  it('works a call out only when it flushes, and leaves the line out when the log is off', async () => {
    const worked: string[] = [];
    const logged = createScreeningRecorder({
      record: createMemoryScreeningRecord({ statsDays: 7, callLogRetentionDays: 7, callLogMaxEntries: 10 }),
      logsCalls: true,
    });
    logged.noteCall(pending(Date.now(), '+33612345678', worked));
    expect(worked).toEqual([]);
    await logged.flush();
    expect(worked).toEqual(['decision +33612345678', 'cid +33612345678']);
    expect(await logged.record.calls({ limit: 10 }, Date.now())).toMatchObject([
      { number: '+33612345678', verdict: 'allow', decidedBy: 'score', cid: 'Fiable 2/10' },
    ]);

    const unlogged = createScreeningRecorder({
      record: createMemoryScreeningRecord({ statsDays: 7, callLogRetentionDays: 0, callLogMaxEntries: 10 }),
      logsCalls: false,
    });
    worked.splice(0);
    unlogged.noteCall(pending(Date.now(), '+33612345679', worked));
    await unlogged.flush();
    expect(worked).toEqual(['decision +33612345679']);
    const [counts] = await unlogged.record.hourly(
      Math.floor(Date.now() / HOUR_MS) * HOUR_MS,
      Math.floor(Date.now() / HOUR_MS) * HOUR_MS,
    );
    expect(counts?.verdicts.allow).toBe(1);
    expect(await unlogged.record.calls({ limit: 10 }, Date.now())).toEqual([]);
  });

  it('leaves out a call that cannot be worked out, and counts the others', async () => {
    const errors: unknown[] = [];
    const recorder = createScreeningRecorder({
      record: createMemoryScreeningRecord({ statsDays: 7, callLogRetentionDays: 7, callLogMaxEntries: 10 }),
      logsCalls: true,
      onError: (error) => errors.push(error),
    });
    recorder.noteCall({
      ...pending(Date.now(), '+33612345678'),
      decision: () => {
        throw new Error('bug');
      },
    });
    recorder.noteCall(pending(Date.now(), '+33612345679'));
    await recorder.flush();
    expect(errors).toHaveLength(1);
    expect((await recorder.record.calls({ limit: 10 }, Date.now())).map((call) => call.number)).toEqual([
      '+33612345679',
    ]);
  });
});

describe('the feed client families', () => {
  it.each([
    ['AVM FRITZ!Box 7590 154.07.57', 'fritzbox'],
    ['FRITZ!OS', 'fritzbox'],
    ['DAVx5/4.4.2-ose (dav4jvm; okhttp/4.12.0) Android/14', 'davx5'],
    ['DAVdroid/1.10', 'davx5'],
    ['SpamBlocker/4.0', 'spamblocker'],
    ['curl/8.5.0', 'other'],
    [undefined, 'other'],
  ] as const)('reads %s as %s', (userAgent, family) => {
    expect(feedClientOf(userAgent)).toBe(family);
  });
});
