// What SpamBlocker (aj3423/SpamBlocker) does with an Instant Query API and a CSV workflow, written
// down from its source for tests that must do what the app does and nothing more:
// - ParseIncomingNumber (service/bot/Actions.kt, `InterceptCall`): a number starting with `+`
//   is split by libphonenumber into `{cc}` and `{domestic}`; any other one gets the phone's own
//   country code as `{cc}` and, unless it starts with that code followed by a valid national
//   number, the whole cleared number as `{domestic}` (so `0612345678` gives `33` + `0612345678`,
//   and a withheld caller, an empty number, gives `33` + ``).
// - HttpDownload + util/StringTag.kt `resolveNumberTag`: plain `String.replace` of the tags, no
//   encoding; util/Http.kt sends `User-Agent: SpamBlocker/<version>` when the config sets none;
//   only a 200 counts (`statusCode == HTTP_OK`).
// - ParseQueryResult: the body (unescapeUnicode'd) is matched with the default flags
//   (Def.DefaultRegexFlags = ignore case | dot matches all) by `containsMatchIn`: negative first,
//   then positive; determined when either matched, spam when the negative did; the category is
//   each match's first non-empty group, joined with " | ", read only when determined.
// - The Report API (ui/setting/api/ApiPresets.kt, the PhoneBlock report preset: ParseIncomingNumber,
//   CategoryConfig, HttpDownload with method 1): CategoryConfig looks the picked tag (`{fraud}`…,
//   braces included; `{other}` for the reports the app sends by itself, service/reporting/
//   AutoReportSpam.kt) up in its `map` and gives `{category}` its value, or stops the report when
//   the tag is missing; HttpRequest.execute (service/bot/Actions1.kt) fills the body with
//   util/StringTag.kt `resolveNumberTag` then plain `replace` of `{category}` and `{comment}`
//   (the comment as typed, unescaped; none: empty); splits each header line at its colons and
//   keeps the first two parts; util/Http.kt posts the body with HttpURLConnection and sets no
//   Content-Type, so Android's HttpURLConnection labels it application/x-www-form-urlencoded.
// - ParseCSV (util/Csv.kt era and CSVParser): first line the header, comma-split, trimmed;
//   ImportAsRegexRule joins the `pattern`s as `(a|b|…)`, matched against the number without `+`
//   and leading zeros.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export interface IncomingNumber {
  cc: string;
  domestic: string;
}

const clearNumber = (raw: string): string => raw.replace(/[^0-9&]/g, '');

/**
 * ParseIncomingNumber (the class InterceptCall, service/bot/Actions.kt). `forwardType` 1
 * (Original) keeps the last part of a forwarded `111&222`; 0 (Full) keeps it all.
 */
export function parseIncomingNumber(rawNumber: string, phoneCountryCode = '33', forwardType = 0): IncomingNumber {
  let cleared = clearNumber(rawNumber);
  if (/^\d+&\d+$/.test(cleared) && forwardType === 1) cleared = cleared.split('&').pop() ?? cleared;
  if (rawNumber.startsWith('+')) {
    const parsed = parsePhoneNumberFromString(`+${cleared}`);
    if (parsed === undefined) throw new Error('SpamBlocker gives up on this number (fail_detect_cc)');
    return { cc: parsed.countryCallingCode, domestic: parsed.nationalNumber };
  }
  if (cleared.startsWith(phoneCountryCode) && cleared.length > phoneCountryCode.length) {
    const rest = cleared.slice(phoneCountryCode.length);
    if (parsePhoneNumberFromString(`+${phoneCountryCode}${rest}`)?.isValid() === true)
      return { cc: phoneCountryCode, domestic: rest };
  }
  return { cc: phoneCountryCode, domestic: cleared };
}

export function resolveNumberTags(url: string, number: IncomingNumber): string {
  return url.replaceAll('{cc}', number.cc).replaceAll('{domestic}', number.domestic);
}

export const SPAMBLOCKER_HEADERS = {
  'User-Agent': 'SpamBlocker/4.21',
  'Accept-Encoding': 'gzip',
  Connection: 'Keep-Alive',
};

export interface QueryResult {
  determined: boolean;
  isSpam: boolean;
  category: string | null;
}

/** Kotlin's `toRegex(IGNORE_CASE, DOT_MATCHES_ALL)`, for the patterns used here (no inline flags). */
const appRegex = (pattern: string, global = false): RegExp => new RegExp(pattern, global ? 'gis' : 'is');

