// The `primary` source: tellows. With a partner key it asks the JSON API (and the HTML page
// only to fill comments the API did not return); without a key it reads the HTML page. The
// API and the site are different hosts, each behind its own fetcher (pause, budget).
import { fetchCallOf, fetchUpstreamPage } from '../common/outcomes.js';
import { createHash } from 'node:crypto';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { PrimaryData } from '../../domain/report.js';
import type { UpstreamFetcher } from '../../infra/http/types.js';
import { failed, ok, type Source, type SourceCall, type SourceOutcome } from '../../domain/ports/source.js';
import { parseTellowsApi } from './parse-tellows-api.js';
import { parseTellowsPage } from './parse-tellows-page.js';
import { outcomeNamingMissingMarkers } from '../markers.js';

/** The fetchers' names (logs, metrics, politeness keys): the API host and the site host. */
export const TELLOWS_API_FETCHER = 'tellows';
export const TELLOWS_WEB_FETCHER = 'tellows-web';

/** How many comments the API is asked for (the documented value; the list is capped at 50 anyway). */
export const TELLOWS_API_COMMENTS = 10;

export interface TellowsLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface TellowsSourceOptions {
  /** TELLOWS_API_URL, e.g. https://www.tellows.de */
  apiUrl: string;
  /** TELLOWS_WEB_URL, e.g. https://www.tellows.fr */
  webUrl: string;
  /** TELLOWS_API_KEY; without it only the HTML page is used. */
  apiKey?: string;
  /** TELLOWS_PARTNER, sent as the `partner` query parameter when set. */
  partner?: string;
  apiFetcher: UpstreamFetcher;
  /** The site's fetcher; defaults to `apiFetcher` (one budget for both hosts). */
  webFetcher?: UpstreamFetcher;
  logger?: TellowsLogger;
}

type Outcome = SourceOutcome<PrimaryData>;

function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** French-plan numbers in their national digits, any other number as 00 + E.164 digits. */
export function tellowsNumber(number: ParsedPhoneNumber): string {
  if (number.isFrenchPlan && number.frenchNationalDigits !== null) return number.frenchNationalDigits;
  return `00${number.e164.replace(/^\+/, '')}`;
}

/**
 * The `country=` the API is asked with: `fr` for the French plan (overseas included, the number
 * goes in national form), otherwise the number's own region in lower case (`be` for a Belgian
 * number), so tellows reads it against that country's reports. `lang` stays `fr`: it is the
 * language of our users, not of the caller.
 */
export function tellowsCountry(number: Pick<ParsedPhoneNumber, 'isFrenchPlan' | 'regionCode'>): string {
  if (number.isFrenchPlan) return 'fr';
  return /^[A-Z]{2}$/.test(number.regionCode) ? number.regionCode.toLowerCase() : 'fr';
}

export function buildTellowsApiUrl(apiUrl: string, number: ParsedPhoneNumber, partner?: string): string {
  const query = new URLSearchParams({
    json: '1',
    country: tellowsCountry(number),
    lang: 'fr',
    showcomments: String(TELLOWS_API_COMMENTS),
  });
  if (partner !== undefined) query.set('partner', partner);
  return `${trimBase(apiUrl)}/basic/num/${encodeURIComponent(tellowsNumber(number))}?${query.toString()}`;
}

export function buildTellowsPageUrl(webUrl: string, number: ParsedPhoneNumber): string {
  return `${trimBase(webUrl)}/num/${encodeURIComponent(tellowsNumber(number))}`;
}

export function createTellowsSource(options: TellowsSourceOptions): Source<'primary'> {
  const { apiFetcher, apiKey, partner, logger } = options;
  const webFetcher = options.webFetcher ?? apiFetcher;
  // tellows accepts the key's MD5 in a header: the clear key never travels nor gets logged.
  const authToken = apiKey === undefined ? undefined : createHash('md5').update(apiKey).digest('hex');

  async function lookupPage(
    number: ParsedPhoneNumber,
    signal: AbortSignal,
    call: SourceCall | undefined,
  ): Promise<Outcome> {
    const fetched = await fetchUpstreamPage(webFetcher, {
      url: buildTellowsPageUrl(options.webUrl, number),
      headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' },
      signal,
      ...fetchCallOf(call),
    });
    if (fetched.kind === 'outcome') return fetched.outcome;
    return outcomeNamingMissingMarkers(parseTellowsPage(fetched.response.body));
  }

  async function lookupApi(
    number: ParsedPhoneNumber,
    token: string,
    signal: AbortSignal,
    call: SourceCall | undefined,
  ): Promise<Outcome> {
    const fetched = await fetchUpstreamPage(apiFetcher, {
      url: buildTellowsApiUrl(options.apiUrl, number, partner),
      headers: { accept: 'application/json,text/html;q=0.9,*/*;q=0.5', 'x-auth-token': token },
      signal,
      ...fetchCallOf(call),
    });
    if (fetched.kind === 'outcome') return fetched.outcome;
    const parsed = parseTellowsApi(fetched.response.body);
    const outcome = outcomeNamingMissingMarkers(parsed);
    if (outcome.status === 'error' && outcome.reason === 'auth') {
      logger?.warn(
        { upstream: 'tellows' },
        'tellows refused the partner API key (TELLOWS_API_KEY): check the key and TELLOWS_PARTNER',
      );
    }
    if (outcome.status !== 'ok') return outcome;
    const data = outcome.data;
    if (data.commentList.length > 0 || data.commentsCount === 0 || !number.isFrenchPlan) return ok(data);
    // The API counted comments but sent none (plan or `showcomments` limits): take them from
    // the page. Whatever goes wrong there, the API's figures stand on their own.
    const page = await lookupPage(number, signal, call);
    if (page.status !== 'ok') return ok(data);
    const mainCallerType = parsed.mainCallerType;
    const commentList = page.data.commentList.map((comment) => ({
      ...comment,
      callerType: mainCallerType || comment.callerType,
    }));
    return ok({ ...data, commentList });
  }

  return {
    slot: 'primary',
    name: 'tellows',
    async lookup(number, signal, call) {
      try {
        if (authToken !== undefined) return await lookupApi(number, authToken, signal, call);
        // The site serves French numbers; foreign ones need the API (tellowsUpstream.covers).
        // Unreachable through the engine, which asks covers() first and answers `skipped`; never
        // a cacheable not_found for a site nobody asked.
        if (!number.isFrenchPlan) return failed('aborted');
        return await lookupPage(number, signal, call);
      } catch {
        // Parsers and fetchers do not throw; this keeps the promise of never throwing anyway.
        return failed('parse');
      }
    },
  };
}
