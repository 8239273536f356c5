// Which language a person gets: the lookup page's choice between the catalogues of
// src/domain/wording/catalogue.ts. In order, the first that names a language we have wins:
// `?lang=` (a link that can be shared), the `lang` cookie (the page's FR/EN switch, remembered
// on that browser), then Accept-Language (RFC 9110 §12.5.4), and English when nothing matches.
// Any other value is ignored rather than refused: a page must open whatever its link says.
import { isLanguage, type Language } from '../domain/wording/catalogue.js';
import { parseQualityList } from './q-values.js';

/** The cookie the page's switch writes (`lang=fr` or `lang=en`, path `/`, one year). */
export const LANGUAGE_COOKIE = 'lang';

export const DEFAULT_LANGUAGE: Language = 'en';

/** Headers longer than this are not read: no browser sends one, and it bounds the work. */
const MAX_HEADER_LENGTH = 1024;

/**
 * The language of ours the client ranks highest in Accept-Language: `fr-FR, en;q=0.5` → fr,
 * `de, fr;q=0.8` → fr (German is not offered, French is the best we have), `en-US, fr` → en,
 * `*` → the default. Equal weights keep the header's order. Undefined when none of ours is named.
 */
export function languageOfAcceptLanguage(header: string | undefined): Language | undefined {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return undefined;
  let best: { language: Language; weight: number } | undefined;
  // An element with a malformed q is left out by the reader, and one with q=0 refuses its language.
  for (const { token: range, weight } of parseQualityList(header)) {
    if (weight === 0) continue;
    const primary = range.split('-')[0] ?? '';
    const language = primary === '*' ? DEFAULT_LANGUAGE : primary;
    if (!isLanguage(language)) continue;
    if (best === undefined || weight > best.weight) best = { language, weight };
  }
  return best?.language;
}

/** The value of the `lang` cookie when it names one of our languages. */
export function languageOfCookie(header: string | undefined): Language | undefined {
  if (header === undefined || header.length > 4 * MAX_HEADER_LENGTH) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== LANGUAGE_COOKIE) continue;
    const value = pair.slice(at + 1).trim();
    if (isLanguage(value)) return value;
  }
  return undefined;
}

export interface LanguageRequest {
  /** `?lang=`: a string when given once, an array when repeated (then ignored). */
  query: unknown;
  cookie: string | undefined;
  acceptLanguage: string | undefined;
}

/** The language to answer in. */
export function chooseLanguage(request: LanguageRequest): Language {
  if (isLanguage(request.query)) return request.query;
  return languageOfCookie(request.cookie) ?? languageOfAcceptLanguage(request.acceptLanguage) ?? DEFAULT_LANGUAGE;
}
