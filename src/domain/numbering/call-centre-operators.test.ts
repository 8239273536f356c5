import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SHIPPED_CALL_CENTRE_OPERATORS_PATH, loadCallCentreOperators } from '../../infra/arcep/load-numbering-plan.js';
import { IDENTIFIANTS_HEADER, MAJNUM_HEADER, splitSemicolonCsv } from './numbering-plan.js';
import { isFixedOrNonGeographic, parseCallCentreOperators } from './call-centre-operators.js';

const arcep = (file: string) => splitSemicolonCsv(readFileSync(`data/arcep/${file}`, 'latin1')).slice(1);

describe('the shipped call-centre operators file (data/fr-call-centre-operators.csv)', () => {
  const operators = loadCallCentreOperators();
  const registeredCodes = new Set(
    arcep('identifiants_ce.csv').map((row) => row[IDENTIFIANTS_HEADER.indexOf('CODE_OPERATEUR')]?.trim()),
  );
  const blocksByCode = new Map<string, string[]>();
  for (const row of arcep('MAJNUM.csv')) {
    const code = row[MAJNUM_HEADER.indexOf('Mnémo')]?.trim() ?? '';
    const prefix = row[0]?.trim() ?? '';
    blocksByCode.set(code, [...(blocksByCode.get(code) ?? []), prefix]);
  }

  it('lists the operators of the published lists, each once', () => {
    expect(operators.length).toBeGreaterThanOrEqual(40);
    for (const code of ['AIRC', 'ONOF', 'TWIL', 'DIAB', 'IAGI', 'KAVE', 'BJTP', 'BICS']) {
      expect(
        operators.map((row) => row.code),
        code,
      ).toContain(code);
    }
  });

  it.each(operators.map((row) => [row.code, row] as const))(
    '%s is a code of identifiants_ce.csv holding at least one MAJNUM block, and cites its source',
    (code, row) => {
      expect(registeredCodes.has(code)).toBe(true);
      expect(blocksByCode.get(code)?.length ?? 0).toBeGreaterThan(0);
      for (const source of row.source.split(' ')) expect(source).toMatch(/^[\w.-]+\/[\w.-]+\/.+@[0-9a-f]{7,40}$/);
    },
  );

  it('is read from the package, whatever the working directory', () => {
    expect(SHIPPED_CALL_CENTRE_OPERATORS_PATH).toMatch(/\/data\/fr-call-centre-operators\.csv$/);
  });
});

describe('parseCallCentreOperators', () => {
  const header = 'code,name,source,addedAt';

  it('reads rows and skips blank lines', () => {
    expect(parseCallCentreOperators(`${header}\nAIRC,Aircall,a/b/c@0123abc,2026-11-28\n\n`)).toEqual({
      ok: true,
      operators: [{ code: 'AIRC', name: 'Aircall', source: 'a/b/c@0123abc', addedAt: '2026-11-28' }],
    });
  });

  it.each([
    ['a wrong header', 'code,name\nAIRC,Aircall', 'header'],
    ['a fifth field', `${header}\nAIRC,Aircall,src,2026-11-28,extra`, 'line 2'],
    ['a quoted field', `${header}\nAIRC,"Aircall",src,2026-11-28`, 'line 2'],
    ['a lowercase code', `${header}\nairc,Aircall,src,2026-11-28`, 'code'],
    ['a code listed twice', `${header}\nAIRC,Aircall,src,2026-11-28\nAIRC,Aircall,src,2026-11-28`, 'twice'],
    ['no source', `${header}\nAIRC,Aircall,,2026-11-28`, 'source'],
    ['a French date', `${header}\nAIRC,Aircall,src,28/11/2026`, 'YYYY-MM-DD'],
  ])('fails on %s, saying where', (_case, text, words) => {
    const result = parseCallCentreOperators(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(words);
  });
});

describe('isFixedOrNonGeographic', () => {
  it.each(['0189710000', '0214730000', '0344', '0412', '0508', '0801', '0939'])('holds for %s', (digits) => {
    expect(isFixedOrNonGeographic(digits)).toBe(true);
  });
  it.each(['0644660000', '0756800000', '0612', '3950', '1234'])('does not hold for %s', (digits) => {
    expect(isFixedOrNonGeographic(digits)).toBe(false);
  });
});
