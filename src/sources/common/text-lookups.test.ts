import { describe, expect, it } from 'vitest';
import { plainText } from './html.js';
import { parseDate } from './text.js';

describe('text lookups keyed by scraped words', () => {
  it('leaves an entity named after an Object method as it is', () => {
    expect(plainText('a &valueOf; b &toString; c')).toBe('a &valueOf; b &toString; c');
  });

  it('reads no date from a month word that names an Object property', () => {
    expect(parseDate('1 constructor 2024')).toBe('');
  });
});
