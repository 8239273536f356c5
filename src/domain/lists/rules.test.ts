import { describe, expect, it } from 'vitest';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../numbering/parse-phone-number.js';
import { memoizeParser } from '../numbering/memoize-parser.js';
import { checkLabel, checkRule, normaliseRule } from './rules.js';
import { safeDisplayLine } from '../display-line.js';
import { createRuleIndex, explainDecision } from './rule-index.js';
import { formatListCsv, FILE_COLUMNS, ListCsvError, readListCsv } from './list-csv.js';
import type { ListRule } from '../ports/operator-lists.js';

const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};
const NOW = Date.parse('2026-06-01T00:00:00Z');
const rule = (spelling: string, list: 'allow' | 'block', extra: Partial<ListRule> = {}): ListRule => ({
  rule: spelling,
  list,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe('a rule as written', () => {
  it.each([
    ['+33162*', '+33162*'],
    ['0162*', '+33162*'],
    ['0033162*', '+33162*'],
    ['01 62*', '+33162*'],
    ['+225*', '+225*'],
    ['+331*', '+331*'],
    ['+33*', '+33*'],
    ['+1*', '+1*'],
    ['01*', '+331*'],
    ['06 12 34 56 78', '+33612345678'],
    ['+33 6 12 34 56 78', '+33612345678'],
    ['0033612345678', '+33612345678'],
  ])('%s is stored as %s', (written, stored) => {
    expect(normaliseRule(written, context)).toEqual({ ok: true, value: stored });
  });

  it.each(['+3*', '0*', '+2*', '+22*', 'abc', '*', '+33**', '12*', ''])(
    '%s is refused, naming the rule field',
    (written) => {
      const checked = normaliseRule(written, context);
      expect(checked.ok).toBe(false);
      if (!checked.ok) expect(checked.problem.field).toBe('rule');
    },
  );

  // Issue 44, finding 5: the callers of overseas ranges are read as +262…, +590…, so a national
  // prefix is stored as the numbering plan reads its numbers (ARCEP's blocks say which territory).
  it.each([
    ['0692*', '+262692*'],
    ['0262*', '+262262*'],
    ['0639*', '+262639*'],
    ['0269*', '+262269*'],
    ['0268*', undefined],
    ['0590*', '+590590*'],
    ['0690*', '+590690*'],
    ['0594*', '+594594*'],
    ['0694*', '+594694*'],
    ['0596*', '+596596*'],
    ['0696 1*', '+5966961*'],
    ['0508*', '+508*'],
    ['0508 41*', '+50841*'],
    ['0708*', '+508708*'],
    ['09475*', '+5909475*'],
    ['0033 692*', '+262692*'],
    ['+33 692*', '+262692*'],
    ['+262 0692*', '+262692*'],
    ['+262692*', '+262692*'],
    ['+2626*', '+2626*'],
    ['+262*', '+262*'],
    ['+508*', '+508*'],
  ])('overseas: %s is stored as %s (undefined: refused)', (written, stored) => {
    const checked = normaliseRule(written, context);
    if (stored === undefined)
      expect(checked).toMatchObject({
        ok: false,
        problem: { field: 'rule', reason: expect.stringContaining('several calling codes') as unknown },
      });
    else expect(checked).toEqual({ ok: true, value: stored });
  });

  it.each([
    ['06*', ['+336…', '+2626…', '+5906…', '+5946…', '+5966…']],
    ['069*', ['+3369…', '+26269…', '+59069…']],
    ['0700*', ['+33700…', '+262700…']],
    ['0947*', ['+33947…', '+590947…']],
  ])('a national prefix spanning calling codes (%s) is refused, naming them', (written, named) => {
    const checked = normaliseRule(written, context);
    expect(checked.ok).toBe(false);
    if (!checked.ok) for (const code of named) expect(checked.problem.reason).toContain(code);
    // --force is about length, never about which numbers a prefix names.
    expect(normaliseRule(written, context, { force: true }).ok).toBe(false);
  });

  it('a rule written under the wrong French-plan code names what the parser reads (a caller +33 692… is +262 692…)', () => {
    const parse = context.parsePhoneNumber;
    const caller = parse('+33 6 92 12 34 56');
    const stored = normaliseRule('+33692*', context);
    expect(caller.ok && stored.ok && caller.value.e164.startsWith(stored.value.slice(0, -1))).toBe(true);
    // Every mobile range of every overseas territory: the stored prefix starts the callers' e164.
    for (const national of [
      '0692123456',
      '0693123456',
      '0639001234',
      '0690123456',
      '0694123456',
      '0696123456',
      '0697123456',
      '0262123456',
      '0590123456',
      '0594123456',
    ]) {
      const number = parse(national);
      expect(number.ok, national).toBe(true);
      const rule = normaliseRule(`${national.slice(0, 4)}*`, context);
      expect(number.ok && rule.ok && number.value.e164.startsWith(rule.value.slice(0, -1)), national).toBe(true);
    }
  });

  it('reads a prefix alike through the memoized parser (its cheap reading) and a bare parse', () => {
    const memoized = { ...context, parsePhoneNumber: memoizeParser(context.parsePhoneNumber) };
    const bare = { ...context, parsePhoneNumber: (raw: string) => context.parsePhoneNumber(raw) };
    expect(memoized.parsePhoneNumber.readDialled).toBeDefined();
    for (const written of [
      '0692*',
      '0262*',
      '06*',
      '0508 41*',
      '+33 692*',
      '+33 (0)1 62*',
      '+3300*',
      '+225 01*',
      '+44 (0)20*',
      '0162*',
      '06 12 34 56 78*',
      '+33612345678*',
    ]) {
      expect(normaliseRule(written, memoized), written).toEqual(normaliseRule(written, bare));
    }
  });

  // Issue 44, finding 12: a trunk 0 after the calling code, as people write it.
  it.each([
    ['+33 (0)1 62*', '+33162*'],
    ['0033 0162*', '+33162*'],
    ['+330162*', '+33162*'],
    ['+33 0 6 12*', '+33612*'],
    ['+44 (0)20*', '+4420*'],
    ['+590 (0)690*', '+590690*'],
  ])('%s is stored as %s', (written, stored) => {
    expect(normaliseRule(written, context)).toEqual({ ok: true, value: stored });
  });

  it.each(['+3300*', '0033 00*', '00*'])('%s, which can match no number, is refused with a reason', (written) => {
    const checked = normaliseRule(written, context, { force: true });
    expect(checked).toMatchObject({ ok: false, problem: { field: 'rule' } });
    if (!checked.ok) expect(checked.problem.reason).toMatch(/can match no number|not a prefix/);
  });

  it('a short prefix is kept when forced', () => {
    expect(normaliseRule('+3*', context, { force: true })).toEqual({ ok: true, value: '+3*' });
    expect(normaliseRule('+33*', context, { force: true })).toEqual({ ok: true, value: '+33*' });
  });

  it('labels, notes, lists and expiries are checked', () => {
    const base = { rule: '+33162*', list: 'block' };
    expect(checkRule({ ...base, label: 'Livreur' }, context, { nowMs: NOW })).toMatchObject({
      ok: true,
      value: { label: 'Livreur' },
    });
    expect(checkRule({ ...base, label: 'a\u0007b' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'label' },
    });
    expect(checkRule({ ...base, label: 'a;b' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'label' },
    });
    expect(checkRule({ ...base, label: 'x'.repeat(61) }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'label' },
    });
    expect(checkRule({ ...base, note: 'a\nb' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'note' },
    });
    expect(checkRule({ ...base, list: 'maybe' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'list' },
    });
    expect(checkRule({ ...base, expiresAt: '2020-01-01' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'expiresAt' },
    });
    expect(checkRule({ ...base, expiresAt: 'tomorrow' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'expiresAt' },
    });
    expect(checkRule({ ...base, expiresAt: '2027-01-01' }, context, { nowMs: NOW })).toMatchObject({
      ok: true,
      value: { expiresAt: '2027-01-01T00:00:00.000Z' },
    });
  });
});

describe("a label, shown as the caller's name", () => {
  it('refuses every character the display line would remove, so no label is shown otherwise than written', () => {
    for (const unsafe of [
      '"',
      "'",
      '`',
      ';',
      '|',
      ',',
      '\\',
      '$',
      '{',
      '}',
      '[',
      ']',
      '<',
      '>',
      '%',
      '\u0007',
      '\u200b',
      '\u202e',
      '\u2800',
      '\ufffd',
      '\u2028',
    ]) {
      const checked = checkLabel(`Dr${unsafe}Martin`);
      expect(checked.ok, JSON.stringify(unsafe)).toBe(false);
    }
  });

  it('accepts what the display line keeps as it is', () => {
    for (const label of [
      'Dr Martin',
      'Boulangerie Élise',
      'Mme O’Brien',
      'Agence n°3 (Lyon)',
      'José & Fils',
      'Café-tabac: le 14',
    ]) {
      expect(checkLabel(label), label).toEqual({ ok: true, value: label });
      expect(safeDisplayLine(label, 60)).toBe(label);
    }
  });
});

describe('dates (issue 44, finding 24)', () => {
  it.each([
    '2031-02-30',
    '2031-02-29',
    '2031-04-31',
    '2031-13-01',
    '2031-00-10',
    '2031-01-00',
    '2031-06-01T24:00:00Z',
    '2031-06-01T23:60:00Z',
    '2031-06-01T23:59:60Z',
    '2031-06-01T12:00:00+25:00',
  ])('expiresAt %s, no instant of the calendar, is refused rather than rolled over', (expiresAt) => {
    const checked = checkRule({ rule: '+33162*', list: 'block', expiresAt }, context, { nowMs: NOW });
    expect(checked).toMatchObject({ ok: false, problem: { field: 'expiresAt' } });
    if (!checked.ok) expect(checked.problem.reason).toContain(expiresAt);
  });

  it.each([
    ['2032-02-29', '2032-02-29T00:00:00.000Z'],
    ['2031-12-31T23:59:59Z', '2031-12-31T23:59:59.000Z'],
    ['2031-06-01T12:00:00+02:00', '2031-06-01T10:00:00.000Z'],
  ])('expiresAt %s is kept as %s', (expiresAt, stored) => {
    expect(checkRule({ rule: '+33162*', list: 'block', expiresAt }, context, { nowMs: NOW })).toMatchObject({
      ok: true,
      value: { expiresAt: stored },
    });
  });

  it('an import line with such a date names its line and the field', () => {
    expect(() =>
      readListCsv('rule,list,label,note,expiresAt\n+33162*,block,,,2031-02-30\n', { context, nowMs: NOW }),
    ).toThrow(/^line 2: expiresAt: .*2031-02-30/);
  });
});

describe('which rule applies', () => {
  it('an exact allow inside a blocked prefix lets that one number through', () => {
    const index = createRuleIndex([rule('+33162*', 'block'), rule('+33162001234', 'allow', { label: 'Bank' })]);
    expect(index.match('+33162001234', NOW)).toEqual({
      list: 'allow',
      rule: '+33162001234',
      label: 'Bank',
      labelPublic: false,
    });
    expect(index.match('+33162001235', NOW)).toEqual({
      list: 'block',
      rule: '+33162*',
      label: null,
      labelPublic: false,
    });
    expect(index.match('+33163001235', NOW)).toBeNull();
  });

  it('a longer block inside an allowed prefix blocks', () => {
    const index = createRuleIndex([rule('+33*', 'allow'), rule('+33162*', 'block')]);
    expect(index.match('+33162001234', NOW)?.list).toBe('block');
    expect(index.match('+33612345678', NOW)?.list).toBe('allow');
  });

  it('allow wins at equal length', () => {
    const index = createRuleIndex([rule('+33162001234*', 'block'), rule('+33162001234', 'allow')]);
    expect(index.match('+33162001234', NOW)).toEqual({
      list: 'allow',
      rule: '+33162001234',
      label: null,
      labelPublic: false,
    });
    const reversed = createRuleIndex([rule('+33162001234*', 'allow'), rule('+33162001234', 'block')]);
    expect(reversed.match('+33162001234', NOW)).toEqual({
      list: 'allow',
      rule: '+33162001234*',
      label: null,
      labelPublic: false,
    });
  });

  it('an expired rule no longer applies, and the version changes when it expires', () => {
    const index = createRuleIndex([
      rule('+33162*', 'block'),
      rule('+33162001234', 'allow', { expiresAt: '2026-06-01T00:00:10.000Z' }),
    ]);
    const before = index.version(NOW);
    expect(index.match('+33162001234', NOW)?.list).toBe('allow');
    expect(index.version(NOW + 5_000)).toBe(before);
    expect(index.match('+33162001234', NOW + 10_000)?.list).toBe('block');
    expect(index.version(NOW + 10_000)).not.toBe(before);
    expect(index.activeRules(NOW + 10_000).map((r) => r.rule)).toEqual(['+33162*']);
    expect(explainDecision('+33162001234', index, NOW + 10_000).join('\n')).toContain('expired');
  });

  it('every write changes the version; a replaced rule says so', () => {
    const index = createRuleIndex();
    const v0 = index.version(NOW);
    expect(index.set(rule('+33162*', 'block'))).toBe(false);
    const v1 = index.version(NOW);
    expect(v1).not.toBe(v0);
    expect(index.set(rule('+33162*', 'allow'))).toBe(true);
    expect(index.version(NOW)).not.toBe(v1);
    expect(index.countByList(NOW)).toEqual({ allow: 1, block: 0 });
    expect(index.delete('+33162*')).toBe(true);
    expect(index.match('+33162001234', NOW)).toBeNull();
  });
});

describe('a label made public (issue 44)', () => {
  it('is false unless asked for, kept only with a label, and refused when neither true nor false', () => {
    const base = { rule: '+33162001234', list: 'allow', label: 'Dr Martin' };
    expect(checkRule(base, context, { nowMs: NOW })).toMatchObject({ ok: true, value: { label: 'Dr Martin' } });
    expect(
      checkRule(base, context, { nowMs: NOW }).ok &&
        (checkRule(base, context, { nowMs: NOW }) as { value: ListRule }).value.labelPublic,
    ).toBe(undefined);
    expect(checkRule({ ...base, labelPublic: true }, context, { nowMs: NOW })).toMatchObject({
      ok: true,
      value: { labelPublic: true },
    });
    expect(checkRule({ ...base, labelPublic: 'true' }, context, { nowMs: NOW })).toMatchObject({
      ok: true,
      value: { labelPublic: true },
    });
    expect(checkRule({ rule: '+33162*', list: 'block', labelPublic: true }, context, { nowMs: NOW })).toEqual({
      ok: true,
      value: { rule: '+33162*', list: 'block', createdAt: new Date(NOW).toISOString() },
    });
    expect(checkRule({ ...base, labelPublic: 'yes' }, context, { nowMs: NOW })).toMatchObject({
      ok: false,
      problem: { field: 'labelPublic' },
    });
  });

  it('the match says whether the label is public', () => {
    const index = createRuleIndex([
      rule('+33162001234', 'allow', { label: 'Dr Martin' }),
      rule('+33162001235', 'allow', { label: 'Pharmacie', labelPublic: true }),
    ]);
    expect(index.match('+33162001234', NOW)).toEqual({
      list: 'allow',
      rule: '+33162001234',
      label: 'Dr Martin',
      labelPublic: false,
    });
    expect(index.match('+33162001235', NOW)).toEqual({
      list: 'allow',
      rule: '+33162001235',
      label: 'Pharmacie',
      labelPublic: true,
    });
    expect(index.get('+33162001235')?.labelPublic).toBe(true);
  });

  it('is a trailing CSV column: written as true, and a file without the column still reads (every label private)', () => {
    const rules = [
      rule('+33162001235', 'allow', { label: 'Pharmacie', labelPublic: true }),
      rule('+33162001234', 'allow', { label: 'Dr Martin' }),
    ];
    const text = formatListCsv(rules, FILE_COLUMNS);
    expect(text.split('\n')[0]).toBe('rule,list,label,note,expiresAt,createdAt,labelPublic');
    expect(text.split('\n')[1]).toBe('+33162001235,allow,Pharmacie,,,2026-01-01T00:00:00.000Z,true');
    expect(readListCsv(text, { context, trustNormalForm: true })).toEqual(rules);
    const old = 'rule,list,label,note,expiresAt,createdAt\n+33162001234,allow,Dr Martin,,,2026-01-01T00:00:00.000Z\n';
    expect(readListCsv(old, { context, trustNormalForm: true })).toEqual([rules[1]]);
  });
});

describe('the CSV', () => {
  it('round-trips notes with commas and quotes', () => {
    const rules = [
      rule('+33162*', 'block', { note: 'NPV range, "robocalls"', label: 'NPV' }),
      rule('+33612345678', 'allow', { expiresAt: '2027-01-01T00:00:00.000Z' }),
    ];
    const text = formatListCsv(rules, FILE_COLUMNS);
    expect(readListCsv(text, { context, trustNormalForm: true })).toEqual(rules);
  });

  it('names the line and the reason of a bad row', () => {
    const text = 'rule,list,label,note,expiresAt\n+33162*,block,,,\n# a comment\n+3*,block,,,\n';
    expect(() => readListCsv(text, { context, nowMs: NOW })).toThrow(ListCsvError);
    try {
      readListCsv(text, { context, nowMs: NOW });
    } catch (error) {
      expect((error as ListCsvError).line).toBe(4);
      expect((error as ListCsvError).message).toMatch(/^line 4: rule: .*too short/);
    }
  });
});
