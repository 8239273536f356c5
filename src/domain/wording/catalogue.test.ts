import { describe, expect, it } from 'vitest';
import { CATALOGUES, LANGUAGES, words } from './catalogue.js';

describe('the wording catalogues', () => {
  it('have the same keys in every language, and no empty value', () => {
    const reference = Object.keys(CATALOGUES.fr).sort();
    for (const language of LANGUAGES) {
      expect(Object.keys(CATALOGUES[language]).sort()).toEqual(reference);
      for (const value of Object.values(CATALOGUES[language])) expect(value.trim()).not.toBe('');
    }
  });

  it('fills placeholders, and leaves out one without a value', () => {
    expect(words('fr', 'cid.suspicious', { score: 8, category: 'Démarchage' })).toBe('SPAM? 8/9 Démarchage');
    expect(words('fr', 'cid.suspicious', { score: 8 })).toBe('SPAM? 8/9');
    expect(words('en', 'cid.trustworthy', { score: 2 })).toBe('Trusted 2/9');
  });
});
