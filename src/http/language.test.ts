import { describe, expect, it } from 'vitest';
import { chooseLanguage, languageOfAcceptLanguage, languageOfCookie } from './language.js';

describe('the language a person gets', () => {
  it('follows the language of ours the browser ranks highest', () => {
    expect(languageOfAcceptLanguage('fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7')).toBe('fr');
    expect(languageOfAcceptLanguage('en-US,en;q=0.9,fr;q=0.8')).toBe('en');
    expect(languageOfAcceptLanguage('de-DE, fr;q=0.8, en;q=0.5')).toBe('fr');
    expect(languageOfAcceptLanguage('en;q=0.4, FR-ca;q=0.6')).toBe('fr');
    expect(languageOfAcceptLanguage('fr;q=0.5, en;q=0.5')).toBe('fr');
    expect(languageOfAcceptLanguage('*')).toBe('en');
  });

  it('ignores what names none of ours, refuses nothing, and reads no huge header', () => {
    expect(languageOfAcceptLanguage(undefined)).toBeUndefined();
    expect(languageOfAcceptLanguage('de, es;q=0.5')).toBeUndefined();
    expect(languageOfAcceptLanguage('fr;q=0, en;q=abc')).toBeUndefined();
    expect(languageOfAcceptLanguage(`${'x,'.repeat(600)}fr`)).toBeUndefined();
    expect(languageOfAcceptLanguage(';;,,==')).toBeUndefined();
  });

  it('reads the switch cookie among others, and only our languages', () => {
    expect(languageOfCookie('a=1; lang=en; b=2')).toBe('en');
    expect(languageOfCookie('lang=fr')).toBe('fr');
    expect(languageOfCookie('lang=de')).toBeUndefined();
    expect(languageOfCookie('xlang=en')).toBeUndefined();
    expect(languageOfCookie(undefined)).toBeUndefined();
  });

  it('lets ?lang= win over the cookie, and the cookie over Accept-Language; English by default', () => {
    expect(chooseLanguage({ query: 'en', cookie: 'lang=fr', acceptLanguage: 'fr' })).toBe('en');
    expect(chooseLanguage({ query: undefined, cookie: 'lang=en', acceptLanguage: 'fr-FR' })).toBe('en');
    expect(chooseLanguage({ query: 'de', cookie: undefined, acceptLanguage: 'fr-FR' })).toBe('fr');
    expect(chooseLanguage({ query: ['fr', 'en'], cookie: undefined, acceptLanguage: undefined })).toBe('en');
    expect(chooseLanguage({ query: undefined, cookie: undefined, acceptLanguage: undefined })).toBe('en');
  });
});
