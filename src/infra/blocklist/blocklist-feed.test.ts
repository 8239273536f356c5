// The feed's rebuild: skipped while its inputs (the lists' version, the record's callers) are
// those of the held snapshot, run again as soon as either changes.
import { describe, expect, it, vi } from 'vitest';
import { InMemoryOperatorLists } from '../../../harness/operator-lists.js';
import { evidenceOf, InMemoryCallerReports } from '../../../harness/caller-reports.js';
import type { CallerReports } from '../../domain/ports/caller-reports.js';
import { createRuleIndex } from '../../domain/lists/rule-index.js';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import { emptySourceData } from '../../domain/report.js';
import { createBlocklistFeed, feedInputsKey, type FeedLists } from './blocklist-feed.js';
import { createMemoryBlockedCallerLog } from './memory-blocked-callers.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

function feedWith(lists: FeedLists, npv: 'warn' | 'block' = 'warn', reports?: CallerReports) {
  const log = createMemoryBlockedCallerLog({ maxEntries: 100, retentionMs: 86_400_000 });
  let now = NOW;
  const feed = createBlocklistFeed({
    log,
    lists,
    ...(reports === undefined ? {} : { reports }),
    npvPrefixes: [],
    rule: { blockScore: 7, warnScore: 5, npv, withheld: 'allow', callCentre: 'warn', outsideHours: 'block' },
    cidMaxLength: 40,
    maxEntries: 100,
    now: () => now,
  });
  return { feed, log, advance: (ms: number) => (now += ms) };
}

describe('blocklist feed rebuild', () => {
  it('lists the numbers reported as spam, rebuilds when the reports’ version changes, and never one the allow list covers', async () => {
    const lists = new InMemoryOperatorLists([{ rule: '+33612000001', list: 'allow' }]);
    const reports = new InMemoryCallerReports({
      '+33612000001': evidenceOf('spam', { fraud: 3 }),
      '+33612000002': evidenceOf('spam', { fraud: 2 }),
      '+33612000003': evidenceOf('suspect', { fraud: 1 }),
    });
    const reportedSpam = vi.spyOn(reports, 'reportedSpam');
    const { feed } = feedWith(lists, 'warn', reports);
    const first = await feed.refresh();
    expect(first.entries.map((entry) => [entry.digits, entry.source, entry.reason])).toEqual([
      ['33612000002', 'reported', 'SIGNALÉ 2× Arnaque'],
    ]);
    // Nothing changed: no rebuild, the reports not read again.
    expect(await feed.refresh()).toBe(first);
    expect(reportedSpam).toHaveBeenCalledTimes(1);

    // A second reporter on the suspect number: the store's version changes, the feed lists it.
    reports.set('+33612000003', evidenceOf('spam', { fraud: 1, gamble: 1 }));
    const second = await feed.refresh();
    expect(second.entries.map((entry) => entry.digits)).toEqual(['33612000002', '33612000003']);

    // The same evidence under a new version (another instance's write): rebuilt, same content kept.
    reports.setVersion('elsewhere-1');
    expect(await feed.refresh()).toBe(second);
    expect(reportedSpam).toHaveBeenCalledTimes(3);

    // Allowed since: out of the feed.
    lists.add({ rule: '+33612000002', list: 'allow' });
    expect((await feed.refresh()).entries.map((entry) => entry.digits)).toEqual(['33612000003']);
  });

  it('reads the rules only when the lists or the record changed since the held build', async () => {
    const lists = new InMemoryOperatorLists([{ rule: '+33170*', list: 'block', label: 'Plateforme' }]);
    // Counted apart from version(), which the in-memory lists compute from their own rules.
    const activeRules = vi.fn((now?: number) => lists.activeRules(now));
    const { feed, log } = feedWith({
      match: (e164, now) => lists.match(e164, now),
      version: (now) => lists.version(now),
      activeRules,
    });

    const first = await feed.refresh();
    expect(activeRules).toHaveBeenCalledTimes(1);
    expect(first.entries.map((entry) => entry.digits)).toEqual(['33170']);

    // Nothing changed: the held snapshot stays, and nothing is rebuilt.
    expect(await feed.refresh()).toBe(first);
    expect(await feed.refresh()).toBe(first);
    expect(activeRules).toHaveBeenCalledTimes(1);

    // A rule added: rebuilt, with it.
    lists.add({ rule: '+33699000000', list: 'block', label: 'Ajouté' });
    const second = await feed.refresh();
    expect(activeRules).toHaveBeenCalledTimes(2);
    expect(second.entries.map((entry) => entry.digits)).toContain('33699000000');

    // A caller recorded: rebuilt, with it.
    log.record({ e164: '+33698765432', score: 8, reason: 'Arnaque', atMs: NOW });
    const third = await feed.refresh();
    expect(activeRules).toHaveBeenCalledTimes(3);
    expect(third.entries.map((entry) => entry.digits)).toContain('33698765432');
    expect(await feed.refresh()).toBe(third);
    expect(activeRules).toHaveBeenCalledTimes(3);
  });

  it('rebuilds when a caller ages out of the record or a rule expires, with no write', async () => {
    const lists = new InMemoryOperatorLists([
      { rule: '+33170*', list: 'block', expiresAt: new Date(NOW + 3_600_000).toISOString() },
    ]);
    const { feed, log, advance } = feedWith(lists);
    log.record({ e164: '+33698765432', score: 8, reason: 'Arnaque', atMs: NOW });
    expect((await feed.refresh()).entries.map((entry) => entry.digits).sort()).toEqual(['33170', '33698765432']);
    advance(2 * 3_600_000);
    expect((await feed.refresh()).entries.map((entry) => entry.digits)).toEqual(['33698765432']);
    advance(86_400_000);
    expect((await feed.refresh()).entries).toEqual([]);
  });

  it('keys every field the entries and their order depend on', () => {
    const caller = { e164: '+33698765432', score: 8, reason: 'Arnaque', atMs: NOW };
    const key = feedInputsKey('1.1', [caller]);
    expect(feedInputsKey('1.1', [{ ...caller }])).toBe(key);
    expect(feedInputsKey('1.2', [caller])).not.toBe(key);
    for (const changed of [
      { e164: '+33698765433' },
      { score: 9 },
      { score: null },
      { reason: 'Démarchage' },
      { atMs: NOW + 1 },
    ]) {
      expect(feedInputsKey('1.1', [{ ...caller, ...changed }])).not.toBe(key);
    }
    expect(feedInputsKey('1.1', [])).not.toBe(key);
  });
});

