// `decide`: the rule that decides for a number or for a whole range, as the blocklist feed asks it.
import { describe, expect, it } from 'vitest';
import type { ListRule } from '../ports/operator-lists.js';
import { createRuleIndex } from './rule-index.js';

const rule = (text: string, list: 'allow' | 'block', extra: Partial<ListRule> = {}): ListRule => ({
  rule: text,
  list,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe('rule index decide', () => {
  const index = createRuleIndex([
    rule('+33*', 'block'),
    rule('+33612345678', 'allow', { label: 'Boss' }),
    rule('+336123*', 'allow'),
    rule('+3361234*', 'block', { expiresAt: '2026-06-01T00:00:00.000Z' }),
    rule('+33699*', 'block'),
    rule('+336991', 'allow'),
  ]);
  const before = Date.parse('2026-03-01T00:00:00Z');
  const after = Date.parse('2026-07-01T00:00:00Z');

  it('decides a number as match does', () => {
    for (const digits of ['33612345678', '33612345670', '33611111111', '336991', '4412345678']) {
      expect(index.decide(digits, false, before)).toEqual(index.match(`+${digits}`, before));
    }
    expect(index.decide('33612345678', false, before)).toEqual({
      list: 'allow',
      rule: '+33612345678',
      label: 'Boss',
      labelPublic: false,
    });
  });

  it('decides a range by the longest prefix rule no longer than it, never by an exact rule', () => {
    expect(index.decide('33612345678', true, before)?.rule).toBe('+3361234*');
    expect(index.decide('3361234', true, before)?.rule).toBe('+3361234*');
    expect(index.decide('336123', true, before)?.rule).toBe('+336123*');
    expect(index.decide('336991', true, before)?.rule).toBe('+33699*');
    expect(index.decide('44', true, before)).toBeNull();
    // Expired: the shorter rule decides.
    expect(index.decide('33612345678', true, after)?.rule).toBe('+336123*');
  });

  it('gives the rules in force, without the expired ones (activeRules is the same walk, collected)', () => {
    expect(
      index.activeRules(after).map(({ rule: spelling, list, label }) => ({ rule: spelling, list, label })),
    ).toEqual([...index.inForce(after)]);
    expect([...index.inForce(before)].map((item) => item.rule)).toContain('+3361234*');
    expect([...index.inForce(after)].map((item) => item.rule)).not.toContain('+3361234*');
    expect([...index.inForce(after)].find((item) => item.rule === '+33612345678')).toEqual({
      rule: '+33612345678',
      list: 'allow',
      label: 'Boss',
    });
  });

  it('keeps its version moving with expiries as rules that expire are added, replaced and removed', () => {
    const versions = createRuleIndex([rule('+33170*', 'block')]);
    const at = (iso: string): number => Date.parse(iso);
    expect(versions.version(at('2026-03-01'))).toBe(versions.version(at('2026-09-01')));
    versions.set(rule('+33612345678', 'block', { expiresAt: '2026-06-01T00:00:00.000Z' }));
    expect(versions.version(at('2026-03-01'))).not.toBe(versions.version(at('2026-09-01')));
    // Replaced by one that does not expire: no expiry left between the two instants.
    versions.set(rule('+33612345678', 'block'));
    expect(versions.version(at('2026-03-01'))).toBe(versions.version(at('2026-09-01')));
    versions.set(rule('+33612345679', 'allow', { expiresAt: '2026-06-01T00:00:00.000Z' }));
    expect(versions.version(at('2026-03-01'))).not.toBe(versions.version(at('2026-09-01')));
    versions.delete('+33612345679');
    expect(versions.version(at('2026-03-01'))).toBe(versions.version(at('2026-09-01')));
    versions.replaceAll([rule('+33*', 'block', { expiresAt: '2026-06-01T00:00:00.000Z' })]);
    expect(versions.version(at('2026-03-01'))).not.toBe(versions.version(at('2026-09-01')));
  });
});
