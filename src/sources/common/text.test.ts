import { describe, expect, it } from 'vitest';
import { cleanText, MAX_TEXT_LENGTH, parseCount, parseDate, readCount, readPercent } from './text.js';

describe('parseDate', () => {
  it('reads 2025.10.26 as 26/10/2025', () => {
    expect(parseDate('2025.10.26')).toBe('26/10/2025');
  });

  it('reads year-first dates with one-digit parts, dashes, slashes and a time as year-first', () => {
    expect(parseDate('2025.1.5')).toBe('05/01/2025');
    expect(parseDate('2024-03-12 14:05:00')).toBe('12/03/2024');
    expect(parseDate('2024-01-30T09:15:00+01:00')).toBe('30/01/2024');
    expect(parseDate('2025/10/26')).toBe('26/10/2025');
    expect(parseDate('2025.10.26 18:42')).toBe('26/10/2025');
  });

  it('never reads a year-first date day-first, even when the day-first reading would be a valid date', () => {
    // "25.10.26" inside "2025.10.26" would be 25/10/2026.
    expect(parseDate('le 2025.10.26')).not.toBe('25/10/2026');
    // An impossible year-first date is no date, not a day-first one.
    expect(parseDate('2025.13.12')).toBe('');
  });

  it('reads the day-first forms: DD/MM/YYYY, DD.MM.YY, DD.MM.YYYY and D. M. YYYY, with or without a time', () => {
    expect(parseDate('07/07/2026')).toBe('07/07/2026');
    expect(parseDate('12.03.24 14:05   Signaler')).toBe('12/03/2024');
    expect(parseDate('20.12.2023 Ajouter un commentaire')).toBe('20/12/2023');
    expect(parseDate('3. 9. 2026')).toBe('03/09/2026');
  });

  it('reads French month names, abbreviated or not, and "1er"', () => {
    expect(parseDate('12 mars 2024')).toBe('12/03/2024');
    expect(parseDate('1er août 2026')).toBe('01/08/2026');
    expect(parseDate('21 nov. 2026')).toBe('21/11/2026');
    expect(parseDate('14 décembre 2025 à 10:00')).toBe('14/12/2025');
  });

  it('gives "" for a date-like text that fits no known form, never a wrong date', () => {
    for (const text of ['31.02.2024', '2024-02-30', '12 brumaire 2024', '1.2', '2024', '12/2024', '99.99.99', '']) {
      expect(parseDate(text), text).toBe('');
    }
    expect(parseDate(null)).toBe('');
  });
});

describe('parseCount', () => {
  it('reads counts with any thousands separator and a trailing ×', () => {
    expect(parseCount('1 393×')).toBe(1393);
    expect(parseCount('1\u00a0393')).toBe(1393);
    expect(parseCount('1\u202f727\u202f800')).toBe(1727800);
    expect(parseCount('1.234.567×')).toBe(1234567);
    expect(parseCount('(9)')).toBe(9);
    expect(parseCount('beaucoup')).toBeNull();
  });
});

describe('readCount', () => {
  it('reads a count, and says when there is none', () => {
    expect(readCount('1 393×')).toEqual({ kind: 'value', value: 1393 });
    expect(readCount('Nombre : 12 visites')).toEqual({ kind: 'value', value: 12 });
    expect(readCount('999999999999999')).toEqual({ kind: 'value', value: 999_999_999_999_999 });
    expect(readCount('beaucoup')).toEqual({ kind: 'absent' });
    expect(readCount(undefined)).toEqual({ kind: 'absent' });
  });

  it('calls a number that is no count invalid, never a smaller count: signed, decimal, exponent, over 15 digits', () => {
    for (const text of [
      '-7',
      '+7',
      '\u22127',
      '1e3',
      '1E+3',
      '2.5',
      '12,75',
      '1.2345',
      '12345678901234567890',
      '1 234 567 890 123 456',
    ]) {
      expect(readCount(text), text).toEqual({ kind: 'invalid' });
      expect(parseCount(text), text).toBeNull();
    }
  });
});

describe('readPercent', () => {
  it('reads 0 to 100, rounded', () => {
    expect(readPercent('84')).toEqual({ kind: 'value', value: 84 });
    expect(readPercent('84,5 %')).toEqual({ kind: 'value', value: 85 });
    expect(readPercent('0%')).toEqual({ kind: 'value', value: 0 });
    expect(readPercent('100 %')).toEqual({ kind: 'value', value: 100 });
    expect(readPercent('')).toEqual({ kind: 'absent' });
  });

  it('reads the whole number, so 1000 is out of range and not 100; signs and exponents are invalid', () => {
    for (const text of ['1000', '1000 %', '101', '-5 %', '1e2', '100.6'])
      expect(readPercent(text), text).toEqual({ kind: 'invalid' });
  });
});

describe('cleanText', () => {
  it('removes control and bidi characters, collapses whitespace, normalises to NFC', () => {
    expect(cleanText(' a\u0000b\u202e  c\u00a0\u00a0d\n e\u0301 ')).toBe('a b c d é');
  });

  it('caps a text at its length without splitting a surrogate pair', () => {
    expect(Array.from(cleanText('😀'.repeat(MAX_TEXT_LENGTH + 5)))).toHaveLength(MAX_TEXT_LENGTH);
  });
});
