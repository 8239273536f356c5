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

describe('the words a household reads', () => {
  it('name this service’s administrator, never an "opérateur" (which a French reader takes for Orange or SFR), for a rule', () => {
    expect([words('fr', 'cid.listBlock'), words('fr', 'cid.listAllow')]).toEqual([
      'Bloqué par l’administrateur',
      'Autorisé par l’administrateur',
    ]);
    expect([words('en', 'cid.listBlock'), words('en', 'cid.listAllow')]).toEqual([
      'Blocked by the administrator',
      'Allowed by the administrator',
    ]);
    expect(words('fr', 'list.block', { rule: '+33162*' })).toMatch(
      /^Bloqué par l’administrateur de ce service \(règle \+33162\*\)/,
    );
    expect(words('en', 'list.allow', { rule: '+33612*' })).toMatch(
      /^Allowed by this service’s administrator \(rule \+33612\*\)/,
    );
    for (const language of LANGUAGES) {
      for (const key of ['cid.listBlock', 'cid.listAllow', 'list.block', 'list.allow'] as const)
        expect(words(language, key)).not.toMatch(/opérateur|operator/i);
    }
  });

  it('tell "not checked" and "not covered" from "no score", and none of them reads like a withheld caller', () => {
    expect([words('fr', 'cid.notChecked'), words('en', 'cid.notChecked')]).toEqual(['Non vérifié', 'Not checked']);
    expect([words('fr', 'cid.notCovered'), words('en', 'cid.notCovered')]).toEqual([
      'Non vérifié (étranger)',
      'Not checked (foreign)',
    ]);
    expect([words('fr', 'risk.notChecked'), words('en', 'risk.notChecked')]).toEqual(['Non vérifié', 'Not checked']);
    expect([words('fr', 'verdict.notCovered'), words('en', 'verdict.notCovered')]).toEqual([
      'Aucune source ne couvre ce numéro : aucune n’a été interrogée.',
      'No source covers this number: none was asked.',
    ]);
    for (const language of LANGUAGES) {
      const noScore = (
        [
          'cid.unknown',
          'cid.notChecked',
          'cid.notCovered',
          'risk.unknown',
          'risk.notChecked',
          'risk.notCovered',
        ] as const
      ).map((key) => words(language, key));
      expect(new Set(noScore.slice(0, 3)).size).toBe(3);
      expect(new Set(noScore.slice(3)).size).toBe(3);
      for (const line of noScore) {
        expect(line).not.toBe(words(language, 'cid.withheld'));
        // A French phone shows "Inconnu" for a withheld number.
        expect(line).not.toMatch(/inconnu|unknown/i);
      }
      // The advice for a number no source covers says so, rather than "no source has a score".
      expect(words(language, 'advice.notCovered')).not.toBe(words(language, 'advice.unknown'));
    }
    expect(words('fr', 'advice.notCovered')).toMatch(/^Aucune des sources lues ici ne couvre ce numéro/);
    expect(words('en', 'advice.notCovered')).toMatch(/^None of the sources read here covers this number/);
  });

  it('spell NPV out where the page first uses it: numéros polyvalents vérifiés (ARCEP decision 2022-1583)', () => {
    for (const key of ['page.description', 'advice.npv'] as const) {
      expect(words('fr', key)).toMatch(/numéros polyvalents vérifiés.{0,3}NPV/);
      expect(words('en', key)).toMatch(/NPV.{0,20}numéros polyvalents vérifiés/);
    }
    expect(words('fr', 'facts.npv')).toBe('Numéro polyvalent vérifié (NPV : appels automatisés)');
    expect(words('en', 'facts.npv')).toBe('NPV range (verified multi-purpose numbers: automated calls)');
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
