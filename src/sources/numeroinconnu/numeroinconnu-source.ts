// The `community` source: numeroinconnu.fr's page for a French number, fetched through the
// upstream's polite fetcher and read by the pure page parser. French numbers only
// (its coverage rule is numeroinconnuUpstream.covers).
import type { CommunityData } from '../../domain/report.js';
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
import { parseNumeroinconnuPage } from './parse-numeroinconnu-page.js';
import { outcomeNamingMissingMarkers } from '../markers.js';

export const NUMEROINCONNU_UPSTREAM = 'numeroinconnu';

export interface NumeroinconnuSourceOptions {
  /** `NUMEROINCONNU_URL`, e.g. https://www.numeroinconnu.fr or a loopback test server. */
  baseUrl: string;
  fetcher: UpstreamFetcher;
}

/** `GET {base}/numero/{0XXXXXXXXX}`; null for a number outside the French plan. */
export function buildNumeroinconnuUrl(baseUrl: string, frenchNationalDigits: string | null): string | null {
  const digits = frenchDigitsForUrl(frenchNationalDigits);
  return digits === null ? null : joinUrl(baseUrl, `/numero/${digits}`);
}

export function createNumeroinconnuSource(options: NumeroinconnuSourceOptions): Source<'community'> {
  const { baseUrl, fetcher } = options;

  async function lookup(
    number: ParsedPhoneNumber,
    signal: AbortSignal,
    call?: SourceCall,
  ): Promise<SourceOutcome<CommunityData>> {
    const url = number.isFrenchPlan ? buildNumeroinconnuUrl(baseUrl, number.frenchNationalDigits) : null;
    // Unreachable through the engine, which asks the description's covers() first and answers
    // `skipped`. Never a cacheable not_found for a site nobody asked: an `aborted` request is
    // nothing the upstream did (no cache, no breaker, no retry).
    if (url === null) return failed('aborted');
    try {
      const fetched = await fetchUpstreamPage(fetcher, {
        url,
        method: 'GET',
        headers: { accept: 'text/html' },
        signal,
        ...fetchCallOf(call),
      });
      if (fetched.kind === 'outcome') return fetched.outcome;
      return outcomeNamingMissingMarkers(parseNumeroinconnuPage(fetched.response.body));
    } catch {
      return outcomeOfUnexpectedError(signal);
    }
  }

  return { slot: 'community', name: NUMEROINCONNU_UPSTREAM, lookup };
}
