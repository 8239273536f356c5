import { describe, expect, it } from 'vitest';
import type { ReportVote } from '../ports/caller-reports.js';
import type { ListRule } from '../ports/operator-lists.js';
import type { StoredToken } from '../reports/tokens.js';
import { BACKUP_FORMAT, BackupFileError, formatBackupLines, readBackup, type Dismissal } from './backup-file.js';

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

const TOKENS: StoredToken[] = [
  {
    id: 'tok_0123456789',
    label: 'Kitchen phone',
    createdAt: '2026-11-28T13:47:12.345Z',
    expiresAt: '2027-12-31T00:00:00.000Z',
    lastUsedAt: '2026-11-28T14:00:00.000Z',
    hash: 'a'.repeat(64),
  },
  {
    id: 'tok_abcdef0123',
    label: 'Old PBX',
    createdAt: '2026-01-01T00:00:00.000Z',
    revokedAt: '2026-06-01T00:00:00.000Z',
    hash: 'b'.repeat(64),
  },
];

const VOTES: ReportVote[] = [
  {
    e164: '+33612345678',
    tokenId: 'tok_0123456789',
    rating: 'fraud',
    at: Date.parse('2026-11-28T10:00:00.123Z'),
    comment: 'faux "conseiller"',
  },
  { e164: '+33612345678', tokenId: 'tok_abcdef0123', rating: 'legitimate', at: Date.parse('2026-05-01T00:00:00Z') },
];

const DISMISSALS: Dismissal[] = [
  { e164: '+33612345678', at: Date.parse('2026-11-28T11:00:00.456Z') },
  { e164: '+33162000001', at: Date.parse('2026-11-01T00:00:00Z') },
];

const fullText = (): string =>
  `${formatBackupLines({ createdAt: '2026-11-28T09:00:00.000Z', lists: { rules: RULES }, tokens: TOKENS, reports: VOTES, dismissals: DISMISSALS }).join('\n')}\n`;

/** A backup written before the dismissals were backed up. */
const versionTwoText = (): string => {
  const { dismissals: _dismissals, ...rest } = JSON.parse(fullText()) as Record<string, unknown>;
  return JSON.stringify({ ...rest, version: 2 });
};

