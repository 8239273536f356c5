// The console's search of the rules: what a typed query becomes (ruleQueryOf) and the index's
// pages (RuleIndex.search), ordered by spelling, counted in all, and fresh after every write.
import { describe, expect, it } from 'vitest';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../numbering/parse-phone-number.js';
import type { ListRule } from '../ports/operator-lists.js';
import { createRuleIndex } from './rule-index.js';
import { ruleQueryOf } from './rule-search.js';

const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};

const rule = (text: string, list: 'allow' | 'block', extra: Partial<ListRule> = {}): ListRule => ({
  rule: text,
  list,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

const page = { offset: 0, limit: 50 };

describe('ruleQueryOf', () => {
  it('matches every rule when empty, and text alone when it is not digits', () => {
    expect(ruleQueryOf('  ', page, context)).toEqual(page);
    expect(ruleQueryOf(' Cabinet ', { ...page, list: 'allow' }, context)).toEqual({
      ...page,
      list: 'allow',
      text: 'cabinet',
    });
  });

  it('reads digits anywhere, and a national or 00 spelling as the prefix a rule written so would be', () => {
    expect(ruleQueryOf('612', page, context)).toMatchObject({ digitsContain: ['612'] });
    expect(ruleQueryOf('+33 6 12', page, context)).toMatchObject({ digitsContain: ['33612'] });
    expect(ruleQueryOf('01 62', page, context)).toMatchObject({ digitsContain: ['0162'], digitsStart: ['33162'] });
    expect(ruleQueryOf('0692', page, context)).toMatchObject({ digitsStart: ['262692'] });
    expect(ruleQueryOf('0033 162*', page, context)).toMatchObject({ digitsStart: ['33162'] });
  });
});

describe('RuleIndex.search', () => {
  const index = createRuleIndex([
    rule('+33612345678', 'allow', { label: 'Cabinet Dupont' }),
    rule('+33162*', 'block', { note: 'démarchage CABINET' }),
    rule('+262692*', 'block'),
    rule('+33612000001', 'block', { expiresAt: '2026-02-01T00:00:00.000Z' }),
  ]);
  const search = (q: string, extra: Partial<typeof page & { list: 'allow' | 'block' }> = {}) =>
    index.search(ruleQueryOf(q, { ...page, ...extra }, context));
  const spellings = (found: { rules: ListRule[] }) => found.rules.map((each) => each.rule);

  it('pages through every rule, expired ones included, in the order of their spellings', () => {
    expect(spellings(search(''))).toEqual(['+262692*', '+33162*', '+33612000001', '+33612345678']);
    expect(search('', { offset: 1, limit: 2 })).toEqual({
      total: 4,
      rules: [
        rule('+33162*', 'block', { note: 'démarchage CABINET' }),
        rule('+33612000001', 'block', { expiresAt: '2026-02-01T00:00:00.000Z' }),
      ],
    });
    expect(search('', { offset: 9 })).toEqual({ total: 4, rules: [] });
  });

  it('finds by digits, national spelling, label or note (case-insensitive), and by list', () => {
    expect(spellings(search('6120'))).toEqual(['+33612000001']);
    expect(spellings(search('06 12'))).toEqual(['+33612000001', '+33612345678']);
    expect(spellings(search('0692'))).toEqual(['+262692*']);
    expect(spellings(search('cabinet'))).toEqual(['+33162*', '+33612345678']);
    expect(spellings(search('cabinet', { list: 'block' }))).toEqual(['+33162*']);
    expect(search('cabinet', { limit: 1 }).total).toBe(2);
    expect(search('nobody').total).toBe(0);
  });

  it('sees every write at the next search', () => {
    const changing = createRuleIndex([rule('+33612345678', 'allow')]);
    const all = () => changing.search({ offset: 0, limit: 10 }).rules.map((each) => each.rule);
    expect(all()).toEqual(['+33612345678']);
    changing.set(rule('+3316*', 'block'));
    expect(all()).toEqual(['+3316*', '+33612345678']);
    changing.delete('+33612345678');
    expect(all()).toEqual(['+3316*']);
  });
});
