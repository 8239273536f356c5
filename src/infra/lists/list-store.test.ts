// The lists' CSV read in slices: an over-long line is refused naming it, without holding the
// event loop; an import is bounded by a count of its lines before any is read.
import { describe, expect, it } from 'vitest';
import { ListCsvError, MAX_LINE_CHARS } from '../../domain/lists/list-csv.js';
import { checkImportSize, countCsvLines, ListsTooLarge, MAX_RULES, readListCsvInSlices } from './list-store.js';
import { loadNumberingPlan } from '../arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../../domain/numbering/parse-phone-number.js';

// The real parser: a prefix rule is read as the parser reads its callers (rules.ts).
const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};
const HEADER = 'rule,list,label,note,expiresAt';
const prefixes = (count: number): string[] =>
  Array.from({ length: count }, (_, at) => `+3361${String(at).padStart(6, '0')}*,block,,,`);

describe('an over-long line', () => {
  it('a 20 MB line is refused naming its line and the bound, and the event loop keeps turning meanwhile', async () => {
    const text = [HEADER, ...prefixes(20_000), `+33612*,block,,${'x'.repeat(20_000_000)},`, ...prefixes(10)].join('\n');
    let ticks = 0;
    let ticksAtRefusal = -1;
    const ticker = setInterval(() => (ticks += 1), 0);
    try {
      const read = readListCsvInSlices(text, { context, nowMs: Date.now() });
      const error = await read.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      ticksAtRefusal = ticks;
      expect(error).toBeInstanceOf(ListCsvError);
      expect(error).toMatchObject({ line: 20_002 });
      expect((error as ListCsvError).reason).toBe(
        `the line is 20000016 characters long; a line is at most ${MAX_LINE_CHARS}`,
      );
    } finally {
      clearInterval(ticker);
    }
    // The interval ran while the file was read: the loop was given back between slices.
    expect(ticksAtRefusal).toBeGreaterThan(0);
  });

  it('the bound is on the line: MAX_LINE_CHARS characters are split and checked field by field, one more is refused whole', async () => {
    const lineOf = (length: number): string => `+33612*,block,,${'n'.repeat(length - '+33612*,block,,,'.length)},`;
    expect(lineOf(MAX_LINE_CHARS)).toHaveLength(MAX_LINE_CHARS);
    await expect(readListCsvInSlices(`${HEADER}\n${lineOf(MAX_LINE_CHARS)}\r\n`, { context })).rejects.toMatchObject({
      line: 2,
      field: 'note',
    });
    await expect(readListCsvInSlices(`${HEADER}\n${lineOf(MAX_LINE_CHARS + 1)}\n`, { context })).rejects.toMatchObject({
      line: 2,
      reason: `the line is ${MAX_LINE_CHARS + 1} characters long; a line is at most ${MAX_LINE_CHARS}`,
    });
  });
});

describe('the import bound', () => {
  it('counts lines without reading them', () => {
    expect(countCsvLines('a')).toBe(1);
    expect(countCsvLines('a\nb\n')).toBe(3);
  });

  it('refuses more rules than the lists hold, alone or with those held, naming the bound', () => {
    expect(() => checkImportSize(1_300_001, 0)).toThrow(ListsTooLarge);
    expect(() => checkImportSize(1_300_001, 0)).toThrow(
      `the import holds up to 1300000 rules; an import brings at most ${MAX_RULES}`,
    );
    expect(() => checkImportSize(MAX_RULES / 2 + 2, MAX_RULES / 2)).toThrow(
      `the lists hold ${MAX_RULES / 2} rules and the import up to ${MAX_RULES / 2 + 1}`,
    );
    expect(() => checkImportSize(1001, 0)).not.toThrow();
  });

  it('the store’s own file past MAX_RULES is refused naming the first line over it', async () => {
    await expect(
      readListCsvInSlices([HEADER, ...prefixes(4)].join('\n'), { context, maxRules: 3 }),
    ).rejects.toMatchObject({ line: 5, reason: 'more than 3 rules: the lists hold at most 3' });
  });
});
