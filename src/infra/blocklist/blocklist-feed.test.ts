// The feed's rebuild: skipped while its inputs (the lists' version, the record's callers) are
// those of the held snapshot, run again as soon as either changes.
import { describe, expect, it, vi } from 'vitest';
import { InMemoryOperatorLists } from '../../../harness/operator-lists.js';
import type { OperatorLists } from '../../domain/ports/operator-lists.js';
import { createBlocklistFeed, feedInputsKey } from './blocklist-feed.js';
import { createMemoryBlockedCallerLog } from './memory-blocked-callers.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

function feedWith(lists: OperatorLists) {
  const log = createMemoryBlockedCallerLog({ maxEntries: 100, retentionMs: 86_400_000 });
  let now = NOW;
  const feed = createBlocklistFeed({
    log,
    lists,
    npvPrefixes: [],
    rule: { blockScore: 7, warnScore: 5, npv: 'warn', withheld: 'allow' },
    cidMaxLength: 40,
    maxEntries: 100,
    now: () => now,
  });
  return { feed, log, advance: (ms: number) => (now += ms) };
}

describe('blocklist feed rebuild', () => {
  it('reads the rules only when the lists or the record changed since the held build', async () => {
    const lists = new InMemoryOperatorLists([{ rule: '+33170*', list: 'block', label: 'Plateforme' }]);
    // Counted apart from version(), which the in-memory lists compute from their own rules.
    const activeRules = vi.fn((now?: number) => lists.activeRules(now));
    const { feed, log } = feedWith({ match: (e164, now) => lists.match(e164, now), version: (now) => lists.version(now), activeRules });

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
    const lists = new InMemoryOperatorLists([{ rule: '+33170*', list: 'block', expiresAt: new Date(NOW + 3_600_000).toISOString() }]);
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
    for (const changed of [{ e164: '+33698765433' }, { score: 9 }, { score: null }, { reason: 'Démarchage' }, { atMs: NOW + 1 }]) {
      expect(feedInputsKey('1.1', [{ ...caller, ...changed }])).not.toBe(key);
    }
    expect(feedInputsKey('1.1', [])).not.toBe(key);
  });
});
