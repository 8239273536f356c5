// The `primary` source: tellows. With a partner key it asks the JSON API (and the HTML page
// only to fill comments the API did not return); without a key it reads the HTML page. The
// API and the site are different hosts, each behind its own fetcher (pause, budget).
import { fetchUpstreamPage, outcomeOfPage } from '../common/outcomes.js';
import { createHash } from 'node:crypto';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { PrimaryData } from '../../domain/report.js';
import type { Config } from '../../config/config.js';
import type { PolitenessStore } from '../../infra/http/politeness-store.js';
import type { HttpClient, UpstreamFetcher } from '../../infra/http/types.js';
import { createUpstreamFetcher } from '../../infra/http/upstream-fetcher.js';
import type { MarkerReport } from '../markers.js';
import { failed, notFound, ok, type Source, type SourceOutcome } from '../source.js';
import { describeTellowsApiMarkers, parseTellowsApi } from './parse-tellows-api.js';
import { describeTellowsPageMarkers, parseTellowsPage } from './parse-tellows-page.js';

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

export function buildTellowsApiUrl(apiUrl: string, number: ParsedPhoneNumber, partner?: string): string {
  const query = new URLSearchParams({ json: '1', country: 'fr', lang: 'fr', showcomments: String(TELLOWS_API_COMMENTS) });
  if (partner !== undefined) query.set('partner', partner);
  return `${trimBase(apiUrl)}/basic/num/${encodeURIComponent(tellowsNumber(number))}?${query.toString()}`;
}

export function buildTellowsPageUrl(webUrl: string, number: ParsedPhoneNumber): string {
  return `${trimBase(webUrl)}/num/${encodeURIComponent(tellowsNumber(number))}`;
}

/** The markers of either body the canary saw: the API's JSON or the site's page. */
export function describeMarkers(body: string): MarkerReport[] {
  const looksLikeApi = /"tellows"\s*:|NOT AUTHORIZED REQUEST/i.test(body) && !/<img\b[^>]*scoreimage/i.test(body);
  return looksLikeApi ? describeTellowsApiMarkers(body) : describeTellowsPageMarkers(body);
}

export function createTellowsSource(options: TellowsSourceOptions): Source<'primary'> {
  const { apiFetcher, apiKey, partner, logger } = options;
  const webFetcher = options.webFetcher ?? apiFetcher;
  // tellows accepts the key's MD5 in a header: the clear key never travels nor gets logged.
  const authToken = apiKey === undefined ? undefined : createHash('md5').update(apiKey).digest('hex');

  async function lookupPage(number: ParsedPhoneNumber, signal: AbortSignal): Promise<Outcome> {
    const fetched = await fetchUpstreamPage(webFetcher, {
      url: buildTellowsPageUrl(options.webUrl, number),
      headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' },
      signal,
    });
    if (fetched.kind === 'outcome') return fetched.outcome;
    return outcomeOfPage(parseTellowsPage(fetched.response.body));
  }

  async function lookupApi(number: ParsedPhoneNumber, token: string, signal: AbortSignal): Promise<Outcome> {
    const fetched = await fetchUpstreamPage(apiFetcher, {
      url: buildTellowsApiUrl(options.apiUrl, number, partner),
      headers: { accept: 'application/json,text/html;q=0.9,*/*;q=0.5', 'x-auth-token': token },
      signal,
    });
    if (fetched.kind === 'outcome') return fetched.outcome;
    const parsed = parseTellowsApi(fetched.response.body);
    switch (parsed.kind) {
      case 'auth_error':
        logger?.warn({ upstream: 'tellows' }, 'tellows refused the partner API key (TELLOWS_API_KEY): check the key and TELLOWS_PARTNER');
        return failed('auth');
      case 'invalid':
        return failed('invalid_json');
      case 'not_found':
        return notFound();
      case 'ok':
        break;
    }
    const data = parsed.data;
    if (data.commentList.length > 0 || data.commentsCount === 0 || !number.isFrenchPlan) return ok(data);
    // The API counted comments but sent none (plan or `showcomments` limits): take them from
    // the page. Whatever goes wrong there, the API's figures stand on their own.
    const page = await lookupPage(number, signal);
    if (page.status !== 'ok') return ok(data);
    const mainCallerType = parsed.mainCallerType;
    const commentList = page.data.commentList.map((comment) => ({ ...comment, callerType: mainCallerType || comment.callerType }));
    return ok({ ...data, commentList });
  }

  return {
    slot: 'primary',
    name: 'tellows',
    async lookup(number, signal) {
      try {
        if (authToken !== undefined) return await lookupApi(number, authToken, signal);
        // The site serves French numbers; foreign ones need the API (documented).
        if (!number.isFrenchPlan) return notFound();
        return await lookupPage(number, signal);
      } catch {
        // Parsers and fetchers do not throw; this keeps the promise of never throwing anyway.
        return failed('parse');
      }
    },
  };
}

export interface TellowsWiring {
  client: HttpClient;
  /** Shared politeness state (Redis) for several instances; in memory when absent. */
  politeness?: PolitenessStore;
  logger?: TellowsLogger;
  now?: () => number;
}

/**
 * The service's wiring: the API (upstream `tellows`) and the site (`tellows-web`, the names
 * src/composition.ts uses), each with its own pause, a budget of TELLOWS_RPM and
 * UPSTREAM_CONCURRENCY requests in flight.
 */
export function createTellowsSourceFromConfig(config: Config, wiring: TellowsWiring): Source<'primary'> {
  const makeFetcher = (upstream: string) =>
    createUpstreamFetcher({
      upstream,
      client: wiring.client,
      requestsPerMinute: config.TELLOWS_RPM,
      maxConcurrency: config.UPSTREAM_CONCURRENCY,
      ...(wiring.now === undefined ? {} : { now: wiring.now }),
      ...(wiring.politeness === undefined ? {} : { politeness: wiring.politeness }),
    });
  return createTellowsSource({
    apiUrl: config.TELLOWS_API_URL,
    webUrl: config.TELLOWS_WEB_URL,
    ...(config.TELLOWS_API_KEY === undefined ? {} : { apiKey: config.TELLOWS_API_KEY }),
    ...(config.TELLOWS_PARTNER === undefined ? {} : { partner: config.TELLOWS_PARTNER }),
    apiFetcher: makeFetcher('tellows'),
    webFetcher: makeFetcher('tellows-web'),
    ...(wiring.logger === undefined ? {} : { logger: wiring.logger }),
  });
}
