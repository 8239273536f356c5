// The `community` source: numeroinconnu.fr's page for a French number, fetched through the
// upstream's polite fetcher and read by the pure page parser. French numbers only.
import type { CommunityData } from '../../domain/report.js';
import type { Config } from '../../config/config.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { UpstreamFetcher } from '../../infra/http/types.js';
import type { MarkerReport } from '../markers.js';
import { notFound } from '../source.js';
import type { Source, SourceOutcome } from '../source.js';
import { fetchUpstreamPage, frenchDigitsForUrl, joinUrl, outcomeOfPage, outcomeOfUnexpectedError } from '../common/outcomes.js';
import { createCommunitySiteFetcher } from '../common/wiring.js';
import type { SourceWiring } from '../common/wiring.js';
import { describeNumeroinconnuPage, parseNumeroinconnuPage } from './parse-numeroinconnu-page.js';

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

  async function lookup(number: ParsedPhoneNumber, signal: AbortSignal): Promise<SourceOutcome<CommunityData>> {
    // A French-only site knows nothing of other plans: answer without calling it.
    const url = number.isFrenchPlan ? buildNumeroinconnuUrl(baseUrl, number.frenchNationalDigits) : null;
    if (url === null) return notFound();
    try {
      const fetched = await fetchUpstreamPage(fetcher, { url, method: 'GET', headers: { accept: 'text/html' }, signal });
      if (fetched.kind === 'outcome') return fetched.outcome;
      return outcomeOfPage(parseNumeroinconnuPage(fetched.response.body));
    } catch {
      return outcomeOfUnexpectedError(signal);
    }
  }

  return { slot: 'community', name: NUMEROINCONNU_UPSTREAM, lookup };
}

/**
 * The service's wiring: `NUMEROINCONNU_URL`, a budget of `NUMEROINCONNU_RPM` requests per minute and at
 * most min(UPSTREAM_CONCURRENCY, COMMUNITY_SITE_MAX_CONCURRENCY = 2) requests in flight.
 */
export function createNumeroinconnuSourceFromConfig(config: Config, wiring: SourceWiring): Source<'community'> {
  const fetcher = createCommunitySiteFetcher(
    NUMEROINCONNU_UPSTREAM,
    { requestsPerMinute: config.NUMEROINCONNU_RPM, concurrency: config.UPSTREAM_CONCURRENCY },
    wiring,
  );
  return createNumeroinconnuSource({ baseUrl: config.NUMEROINCONNU_URL, fetcher });
}

/** The markers the parser relies on, found or not in a real page (for the live canary). */
export function describeNumeroinconnuMarkers(body: string): MarkerReport[] {
  const found = describeNumeroinconnuPage(body);
  return [
    // The comment count is the one value the parser cannot do without (from either place).
    { marker: 'comments count (#count-comments or row "Nombre de commentaires")', found: found.countComments || found.commentsRow },
    { marker: '#count-comments', found: found.countComments, required: false },
    { marker: 'stats table (a known row label)', found: found.statsTable, required: false },
    { marker: '#progress-bar-inner with a percentage', found: found.dangerBarPercent, required: false },
    { marker: '#progress-bar-inner', found: found.dangerBar, required: false },
    { marker: 'row "Niveau de danger"', found: found.dangerRow, required: false },
    { marker: 'row "Nombre de visites"', found: found.visitsRow, required: false },
    { marker: 'row last rating ("Dernière évaluation" or similar; label unverified)', found: found.lastRatingRow, required: false },
    { marker: 'div.comment-item', found: found.commentItems, required: false },
    { marker: 'p.comment-text', found: found.commentTexts, required: false },
    { marker: 'strong.rank', found: found.ranks, required: false },
    { marker: 'span.date with a readable date', found: found.readableDates, required: false },
    { marker: '#filter-rank-only', found: found.rankFilter, required: false },
    { marker: 'strong.comment-heading (unknown-number notice)', found: found.siteNotice, required: false },
  ];
}
