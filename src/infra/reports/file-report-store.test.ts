// The reports file: a vote in one process is seen by another (the change event awaited), one
// vote per token and number, the per-token daily cap (also with two writers at once), restart,
// retention (the vote gone from the file), a torn line, and a store that cannot be written.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ReportStoreUnavailable, type ReportVote } from '../../domain/ports/caller-reports.js';
import { openFileReportStore } from './file-report-store.js';
import type { ReportSettings, ReportStore } from './report-store.js';
import { changeEvents } from '../../../test/support/report-store-events.js';

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'phone-rep-reports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let cases = 0;
const freshPath = (): string => {
  cases += 1;
  const sub = join(dir, `case-${cases}`);
  mkdirSync(sub, { recursive: true });
  return join(sub, 'reports.jsonl');
};

const SETTINGS: ReportSettings = { halfLifeDays: 125, minReporters: 2, retentionDays: 180, maxPerTokenDay: 100 };
// 23:00 UTC: the cap's Retry-After is one hour.
const NOW = Date.parse('2026-11-28T23:00:00.000Z');
const NUMBER = '+33612345678';
const vote = (tokenId: string, rating: ReportVote['rating'] = 'fraud', at = NOW, e164 = NUMBER): ReportVote => ({
  e164,
  tokenId,
  rating,
  at,
});

const opened: ReportStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

async function openStore(
  path: string,
  settings: Partial<ReportSettings> = {},
  onChange?: () => void,
  clock: () => number = () => NOW,
): Promise<ReportStore> {
  const store = await openFileReportStore({
    path,
    settings: { ...SETTINGS, ...settings },
    clock,
    ...(onChange === undefined ? {} : { onChange }),
  });
  opened.push(store);
  return store;
}

