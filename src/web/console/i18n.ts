// The console's words (src/domain/wording/console-words.ts, the same catalogue the server fills
// the shell from) and how it writes dates and counts, in the page's language.
import { CONSOLE_WORDS, type ConsoleLanguage, type ConsoleWordKey } from '../../domain/wording/console-words.js';

let language: ConsoleLanguage = document.documentElement.lang === 'fr' ? 'fr' : 'en';

export function currentLanguage(): ConsoleLanguage {
  return language;
}

export function setLanguage(next: ConsoleLanguage): void {
  language = next;
  document.documentElement.lang = next;
  document.title = t('page.title');
}

/** The words of `key`, each `{name}` replaced by its value. */
export function t(key: ConsoleWordKey, values: Record<string, string | number> = {}): string {
  return CONSOLE_WORDS[language][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    values[name] === undefined ? whole : String(values[name]),
  );
}

export function formatCount(value: number): string {
  return new Intl.NumberFormat(language).format(value);
}

/** A date and time, in the browser's time zone (the operator's). */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return t('common.never');
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(language, { dateStyle: 'short', timeStyle: 'short' }).format(date);
}

export function formatDay(date: Date): string {
  return new Intl.DateTimeFormat(language, { weekday: 'short', day: 'numeric' }).format(date);
}

export function formatHour(date: Date): string {
  return new Intl.DateTimeFormat(language, { hour: '2-digit' }).format(date);
}
