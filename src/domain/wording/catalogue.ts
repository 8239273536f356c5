// The words the service shows to people, one catalogue per language with the same keys: risk
// levels, source statuses and the caller-ID line of the text routes, and (filled by the lookup
// page's work) every fixed word of the page. The server's text answers and the page both read
// this one module; nothing else keeps a copy of these words.
//
// The module has no import and only plain data and functions, so that its compiled form can be
// served to the browser as it is.
export const LANGUAGES = ['fr', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];

/** French is the reference catalogue: its keys are the keys of every other one. */
const fr = {
  'risk.trustworthy': 'Fiable',
  'risk.neutral': 'Neutre',
  'risk.suspicious': 'Suspect',
  'risk.unknown': 'Inconnu',

  // The caller-ID line (`/cid`): a phone's display, short, no punctuation a dialplan could misread.
  'cid.suspicious': 'SPAM? {score}/9 {category}',
  'cid.neutral': 'Neutre {score}/9',
  'cid.trustworthy': 'Fiable {score}/9',
  'cid.npv': 'Appel automatisé (NPV)',
  'cid.unknown': 'Inconnu',
  'cid.withheld': 'Masqué',
  'cid.invalid': 'Numéro invalide',
} as const;

export type WordKey = keyof typeof fr;

const en: Record<WordKey, string> = {
  'risk.trustworthy': 'Trustworthy',
  'risk.neutral': 'Neutral',
  'risk.suspicious': 'Suspicious',
  'risk.unknown': 'Unknown',

  'cid.suspicious': 'SPAM? {score}/9 {category}',
  'cid.neutral': 'Neutral {score}/9',
  'cid.trustworthy': 'Trusted {score}/9',
  'cid.npv': 'Automated call (NPV)',
  'cid.unknown': 'Unknown',
  'cid.withheld': 'Withheld',
  'cid.invalid': 'Invalid number',
};

export const CATALOGUES: Readonly<Record<Language, Readonly<Record<WordKey, string>>>> = { fr, en };

export function isLanguage(value: unknown): value is Language {
  return value === 'fr' || value === 'en';
}

/**
 * The words of `key` in `language`, with each `{name}` replaced by `params[name]`. A placeholder
 * without a value is left out (with the space before it), so a missing category never shows as
 * `{category}`.
 */
export function words(language: Language, key: WordKey, params: Readonly<Record<string, string | number>> = {}): string {
  return CATALOGUES[language][key]
    .replace(/ ?\{(\w+)\}/g, (whole, name: string) => {
      const value = params[name];
      if (value === undefined || value === '') return '';
      return whole.startsWith(' ') ? ` ${value}` : String(value);
    })
    .trim();
}
