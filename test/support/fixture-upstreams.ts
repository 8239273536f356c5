// The three upstream sites answering every number with one chosen answer per site (by default
// each adapter's "normal" fixture), for tests that run the whole service and switch a site
// to another fixture or a bare status. A per-site view over fake-upstream-sites.ts.
import { KNOWN_NUMBER, startFakeUpstreamSites, type Site, type SiteAnswer } from './fake-upstream-sites.js';

export type UpstreamSite = 'tellows' | 'numeroinconnu' | 'telguarder';
export type { SiteAnswer };

const SITES_OF: Record<UpstreamSite, Site[]> = {
  tellows: ['tellowsApi', 'tellowsWeb'],
  numeroinconnu: ['numeroinconnu'],
  telguarder: ['telguarder'],
};

export interface FixtureUpstreams {
  /** Environment pointing the service's adapters at these servers. */
  env: Record<string, string>;
  answerWith(site: UpstreamSite, answer: SiteAnswer): void;
  /** Requests each site received for a number page or document. */
  requestCount(site: UpstreamSite): number;
  close(): Promise<void>;
}

export async function startFixtureUpstreams(): Promise<FixtureUpstreams> {
  const sites = await startFakeUpstreamSites({ fallback: { ...KNOWN_NUMBER } });
  return {
    env: sites.env(),
    answerWith(site, answer) {
      for (const each of SITES_OF[site]) sites.fallback[each] = answer;
    },
    requestCount: (site) => SITES_OF[site].reduce((total, each) => total + sites.count(each), 0),
    close: () => sites.close(),
  };
}