const tels = (entries: ReadonlyArray<{ digits: string; wildcard: boolean }>): string[] =>
  entries.map((entry) => `+${entry.digits}${entry.wildcard ? '*' : ''}`);
/** Whether an entry would block `e164` on a Fritz!Box. */
const covers = (entries: ReadonlyArray<{ digits: string; wildcard: boolean }>, e164: string): boolean =>
  entries.some((entry) => (entry.wildcard ? e164.slice(1).startsWith(entry.digits) : e164.slice(1) === entry.digits));
const rule = (text: string, list: 'allow' | 'block'): ListRule => ({
  rule: text,
  list,
  createdAt: '2026-01-01T00:00:00.000Z',
});
/** A lookup whose verdict is block whatever its score: an NPV number with VERDICT_NPV=block. */
const BLOCKED_FACTS = { isNPV: true, sources: emptySourceData(), check: 'answered' as const };

describe('blocklist feed against the lists (issue 44)', () => {
  it('rebuilds block +33* around 4,000 allowed mobiles, so a number allowed later is no longer covered (finding 4)', async () => {
    const lists = new InMemoryOperatorLists([{ rule: '+33*', list: 'block' }]);
    for (let index = 0; index < 4000; index += 1)
      lists.add({ rule: `+336${String((index * 7_919_993 + 12_345) % 100_000_000).padStart(8, '0')}`, list: 'allow' });
    const { feed } = feedWith(lists);
    const first = await feed.refresh();
    expect(feed.failing()).toBeUndefined();
    expect(covers(first.entries, '+33170000000')).toBe(true);
    expect(covers(first.entries, '+33170000001')).toBe(true);
    lists.add({ rule: '+33170000001', list: 'allow' });
    const second = await feed.refresh();
    expect(covers(second.entries, '+33170000001')).toBe(false);
    expect(second.entries.length).toBe(100);
  });

  it('marks the held snapshot as failing while rebuilds fail, and clears it at the next success (finding 4)', async () => {
    const lists = new InMemoryOperatorLists([{ rule: '+33170*', list: 'block' }]);
    let broken = false;
    const errors: unknown[] = [];
    const log = createMemoryBlockedCallerLog({ maxEntries: 10, retentionMs: 86_400_000 });
    const feed = createBlocklistFeed({
      log,
      lists: {
        match: (e164, now) => lists.match(e164, now),
        version: (now) => lists.version(now),
        activeRules: (now) => {
          if (broken) throw new RangeError('Maximum call stack size exceeded');
          return lists.activeRules(now);
        },
      },
      npvPrefixes: [],
      rule: { blockScore: 7, warnScore: 5, npv: 'warn', withheld: 'allow', callCentre: 'warn', outsideHours: 'block' },
      cidMaxLength: 40,
      maxEntries: 100,
      now: () => NOW,
      onError: (error) => errors.push(error),
    });
    const held = await feed.refresh();
    broken = true;
    lists.add({ rule: '+33170000001', list: 'allow' });
    expect(await feed.refresh()).toBe(held);
    expect(await feed.refresh()).toBe(held);
    expect(feed.failing()).toEqual({ sinceMs: NOW, count: 2 });
    expect(errors).toHaveLength(2);
    broken = false;
    const fixed = await feed.refresh();
    expect(feed.failing()).toBeUndefined();
    expect(covers(fixed.entries, '+33170000001')).toBe(false);
  });

  it('decides on the store’s own index when it gives one, without reading every rule as a copy (finding 10)', async () => {
    const index = createRuleIndex([rule('+33170*', 'block'), rule('+33170000001', 'allow')]);
    const activeRules = vi.fn((now?: number) => index.activeRules(now));
    const { feed } = feedWith({
      match: (e164, now) => index.match(e164, now),
      version: (now) => index.version(now),
      activeRules,
      index: () => index,
    });
    const snapshot = await feed.refresh();
    expect(activeRules).not.toHaveBeenCalled();
    expect(covers(snapshot.entries, '+33170000001')).toBe(false);
    expect(covers(snapshot.entries, '+33170000002')).toBe(true);
  });

  it('never records a number the allow list decides for, and forgets a recorded one once it is allowed (finding 14)', async () => {
    const index = createRuleIndex([rule('+33611111111', 'allow'), rule('+33170*', 'block')]);
    const { feed, log } = feedWith(index, 'block');
    feed.recordLookup('+33611111111', BLOCKED_FACTS);
    feed.recordLookup('+33622222222', BLOCKED_FACTS);
    expect((await log.list(NOW)).map((caller) => caller.e164)).toEqual(['+33622222222']);
    index.set(rule('+33622222222', 'allow'));
    const snapshot = await feed.refresh();
    expect(covers(snapshot.entries, '+33622222222')).toBe(false);
    expect(log.size()).toBe(0);
  });

  it('records a lookup by the verdict the reports give: not one reported legitimate whose score alone blocks', async () => {
    const { feed, log } = feedWith(createRuleIndex([]));
    const scoredNine = { ...emptySourceData(), primary: { ...emptySourceData().primary, score: 9 } };
    const facts = { isNPV: false, sources: scoredNine, check: 'answered' as const };
    feed.recordLookup('+33633333333', { ...facts, reports: evidenceOf('legitimate', { legitimate: 2 }) });
    feed.recordLookup('+33644444444', { ...facts, reports: null });
    feed.recordLookup('+33655555555', {
      ...facts,
      sources: emptySourceData(),
      reports: evidenceOf('spam', { fraud: 2 }),
    });
    expect((await log.list(NOW)).map((caller) => [caller.e164, caller.reason]).sort()).toEqual([
      ['+33644444444', 'SPAM? 9/9'],
      ['+33655555555', 'SIGNALÉ 2× Arnaque'],
    ]);
  });

  it('never lets recorded callers evict the entries of the operator’s rules (finding 9)', async () => {
    const index = createRuleIndex([
      rule('+33170*', 'block'),
      rule('+33612345678', 'block'),
      rule('+33612345679', 'block'),
    ]);
    const { feed } = feedWith(index, 'block');
    for (let number = 0; number < 300; number += 1)
      feed.recordLookup(`+33699${String(number).padStart(6, '0')}`, BLOCKED_FACTS);
    const snapshot = await feed.refresh();
    expect(snapshot.entries).toHaveLength(100);
    expect(tels(snapshot.entries.filter((entry) => entry.source === 'rule'))).toEqual([
      '+33170*',
      '+33612345678',
      '+33612345679',
    ]);
  });

  it('lets the event loop through while it reads 100,000 rules: a turn asked for at the first rule comes before the last', async () => {
    const index = createRuleIndex();
    for (let item = 0; item < 100_000; item += 1) {
      const digits = String((item * 7919) % 100_000_000).padStart(8, '0');
      if (item % 5 === 3) index.set(rule(`+337${digits.slice(0, 5)}*`, 'block'));
      else index.set(rule(`+33${item % 5 === 4 ? 7 : 6}${digits}`, item % 5 === 4 ? 'allow' : 'block'));
    }
    // The rules read one at a time, as the store's index gives them; the rule being read when the turn came.
    let read = 0;
    let readAtTurn: number | undefined;
    const inForce = function* (now?: number) {
      for (const held of index.inForce(now)) {
        read += 1;
        if (read === 1) setImmediate(() => (readAtTurn ??= read));
        yield held;
      }
    };
    const lists: FeedLists = {
      match: (e164, now) => index.match(e164, now),
      version: (now) => index.version(now),
      activeRules: (now) => index.activeRules(now),
      index: () => ({ decide: (digits, wildcard, now) => index.decide(digits, wildcard, now), inForce }),
    };
    const { feed } = feedWith(lists, 'block');
    const snapshot = await feed.refresh();
    expect(feed.failing()).toBeUndefined();
    expect(snapshot.entries).toHaveLength(100);
    expect(read).toBeGreaterThanOrEqual(index.size());
    expect(readAtTurn).toBeGreaterThan(1);
    expect(readAtTurn).toBeLessThan(index.size());
  });
});
