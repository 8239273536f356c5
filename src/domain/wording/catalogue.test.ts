import { describe, expect, it } from 'vitest';
import { CATALOGUES, countWords, LANGUAGES, words } from './catalogue.js';

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

describe('counts (Intl.PluralRules)', () => {
  it('give every count its #other form in every language, and only forms the language has', () => {
    for (const language of LANGUAGES) {
      const categories = new Set<string>(new Intl.PluralRules(language).resolvedOptions().pluralCategories);
      const keys = Object.keys(CATALOGUES[language]).filter((key) => key.includes('#'));
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const [base, category] = key.split('#');
        expect(categories.has(category ?? '')).toBe(true);
        expect(Object.keys(CATALOGUES[language])).toContain(`${base ?? ''}#other`);
      }
    }
  });

  it('write one of a thing in the singular: 1 commentaire, 1 comment; and French 0 too', () => {
    expect(countWords('fr', 'figure.comments', 1)).toBe('commentaire');
    expect(countWords('fr', 'figure.comments', 0)).toBe('commentaire');
    expect(countWords('fr', 'figure.comments', 2)).toBe('commentaires');
    expect(countWords('en', 'figure.comments', 1)).toBe('comment');
    expect(countWords('en', 'figure.comments', 0)).toBe('comments');
    expect(countWords('en', 'figure.searches', 1234)).toBe('searches');
  });

  it('fill {count} and the other placeholders', () => {
    expect(countWords('fr', 'date.days', 1)).toBe('il y a 1 jour');
    expect(countWords('fr', 'date.days', 3)).toBe('il y a 3 jours');
    expect(countWords('en', 'date.years', 1)).toBe('1 year ago');
    expect(countWords('en', 'advice.answered', 2, { total: 3 })).toBe('2 of 3 sources answered.');
    expect(countWords('fr', 'advice.answered', 1, { total: 3 })).toBe('1 source sur 3 a répondu.');
  });

  it('fall back to #other for a category the catalogue has no form of (French `many`: 1 000 000)', () => {
    expect(new Intl.PluralRules('fr').select(1_000_000)).toBe('many');
    expect(countWords('fr', 'figure.visits', 1_000_000)).toBe('visites');
  });
});
