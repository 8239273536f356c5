// The CSV of the lists: labels and notes a spreadsheet would run as formulas are escaped on the
// way out and read back as they were (OWASP, CSV injection), in the export and in the file alike.
import { describe, expect, it } from 'vitest';
import type { ListRule } from '../ports/operator-lists.js';
import {
  escapeFormula,
  EXPORT_COLUMNS,
  FILE_COLUMNS,
  formatListCsv,
  formatRuleLine,
  type ListCsvError,
  readListCsv,
  unescapeFormula,
} from './list-csv.js';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../numbering/parse-phone-number.js';

// The real parser: a prefix rule is read as the parser reads its callers (rules.ts).
const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};
const rule = (extra: Partial<ListRule>): ListRule => ({
  rule: '+33162*',
  list: 'block',
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe('formulas in labels and notes', () => {
  it.each(['=HYPERLINK("http://x","y")', '+1', '-2+3', '@SUM(A1)', '\tx', '\rx'])(
    '%j is written with a quote before it',
    (value) => {
      expect(escapeFormula(value)).toBe(`'${value}`);
      expect(unescapeFormula(escapeFormula(value))).toBe(value);
    },
  );

  it.each(['Ma banque', "l'agence", "'quoted", '', '1=1', 'a-b'])('%j is written as it is', (value) => {
    expect(escapeFormula(value)).toBe(value);
    expect(unescapeFormula(value)).toBe(value);
  });

  it('a value that already starts with a quote before a formula gets one more, so it reads back as it was', () => {
    expect(escapeFormula("'=1")).toBe("''=1");
    expect(unescapeFormula("''=1")).toBe("'=1");
  });

  it('the export and the file escape label and note cells, never the rule, and read back the same rules', () => {
    const rules = [
      rule({ label: '=cmd', note: '-1+1 @here' }),
      rule({ rule: '+33163*', label: '@Robot', note: "'=already" }),
      rule({ rule: '+33164*', label: 'Plain', note: 'plain' }),
    ];
    const exported = formatListCsv(rules, EXPORT_COLUMNS);
    expect(exported.split('\n')[1]).toBe("+33162*,block,'=cmd,'-1+1 @here,,");
    expect(exported.split('\n')[2]).toBe("+33163*,block,'@Robot,''=already,,");
    expect(exported.split('\n')[3]).toBe('+33164*,block,Plain,plain,,');
    // No cell but the rule's own starts as a formula would.
    for (const line of exported.split('\n').slice(1, -1))
      for (const cell of line.split(',').slice(1)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    const back = readListCsv(formatListCsv(rules, FILE_COLUMNS), { context, trustNormalForm: true });
    expect(back).toEqual(rules);
    expect(formatRuleLine(rules[0] as ListRule, FILE_COLUMNS)).toBe(
      "+33162*,block,'=cmd,'-1+1 @here,,2026-01-01T00:00:00.000Z,",
    );
  });

  it('an import written by hand with the escape reads the value without it', () => {
    const [read] = readListCsv("rule,list,label,note,expiresAt\n+33162*,block,'=Robot,'+note,\n", { context });
    expect(read).toMatchObject({ rule: '+33162*', label: '=Robot', note: '+note' });
  });
});

describe('refusals name the line, the field and the reason (csv-parse splits the fields)', () => {
  const header = 'rule,list,label,note,expiresAt';
  const refusal = (text: string): { line: number; field: string | undefined; message: string } => {
    try {
      readListCsv(text, { context });
    } catch (error) {
      const { line, field, message } = error as ListCsvError;
      return { line, field, message };
    }
    throw new Error('the text was read');
  };

  it.each([
    ['+33162*,block,"Ma "banque",,', 'a closing quote must end its field'],
    ['+33162*,block,Ma "banque",,', 'a quote may only open a field'],
    ['+33162*,block,"Ma banque,,', 'a quoted field is not closed'],
  ])('%j is not CSV: %s', (line, reason) => {
    expect(refusal(`${header}\n# a comment\n${line}\n+33163*,block,,,\n`)).toEqual({
      line: 3,
      field: undefined,
      message: `line 3: not a CSV line: ${reason}`,
    });
  });

  it('a broken header is named as the header', () => {
    expect(refusal('rule,"list\n+33162*,block\n')).toEqual({
      line: 1,
      field: 'header',
      message: 'line 1: the header is not CSV (a quoted field is not closed)',
    });
  });

  it('the first bad line is the one named, whether it is a bad field or a bad quote further on in the same batch of lines', () => {
    const lines = Array.from({ length: 600 }, (_, at) => `+3317${String(at).padStart(4, '0')}*,block,,,`);
    lines[299] = '+33170299*,blok,,,';
    lines[400] = '+33170400*,block,"open,,';
    expect(refusal(`${header}\n${lines.join('\n')}\n`)).toMatchObject({ line: 301, field: 'list' });
    lines[299] = '+33170299*,block,,,';
    expect(refusal(`${header}\n${lines.join('\n')}\n`)).toMatchObject({
      line: 402,
      message: 'line 402: not a CSV line: a quoted field is not closed',
    });
    expect(refusal(`${header}\n+33162*,block,,\n`)).toEqual({
      line: 2,
      field: undefined,
      message: 'line 2: 4 fields where the header has 5',
    });
  });

  it('reads quoted fields with commas, doubled quotes and white space as written', () => {
    const [read] = readListCsv(`${header}\n+33162*,block,"Ma banque","Ma ""banque"", Lyon ",\n`, { context });
    expect(read).toMatchObject({ rule: '+33162*', label: 'Ma banque', note: 'Ma "banque", Lyon ' });
  });
});
