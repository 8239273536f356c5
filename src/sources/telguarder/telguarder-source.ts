// The `signals` source: telguarder's number page, reached as the site's own search form does
// (POST /fr/search, then a same-host redirect that the HTTP client follows with a GET), read by
// the pure page parser. French numbers only.
import type { SignalsData } from '../../domain/report.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { UpstreamFetcher } from '../../infra/http/types.js';
import type { MarkerReport } from '../markers.js';
import { blocked, failed, notFound, ok } from '../source.js';
import type { Source, SourceOutcome } from '../source.js';
import { frenchDigitsForUrl, joinUrl, outcomeOfUnexpectedError } from '../common/outcomes.js';
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
      const result = await fetcher.fetch({
        url: search.url,
        method: 'POST',
        headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
        body: search.body,
        signal,
      });
      if (result.kind === 'outcome') return result.outcome;
      const { status, body } = result.response;
      if (status === 404 || status === 410) return notFound();
      if (status < 200 || status > 299) return failed('http_status');
      const page = parseTelguarderPage(body);
      switch (page.kind) {
        case 'ok':
          return ok(page.data);
        case 'not_found':
          return notFound();
        case 'challenge':
          return blocked('challenge');
        case 'invalid':
          return failed('parse');
      }
    } catch {
      return outcomeOfUnexpectedError(signal);
    }
  }

  return { slot: 'signals', name: TELGUARDER_UPSTREAM, lookup };
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
