import { describe, expect, it } from 'vitest';
import { mostFrequentLabel } from './most-frequent.js';

describe('mostFrequentLabel', () => {
  it('picks the most frequent label', () => {
    expect(
      mostFrequentLabel([
        { label: 'A', date: '' },
        { label: 'B', date: '01/01/2026' },
        { label: 'A', date: '' },
      ]),
    ).toBe('A');
  });

  it('breaks a tie by the most recent date, then by page order', () => {
    expect(
      mostFrequentLabel([
        { label: 'A', date: '01/02/2025' },
        { label: 'B', date: '02/01/2026' },
      ]),
    ).toBe('B');
    expect(
      mostFrequentLabel([
        { label: 'A', date: '' },
        { label: 'B', date: '' },
      ]),
    ).toBe('A');
  });

  it('answers "" when no entry has a label', () => {
    expect(mostFrequentLabel([{ label: '', date: '01/01/2026' }])).toBe('');
    expect(mostFrequentLabel([])).toBe('');
  });
});