describe('the reports file', () => {
  it('shows a vote recorded by one store to another store on the same file', async () => {
    const path = freshPath();
    const events = changeEvents();
    const first = await openStore(path);
    const second = await openStore(path, {}, events.onChange);
    expect(second.evidence(NUMBER)).toBeNull();
    await first.record(vote('tok_a'));
    await first.record(vote('tok_b', 'advertising'));
    await events.until(() => second.evidence(NUMBER)?.reporters === 2);
    expect(second.evidence(NUMBER)).toMatchObject({
      verdict: 'spam',
      spam: 2,
      categories: { fraud: 1, advertising: 1 },
    });
    expect([...second.reportedSpam()].map((entry) => entry.e164)).toEqual([NUMBER]);
  });

  it('keeps one vote per token and number: the latest replaces the earlier', async () => {
    const path = freshPath();
    const store = await openStore(path);
    expect(await store.record({ ...vote('tok_a'), comment: 'arnaque' })).toEqual({ ok: true, replaced: false });
    const before = store.version();
    expect(await store.record(vote('tok_a', 'legitimate', NOW + 1000))).toEqual({ ok: true, replaced: true });
    expect(store.version()).not.toBe(before);
    expect(store.votes(NUMBER)).toEqual([vote('tok_a', 'legitimate', NOW + 1000)]);
    const reopened = await openStore(path);
    expect(reopened.votes(NUMBER)).toEqual([vote('tok_a', 'legitimate', NOW + 1000)]);
  });

  it('refuses a token past its daily cap until the next UTC midnight, changing nothing, and remembers it after a restart', async () => {
    const path = freshPath();
    let now = NOW;
    const store = await openStore(path, { maxPerTokenDay: 3 }, undefined, () => now);
    for (const number of ['+33612345671', '+33612345672', '+33612345671'])
      expect((await store.record(vote('tok_a', 'fraud', now, number))).ok).toBe(true);
    const size = statSync(path).size;
    expect(await store.record(vote('tok_a', 'fraud', now, '+33612345673'))).toEqual({
      ok: false,
      reason: 'token_day_cap',
      retryAfterSeconds: 3600,
    });
    expect(statSync(path).size).toBe(size);
    expect(store.evidence('+33612345673')).toBeNull();
    // Another token is not concerned.
    expect((await store.record(vote('tok_b', 'fraud', now, '+33612345673'))).ok).toBe(true);
    await store.close();
    const restarted = await openStore(path, { maxPerTokenDay: 3 }, undefined, () => now);
    expect((await restarted.record(vote('tok_a', 'fraud', now, '+33612345674'))).ok).toBe(false);
    now += 3600_000; // midnight UTC
    expect((await restarted.record(vote('tok_a', 'fraud', now, '+33612345674'))).ok).toBe(true);
  });

  it('never lets two writers at once pass the cap together, and loses none of their votes', async () => {
    const path = freshPath();
    const first = await openStore(path, { maxPerTokenDay: 5 });
    const second = await openStore(path, { maxPerTokenDay: 5 });
    const capped = await Promise.all(
      Array.from({ length: 12 }, (_, at) =>
        (at % 2 === 0 ? first : second).record(
          vote('tok_same', 'fraud', NOW, `+336123456${String(at).padStart(2, '0')}`),
        ),
      ),
    );
    expect(capped.filter((outcome) => outcome.ok)).toHaveLength(5);
    const reporters = await Promise.all(
      Array.from({ length: 20 }, (_, at) => (at % 2 === 0 ? first : second).record(vote(`tok_${at}`))),
    );
    expect(reporters.every((outcome) => outcome.ok)).toBe(true);
    const reread = await openStore(path);
    expect(reread.evidence(NUMBER)?.reporters).toBe(20);
  });

  it('writes the votes asked at once together, each checked against its cap in the order asked', async () => {
    const path = freshPath();
    const store = await openStore(path, { maxPerTokenDay: 3 });
    // The first vote starts a write; the nine asked meanwhile ride along in the next one.
    const outcomes = await Promise.all([
      ...Array.from({ length: 5 }, (_, at) => store.record(vote('tok_a', 'fraud', NOW, `+3361234560${at}`))),
      store.record(vote('tok_b', 'fraud', NOW, '+33612345600')),
      store.record(vote('tok_b', 'advertising', NOW, '+33612345600')),
      store.record(vote('tok_c', 'legitimate', NOW, '+33612345609')),
    ]);
    expect(outcomes.map((outcome) => (outcome.ok ? outcome.replaced : outcome.reason))).toEqual([
      false,
      false,
      false,
      'token_day_cap',
      'token_day_cap',
      false,
      true,
      false,
    ]);
    // One line per vote recorded, none for the two refused; another reader sees the same votes.
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(6);
    const reread = await openStore(path, { maxPerTokenDay: 3 });
    expect(reread.evidence('+33612345600')).toMatchObject({ reporters: 2, categories: { fraud: 1, advertising: 1 } });
    expect(reread.evidence('+33612345603')).toBeNull();
    expect((await reread.record(vote('tok_a', 'fraud', NOW, '+33612345608'))).ok).toBe(false);
  });

  it('deletes votes past REPORT_RETENTION_DAYS from the file, and the other store drops them too', async () => {
    const path = freshPath();
    const events = changeEvents();
    let now = NOW;
    const first = await openStore(path, {}, undefined, () => now);
    const second = await openStore(path, {}, events.onChange, () => now);
    await first.record(vote('tok_a', 'fraud', NOW, '+33612345671'));
    await first.record(vote('tok_b', 'fraud', NOW + 10 * DAY, '+33612345672'));
    await events.until(() => second.evidence('+33612345672') !== null);
    now = NOW + 180 * DAY;
    expect(first.evidence('+33612345671')).toBeNull(); // not counted from the moment it expires
    expect(await first.expire()).toBe(1);
    expect(readFileSync(path, 'utf8')).not.toContain('+33612345671');
    expect(readFileSync(path, 'utf8')).toContain('+33612345672');
    await events.until(() => second.votes('+33612345671').length === 0);
    expect(second.votes('+33612345672')).toHaveLength(1);
  });

  it('keeps the day count through a compaction', async () => {
    const path = freshPath();
    const store = await openStore(path, { maxPerTokenDay: 2, retentionDays: 1 });
    await store.record(vote('tok_a', 'fraud', NOW - 2 * DAY, '+33612345671'));
    await store.record(vote('tok_a', 'fraud', NOW, '+33612345672'));
    expect(await store.expire()).toBe(1);
    expect(readFileSync(path, 'utf8')).not.toContain('+33612345671');
    const reopened = await openStore(path, { maxPerTokenDay: 2, retentionDays: 1 });
    expect((await reopened.record(vote('tok_a', 'fraud', NOW, '+33612345673'))).ok).toBe(false);
  });

  it('deletes expired votes at start', async () => {
    const path = freshPath();
    const store = await openStore(path);
    await store.record(vote('tok_a'));
    await store.close();
    await openStore(path, {}, undefined, () => NOW + 181 * DAY);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('leaves out a line torn by a crash, and starts the next vote on a line of its own', async () => {
    const path = freshPath();
    const store = await openStore(path);
    await store.record(vote('tok_a'));
    appendFileSync(path, '{"n":"+3361234');
    await store.record(vote('tok_b'));
    const reopened = await openStore(path);
    expect(reopened.evidence(NUMBER)?.reporters).toBe(2);
  });

  it('throws ReportStoreUnavailable when the file cannot be locked, and changes nothing', async () => {
    const path = freshPath();
    // A lock no writer can take over (a directory, fresh: its lease has not run out).
    mkdirSync(`${path}.lock`);
    const store = await openFileReportStore({ path, settings: SETTINGS, clock: () => NOW, lockWaitMs: 50 });
    opened.push(store);
    await expect(store.record(vote('tok_a'))).rejects.toBeInstanceOf(ReportStoreUnavailable);
    expect(store.evidence(NUMBER)).toBeNull();
    expect(() => statSync(path)).toThrow(/ENOENT/);
  });
});
