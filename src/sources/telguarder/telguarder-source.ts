// The `signals` source: telguarder's number page, read by the pure page parser. French numbers
// only (its coverage rule is telguarderUpstream.covers). Two request forms, neither confirmed
// for France (TELGUARDER_LOOKUP): `search` posts the site's own search form (POST /fr/search,
// then a same-host redirect that the HTTP client follows with a GET); `number` asks the
// number page directly (GET /fr/number/{0XXXXXXXXX}).
import type { SignalsData } from '../../domain/report.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { UpstreamFetcher } from '../../infra/http/types.js';
import { failed } from '../../domain/ports/source.js';
import type { Source, SourceCall, SourceOutcome } from '../../domain/ports/source.js';
import {
  fetchCallOf,
  fetchUpstreamPage,
  frenchDigitsForUrl,
  joinUrl,
  outcomeOfUnexpectedError,
} from '../common/outcomes.js';
import { parseTelguarderPage } from './parse-telguarder-page.js';
import { outcomeNamingMissingMarkers } from '../markers.js';

export const TELGUARDER_UPSTREAM = 'telguarder';

export type TelguarderLookupForm = 'search' | 'number';

export interface TelguarderSourceOptions {
  /** `TELGUARDER_URL`, e.g. https://www.telguarder.com or a loopback test server. */
  baseUrl: string;
  /** `TELGUARDER_LOOKUP`; default `search`. */
  lookup?: TelguarderLookupForm;
  fetcher: UpstreamFetcher;
}

/** The search request for a French number; null outside the French plan. */
export function buildTelguarderSearch(
  baseUrl: string,
  frenchNationalDigits: string | null,
): { url: string; body: string } | null {
  const digits = frenchDigitsForUrl(frenchNationalDigits);
  return digits === null ? null : { url: joinUrl(baseUrl, '/fr/search'), body: `q=${digits}` };
}

/** The request that reaches a French number's page in the chosen form; null outside the French plan. */
export function buildTelguarderRequest(
  baseUrl: string,
  form: TelguarderLookupForm,
  frenchNationalDigits: string | null,
): { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string } | null {
  if (form === 'number') {
    const digits = frenchDigitsForUrl(frenchNationalDigits);
    return digits === null
      ? null
      : { url: joinUrl(baseUrl, `/fr/number/${digits}`), method: 'GET', headers: { accept: 'text/html' } };
  }
  const search = buildTelguarderSearch(baseUrl, frenchNationalDigits);
  return search === null
    ? null
    : {
        url: search.url,
        method: 'POST',
        headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
        body: search.body,
      };
}

export function createTelguarderSource(options: TelguarderSourceOptions): Source<'signals'> {
  const { baseUrl, fetcher } = options;
  const form = options.lookup ?? 'search';

  async function lookup(
    number: ParsedPhoneNumber,
    signal: AbortSignal,
    call?: SourceCall,
  ): Promise<SourceOutcome<SignalsData>> {
    const request = number.isFrenchPlan ? buildTelguarderRequest(baseUrl, form, number.frenchNationalDigits) : null;
    // Unreachable through the engine, which asks the description's covers() first and answers
    // `skipped`. Never a cacheable not_found for a site nobody asked: an `aborted` request is
    // nothing the upstream did (no cache, no breaker, no retry).
    if (request === null) return failed('aborted');
    try {
      // A search is a POST the site answers with a redirect to the number page, followed with a
      // GET: two requests sent, both charged to TELGUARDER_RPM before the first goes out.
      const expectedRequests = request.method === 'POST' ? 2 : 1;
      const fetched = await fetchUpstreamPage(fetcher, { ...request, signal, expectedRequests, ...fetchCallOf(call) });
      if (fetched.kind === 'outcome') return fetched.outcome;
      return outcomeNamingMissingMarkers(parseTelguarderPage(fetched.response.body));
    } catch {
      return outcomeOfUnexpectedError(signal);
    }
  }

  return { slot: 'signals', name: TELGUARDER_UPSTREAM, lookup };
}