export function parseQueryResult(
  body: string,
  signatures: { negativeSig: string; positiveSig: string; categorySig: string },
): QueryResult {
  const html = body.replace(/\\u([0-9a-fA-F]{4})/g, (_match, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
  const isNegative = signatures.negativeSig === '' ? null : appRegex(signatures.negativeSig).test(html);
  const isPositive = signatures.positiveSig === '' ? null : appRegex(signatures.positiveSig).test(html);
  const determined = isNegative === true || isPositive === true;
  let category: string | null = null;
  if (determined && signatures.categorySig.trim() !== '') {
    category = [...html.matchAll(appRegex(signatures.categorySig.trim(), true))]
      .map((match) => match.slice(1).find((group) => group !== undefined) ?? null)
      .filter((group): group is string => group !== null && group !== '')
      .join(' | ');
  }
  return { determined, isSpam: isNegative === true, category };
}

/** The app's CSV reader: header line, comma split, trimmed; rows as column → value. */
export function parseCsvLikeSpamBlocker(text: string): Array<Record<string, string>> {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const headers = (lines[0] ?? '').split(',').map((cell) => cell.trim());
  return lines
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => Object.fromEntries(headers.map((header, index) => [header, (line.split(',')[index] ?? '').trim()])));
}

/** ImportAsRegexRule (Create/Replace): one rule `(p1|p2|…)` matched against the whole cleared number. */
export function importedRuleMatches(patterns: readonly string[], rawNumber: string): boolean {
  const cleared = clearNumber(rawNumber).replace(/^0+/, '');
  return new RegExp(`^(?:(${patterns.join('|')}))$`).test(cleared);
}

/** SpamBlocker's `ReportApi` JSON, as much of it as the report needs. */
export interface ReportApiConfig {
  desc: string;
  enabled: boolean;
  actions: Array<{
    type: string;
    numberFilter?: string;
    forwardType?: number;
    map?: Record<string, string>;
    method?: number;
    url?: string;
    header?: string;
    body?: string;
  }>;
}

/** What the app sends for one report: the URL, its headers and its body, or why it sends nothing. */
export interface ReportRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * One report as the app makes it from a `ReportApi` config: the caller `rawNumber`, the tag the
 * user picked (`{fraud}`…, or `{other}` for an automatic report) and the comment typed (null: none).
 */
export function buildReportRequest(
  api: ReportApiConfig,
  rawNumber: string,
  tag: string,
  comment: string | null,
  phoneCountryCode = '33',
): ReportRequest {
  const [intercept, ...rest] = api.actions;
  if (intercept?.type !== 'ParseIncomingNumber')
    throw new Error('the app lists only reports starting with ParseIncomingNumber');
  if (!new RegExp(`^(?:${intercept.numberFilter ?? '.*'})$`).test(rawNumber))
    throw new Error('numberFilter does not match');
  const number = parseIncomingNumber(rawNumber, phoneCountryCode, intercept.forwardType ?? 0);
  let category: string | undefined;
  for (const action of rest) {
    if (action.type === 'CategoryConfig') {
      category = action.map?.[tag];
      if (category === undefined) throw new Error(`CategoryConfig has no ${tag}: the report stops`);
    } else if (action.type === 'HttpDownload') {
      if (action.method !== 1) throw new Error('a report is a POST (method 1)');
      const fill = (text: string): string =>
        resolveNumberTags(text, number)
          .replaceAll('{number}', `${number.cc}${number.domestic}`)
          .replaceAll('{category}', category ?? '')
          .replaceAll('{comment}', comment ?? '');
      const headers: Record<string, string> = {};
      for (const line of (action.header ?? '').split(/\r?\n/).filter((line) => line.trim() !== '')) {
        const [key = '', value = ''] = line.split(':').map((part) => part.trim());
        headers[key] = value;
      }
      return {
        url: fill(action.url ?? ''),
        headers: {
          ...headers,
          ...(headers['User-Agent'] === undefined ? { 'User-Agent': SPAMBLOCKER_HEADERS['User-Agent'] } : {}),
          // Android's HttpURLConnection, for a POST whose Content-Type the app did not set.
          'Content-Type': 'application/x-www-form-urlencoded',
          'Accept-Encoding': 'gzip',
          Connection: 'Keep-Alive',
        },
        body: fill(action.body ?? ''),
      };
    } else throw new Error(`unexpected action ${action.type} in a report`);
  }
  throw new Error('no HttpDownload in the report');
}

/** Only a 2xx counts as reported (HttpRequest.execute: `statusCode in 200..299`). */
export const reportSucceeded = (status: number): boolean => status >= 200 && status <= 299;
