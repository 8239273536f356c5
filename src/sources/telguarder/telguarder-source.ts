// The `signals` source: telguarder's number page, reached as the site's own search form does
// (POST /fr/search, then a same-host redirect that the HTTP client follows with a GET), read by
// the pure page parser. French numbers only.
import type { SignalsData } from '../../domain/report.js';
import type { Config } from '../../config/config.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { UpstreamFetcher } from '../../infra/http/types.js';
import type { MarkerReport } from '../markers.js';
import { notFound } from '../source.js';
import type { Source, SourceOutcome } from '../source.js';
import { fetchUpstreamPage, frenchDigitsForUrl, joinUrl, outcomeOfPage, outcomeOfUnexpectedError } from '../common/outcomes.js';
import { createCommunitySiteFetcher } from '../common/wiring.js';
import type { SourceWiring } from '../common/wiring.js';
import { describeTelguarderPage, parseTelguarderPage } from './parse-telguarder-page.js';

export const TELGUARDER_UPSTREAM = 'telguarder';

export interface TelguarderSourceOptions {
  /** `TELGUARDER_URL`, e.g. https://www.telguarder.com or a loopback test server. */
  baseUrl: string;
  fetcher: UpstreamFetcher;
}

/** The search request for a French number; null outside the French plan. */
export function buildTelguarderSearch(baseUrl: string, frenchNationalDigits: string | null): { url: string; body: string } | null {
  const digits = frenchDigitsForUrl(frenchNationalDigits);
  return digits === null ? null : { url: joinUrl(baseUrl, '/fr/search'), body: `q=${digits}` };
}

export function createTelguarderSource(options: TelguarderSourceOptions): Source<'signals'> {
  const { baseUrl, fetcher } = options;

  async function lookup(number: ParsedPhoneNumber, signal: AbortSignal): Promise<SourceOutcome<SignalsData>> {
    const search = number.isFrenchPlan ? buildTelguarderSearch(baseUrl, number.frenchNationalDigits) : null;
    if (search === null) return notFound();
    try {
      const fetched = await fetchUpstreamPage(fetcher, {
        url: search.url,
        method: 'POST',
        headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
        body: search.body,
        signal,
      });
      if (fetched.kind === 'outcome') return fetched.outcome;
      return outcomeOfPage(parseTelguarderPage(fetched.response.body));
    } catch {
      return outcomeOfUnexpectedError(signal);
    }
  }

  return { slot: 'signals', name: TELGUARDER_UPSTREAM, lookup };
}

/**
 * The service's wiring: `TELGUARDER_URL`, a budget of `TELGUARDER_RPM` requests per minute and at
 * most min(UPSTREAM_CONCURRENCY, COMMUNITY_SITE_MAX_CONCURRENCY = 2) requests in flight.
 */
export function createTelguarderSourceFromConfig(config: Config, wiring: SourceWiring): Source<'signals'> {
  const fetcher = createCommunitySiteFetcher(
    TELGUARDER_UPSTREAM,
    { requestsPerMinute: config.TELGUARDER_RPM, concurrency: config.UPSTREAM_CONCURRENCY },
    wiring,
  );
  return createTelguarderSource({ baseUrl: config.TELGUARDER_URL, fetcher });
}

/** The markers the parser relies on, found or not in a real page (for the live canary). */
export function describeTelguarderMarkers(body: string): MarkerReport[] {
  const found = describeTelguarderPage(body);
  return [
    { marker: 'div.ai-number-stats-panel', found: found.statsPanel },
    { marker: 'div.ai-row-1-cell x3 (searches, reports, last search)', found: found.statsCells >= 3, required: false },
    { marker: 'div.ai-row-1-cell #2 (reports)', found: found.statsCells >= 2, required: false },
    { marker: '#securityLevelValue[data-security-level]', found: found.securityLevel, required: false },
    { marker: '.ai-assessment-body', found: found.assessments > 0, required: false },
    { marker: '.ai-assessment-date with a readable date (French format unverified)', found: found.assessmentDates > 0, required: false },
    { marker: '.ai-spam-reason', found: found.spamReasons > 0, required: false },
  ];
}
