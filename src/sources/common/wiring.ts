// What the composition root hands an adapter built from config: the shared client and, when
// several instances run, the shared politeness store.
import type { PolitenessStore } from '../../infra/http/politeness-store.js';
import type { HttpClient, UpstreamFetcher } from '../../infra/http/types.js';
import { createUpstreamFetcher } from '../../infra/http/upstream-fetcher.js';

export interface SourceWiring {
  client: HttpClient;
  /** Shared politeness state (Redis) for several instances; in memory when absent. */
  politeness?: PolitenessStore;
  now?: () => number;
}

/**
 * The two community sites ban clients that open many connections: whatever
 * UPSTREAM_CONCURRENCY says, at most this many requests are in flight to each.
 */
export const COMMUNITY_SITE_MAX_CONCURRENCY = 2;

export function createCommunitySiteFetcher(
  upstream: string,
  limits: { requestsPerMinute: number; concurrency: number },
  wiring: SourceWiring,
): UpstreamFetcher {
  return createUpstreamFetcher({
    upstream,
    client: wiring.client,
    requestsPerMinute: limits.requestsPerMinute,
    maxConcurrency: Math.min(limits.concurrency, COMMUNITY_SITE_MAX_CONCURRENCY),
    ...(wiring.now === undefined ? {} : { now: wiring.now }),
    ...(wiring.politeness === undefined ? {} : { politeness: wiring.politeness }),
  });
}