/** A backup written before the tokens and reports existed. */
const versionOneOf = (rules: ListRule[]): string =>
  JSON.stringify({ format: BACKUP_FORMAT, version: 1, createdAt: '2026-11-28T09:00:00.000Z', lists: { rules } });

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

  it('reads back every token with its hash, every vote and every dismissal, with its time to the millisecond', () => {
    const backup = readBackup(fullText());
    expect(backup.tokens).toEqual(TOKENS);
    expect(backup.reports).toEqual(VOTES);
    expect(backup.dismissals).toEqual(DISMISSALS);
    expect(backup.lists.rules).toEqual(RULES);
  });

  it('reads a file of version 2 (before the dismissals): no dismissals to restore', () => {
    const backup = readBackup(versionTwoText());
    expect(backup.tokens).toEqual(TOKENS);
    expect(backup.reports).toEqual(VOTES);
    expect(backup.dismissals).toBeUndefined();
    expect(refusal(JSON.stringify({ ...JSON.parse(versionTwoText()), dismissals: [] }))).toMatch(
      /section this version does not know, "dismissals"/,
    );
  });

  it('reads a file of version 1 (lists only): no tokens nor reports to restore', () => {
    const backup = readBackup(versionOneOf(RULES));
    expect(backup.lists.rules).toEqual(RULES);
    expect(backup.tokens).toBeUndefined();
    expect(backup.reports).toBeUndefined();
    expect(backup.dismissals).toBeUndefined();
    expect(refusal(JSON.stringify({ ...JSON.parse(versionOneOf(RULES)), tokens: [] }))).toMatch(
      /section this version does not know, "tokens"/,
    );
  });

  it('is JSON naming its format and version, one rule, token, vote or dismissal a line', () => {
    const text = fullText();
    expect(JSON.parse(text)).toMatchObject({ format: BACKUP_FORMAT, version: 3, lists: { rules: expect.any(Array) } });
    expect(text).toContain('\n    {"e164":"+33612345678","at":"2026-11-28T11:00:00.456Z"},\n');
    expect(text.split('\n').filter((line) => line.includes('"hash"'))).toHaveLength(2);
    expect(text.split('\n').filter((line) => line.includes('"rating"'))).toHaveLength(2);
    expect(text).toContain('"at":"2026-11-28T10:00:00.123Z"');
    expect(text.split('\n').filter((line) => line.includes('"rule"'))).toHaveLength(3);
    expect(readBackup(textOf([])).lists.rules).toEqual([]);
  });

  it('refuses a file of another format, another version, or not JSON, saying which', () => {
    expect(refusal('rule,list\n+33162*,block\n')).toBe(`not a ${BACKUP_FORMAT} file (it is not JSON)`);
    expect(refusal(JSON.stringify({ format: 'something-else', version: 1 }))).toBe(
      `not a ${BACKUP_FORMAT} file (its format is "something-else")`,
    );
    expect(refusal(JSON.stringify({ ...JSON.parse(textOf(RULES)), version: 4 }))).toBe(
      `a ${BACKUP_FORMAT} file of version 4; this phone-rep restores versions 1, 2 and 3`,
    );
  });

  it('refuses a section or a field it does not know, rather than restore part of the file', () => {
    expect(refusal(JSON.stringify({ ...JSON.parse(textOf(RULES)), votes: [] }))).toMatch(
      /section this version does not know, "votes"/,
    );
    const withField = JSON.parse(textOf(RULES)) as { lists: { rules: Array<Record<string, unknown>> } };
    const first = withField.lists.rules[0];
    if (first !== undefined) first.colour = 'red';
    expect(refusal(JSON.stringify(withField))).toMatch(
      /lists\.rules\[0\] has a field this version does not know, "colour"/,
    );
  });

  it('refuses a bad token or vote, naming it, and a token or a vote given twice', () => {
    const withEntries = (tokens: unknown[], reports: unknown[]): string =>
      JSON.stringify({ ...JSON.parse(fullText()), tokens, reports });
    const vote = { e164: '+33612345678', tokenId: 'tok_0123456789', rating: 'fraud', at: '2026-11-28T10:00:00Z' };
    expect(refusal(withEntries([{ ...TOKENS[0], hash: 'not-hex' }], []))).toMatch(/^tokens\[0\] is not a token record/);
    expect(refusal(withEntries([{ ...TOKENS[0], secret: 'prt_x' }], []))).toMatch(
      /^tokens\[0\] has a field this version does not know, "secret"/,
    );
    expect(refusal(withEntries([TOKENS[0], TOKENS[0]], []))).toMatch(/^tokens\[1\] \(tok_0123456789\) appears twice/);
    expect(refusal(withEntries([], [{ ...vote, e164: '0612345678' }]))).toMatch(/^reports\[0\]\.e164 /);
    expect(refusal(withEntries([], [{ ...vote, tokenId: 'prt_secret' }]))).toMatch(/^reports\[0\]\.tokenId /);
    expect(refusal(withEntries([], [{ ...vote, rating: 'G_FRAUD' }]))).toMatch(/^reports\[0\]\.rating /);
    expect(refusal(withEntries([], [{ ...vote, at: 'yesterday' }]))).toMatch(/^reports\[0\]\.at /);
    expect(refusal(withEntries([], [{ ...vote, comment: 'x'.repeat(201) }]))).toMatch(/^reports\[0\]\.comment /);
    expect(refusal(withEntries([], [vote, { ...vote, rating: 'poll' }]))).toMatch(
      /^reports\[1\]: the token tok_0123456789 has two votes/,
    );
    // The control: the same entries, each once and well formed, are read.
    expect(readBackup(withEntries([TOKENS[0]], [vote])).reports).toHaveLength(1);
  });

  it('refuses a bad dismissal, naming it, and a number dismissed twice', () => {
    const withDismissals = (dismissals: unknown[]): string => JSON.stringify({ ...JSON.parse(fullText()), dismissals });
    const dismissal = { e164: '+33612345678', at: '2026-11-28T11:00:00Z' };
    expect(refusal(JSON.stringify({ ...JSON.parse(fullText()), dismissals: {} }))).toBe('dismissals is not an array');
    expect(refusal(withDismissals(['+33612345678']))).toBe('dismissals[0] is not an object');
    expect(refusal(withDismissals([{ ...dismissal, e164: '0612345678' }]))).toMatch(/^dismissals\[0\]\.e164 /);
    expect(refusal(withDismissals([{ ...dismissal, at: 'yesterday' }]))).toMatch(/^dismissals\[0\]\.at /);
    expect(refusal(withDismissals([{ ...dismissal, at: Date.parse(dismissal.at) }]))).toMatch(/^dismissals\[0\]\.at /);
    expect(refusal(withDismissals([{ ...dismissal, by: 'admin' }]))).toMatch(
      /^dismissals\[0\] has a field this version does not know, "by"/,
    );
    expect(refusal(withDismissals([dismissal, { ...dismissal, at: '2026-11-29T00:00:00Z' }]))).toMatch(
      /^dismissals\[1\]: the number is dismissed twice/,
    );
    // The control: the same dismissal, once and well formed, is read.
    expect(readBackup(withDismissals([dismissal])).dismissals).toEqual([
      { e164: '+33612345678', at: Date.parse(dismissal.at) },
    ]);
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
