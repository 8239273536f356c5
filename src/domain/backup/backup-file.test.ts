import { describe, expect, it } from 'vitest';
import type { ListRule } from '../ports/operator-lists.js';
import { BACKUP_FORMAT, BackupFileError, formatBackupLines, readBackup } from './backup-file.js';

const RULES: ListRule[] = [
  {
    rule: '+33162*',
    list: 'block',
    label: 'NPV',
    labelPublic: true,
    note: 'ARCEP, "NPV" range',
    createdAt: '2026-11-26T02:36:57.950Z',
  },
  {
    rule: '+33612345678',
    list: 'allow',
    label: 'Dr Martin',
    createdAt: '2026-11-26T02:37:19.534Z',
    expiresAt: '2020-01-01T00:00:00.000Z',
  },
  { rule: '+225*', list: 'block', createdAt: '2026-11-27T10:00:00.000Z' },
];

const textOf = (rules: ListRule[]): string =>
  `${formatBackupLines({ createdAt: '2026-11-28T09:00:00.000Z', lists: { rules } }).join('\n')}\n`;

function refusal(text: string): string {
  try {
    readBackup(text);
  } catch (error) {
    if (error instanceof BackupFileError) return error.message;
    throw error;
  }
  throw new Error('the file was accepted');
}

describe('the backup file', () => {
  it('reads back every rule with every field, an expired rule included', () => {
    const backup = readBackup(textOf(RULES));
    expect(backup.createdAt).toBe('2026-11-28T09:00:00.000Z');
    expect(backup.lists.rules).toEqual(RULES);
  });

  it('is JSON naming its format and version, one rule a line', () => {
    const text = textOf(RULES);
    expect(JSON.parse(text)).toMatchObject({ format: BACKUP_FORMAT, version: 1, lists: { rules: expect.any(Array) } });
    expect(text.split('\n').filter((line) => line.includes('"rule"'))).toHaveLength(3);
    expect(readBackup(textOf([])).lists.rules).toEqual([]);
  });

  it('refuses a file of another format, another version, or not JSON, saying which', () => {
    expect(refusal('rule,list\n+33162*,block\n')).toBe(`not a ${BACKUP_FORMAT} file (it is not JSON)`);
    expect(refusal(JSON.stringify({ format: 'something-else', version: 1 }))).toBe(
      `not a ${BACKUP_FORMAT} file (its format is "something-else")`,
    );
    expect(refusal(JSON.stringify({ ...JSON.parse(textOf(RULES)), version: 2 }))).toBe(
      `a ${BACKUP_FORMAT} file of version 2; this phone-rep restores version 1 only`,
    );
  });

  it('refuses a section or a field it does not know, rather than restore part of the file', () => {
    expect(refusal(JSON.stringify({ ...JSON.parse(textOf(RULES)), reports: [] }))).toMatch(
      /section this version does not know, "reports"/,
    );
    const withField = JSON.parse(textOf(RULES)) as { lists: { rules: Array<Record<string, unknown>> } };
    const first = withField.lists.rules[0];
    if (first !== undefined) first.colour = 'red';
    expect(refusal(JSON.stringify(withField))).toMatch(
      /lists\.rules\[0\] has a field this version does not know, "colour"/,
    );
  });

  it('refuses a bad rule, naming it, and a rule given twice', () => {
    const bad = (rule: Record<string, unknown>): string =>
      refusal(JSON.stringify({ format: BACKUP_FORMAT, version: 1, createdAt: 'x', lists: { rules: [rule] } }));
    expect(bad({ rule: '0612345678', list: 'block', createdAt: '2026-01-01' })).toMatch(
      /rules\[0\]\.rule is not a stored rule/,
    );
    expect(bad({ rule: '+33612345678', list: 'maybe', createdAt: '2026-01-01' })).toMatch(
      /list: list is allow or block/,
    );
    expect(bad({ rule: '+33612345678', list: 'block', label: 'a;b', createdAt: '2026-01-01' })).toMatch(/label: /);
    expect(bad({ rule: '+33612345678', list: 'block' })).toMatch(/createdAt is missing/);
    expect(bad({ rule: '+33612345678', list: 'block', labelPublic: 'yes', createdAt: '2026-01-01' })).toMatch(
      /labelPublic is not true or false/,
    );
    const twice = JSON.parse(textOf([RULES[2] as ListRule, RULES[2] as ListRule])) as unknown;
    expect(refusal(JSON.stringify(twice))).toMatch(/lists\.rules\[1\] \(\+225\*\) appears twice/);
  });

  it('refuses more rules than the lists hold', () => {
    expect(() => readBackup(textOf(RULES), { maxRules: 2 })).toThrow(/holds 3 rules; the lists hold at most 2/);
  });
});
