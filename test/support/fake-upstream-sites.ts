// One loopback server that stands in for all three upstream sites at once, serving the
// adapters' own fixtures (written in each site's documented format) per number:
//   tellows partner API  GET  /basic/num/{n}       (TELLOWS_API_URL)
//   tellows web page     GET  /num/{n}             (TELLOWS_WEB_URL)
//   numeroinconnu.fr     GET  /numero/{n}          (NUMEROINCONNU_URL)
//   telguarder           POST /fr/search q={n} -> 302 -> GET /fr/numero/{n}  (TELGUARDER_URL)
// Point every *_URL variable at `url` (see `upstreamEnv`). Unknown numbers get each site's
// "unknown number" fixture; a scenario per number can pick other fixtures or statuses.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { startLoopbackServer, type LoopbackServer } from './loopback.js';

export type Site = 'tellowsApi' | 'tellowsWeb' | 'numeroinconnu' | 'telguarder';

/** A fixture file name of that site's adapter, or a bare status (403, 429, 500…). */
export type SiteAnswer = { fixture: string; status?: number } | { status: number; headers?: Record<string, string> } | { blackHole: true };

export type Scenario = Partial<Record<Site, SiteAnswer>>;

const FIXTURE_DIRS: Record<Site, string> = {
  tellowsApi: 'tellows',
  tellowsWeb: 'tellows',
  numeroinconnu: 'numeroinconnu',
  telguarder: 'telguarder',
};

export const UNKNOWN_NUMBER: Required<Scenario> = {
  tellowsApi: { fixture: 'api-unknown-number.json' },
  tellowsWeb: { fixture: 'page-unknown.html' },
  numeroinconnu: { fixture: 'unknown.html' },
  telguarder: { fixture: 'unknown.html' },
};

export const KNOWN_NUMBER: Required<Scenario> = {
  tellowsApi: { fixture: 'api-normal.json' },
  tellowsWeb: { fixture: 'page-normal.html' },
  numeroinconnu: { fixture: 'normal.html' },
  telguarder: { fixture: 'normal.html' },
};

export function fixtureText(site: Site, name: string): string {
  return readFileSync(new URL(`../../src/sources/${FIXTURE_DIRS[site]}/fixtures/${name}`, import.meta.url), 'latin1');
}

function fixtureBytes(site: Site, name: string): Buffer {
  return readFileSync(new URL(`../../src/sources/${FIXTURE_DIRS[site]}/fixtures/${name}`, import.meta.url));
}

export interface FakeUpstreamSites extends LoopbackServer {
  /** Scenario per national number (0XXXXXXXXX); numbers not listed get `fallback`. */
  scenarios: Map<string, Scenario>;
  fallback: Scenario;
  /** Requests received per site. */
  count(site: Site): number;
  /** Environment that points every upstream of the service at this server. */
  env(): Record<string, string>;
}

export async function startFakeUpstreamSites(options: { scenarios?: Record<string, Scenario>; fallback?: Scenario; delayMs?: number } = {}): Promise<FakeUpstreamSites> {
  const counts: Record<Site, number> = { tellowsApi: 0, tellowsWeb: 0, numeroinconnu: 0, telguarder: 0 };
  const scenarios = new Map(Object.entries(options.scenarios ?? {}));
  const self: { sites?: FakeUpstreamSites } = {};

  const answer = (site: Site, number: string, response: ServerResponse): void => {
    counts[site] += 1;
    const scenario = scenarios.get(number) ?? self.sites?.fallback ?? UNKNOWN_NUMBER;
    const chosen: SiteAnswer = scenario[site] ?? UNKNOWN_NUMBER[site];
    if ('blackHole' in chosen) return; // never answer
    if ('fixture' in chosen) {
      const contentType = chosen.fixture.endsWith('.json') || chosen.fixture.endsWith('.txt') ? 'text/html; charset=utf-8' : 'text/html';
      const latin1 = chosen.fixture.includes('latin1');
      response.writeHead(chosen.status ?? 200, { 'content-type': latin1 ? 'text/html; charset=iso-8859-1' : contentType });
      response.end(fixtureBytes(site, chosen.fixture));
      return;
    }
    response.writeHead(chosen.status, { 'content-type': 'text/html', ...chosen.headers });
    response.end(`<html><body>status ${chosen.status}</body></html>`);
  };

  const server = await startLoopbackServer(async (request, response) => {
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    const path = request.url.split('?')[0] ?? '';
    let match: RegExpExecArray | null;
    if (request.method === 'POST' && path === '/fr/search') {
      const digits = new URLSearchParams(request.body).get('q') ?? '';
      response.writeHead(302, { location: `/fr/numero/${encodeURIComponent(digits)}` }).end();
    } else if ((match = /^\/fr\/numero\/([^/]+)$/.exec(path))) {
      answer('telguarder', decodeURIComponent(match[1] ?? ''), response);
    } else if ((match = /^\/basic\/num\/([^/]+)$/.exec(path))) {
      answer('tellowsApi', decodeURIComponent(match[1] ?? ''), response);
    } else if ((match = /^\/num\/([^/]+)$/.exec(path))) {
      answer('tellowsWeb', decodeURIComponent(match[1] ?? ''), response);
    } else if ((match = /^\/numero\/([^/]+)$/.exec(path))) {
      answer('numeroinconnu', decodeURIComponent(match[1] ?? ''), response);
    } else {
      response.writeHead(404).end();
    }
  });
  const sites: FakeUpstreamSites = {
    ...server,
    scenarios,
    fallback: options.fallback ?? UNKNOWN_NUMBER,
    count: (site) => counts[site],
    env: () => ({
      TELLOWS_API_URL: server.url,
      TELLOWS_WEB_URL: server.url,
      NUMEROINCONNU_URL: server.url,
      TELGUARDER_URL: server.url,
    }),
  };
  self.sites = sites;
  return sites;
}

// The three upstream sites answering every number with one chosen answer per site (by default
// each adapter's "normal" fixture), for tests that run the whole service and switch a site
// to another fixture or a bare status. A per-site view over startFakeUpstreamSites.
export type UpstreamSite = 'tellows' | 'numeroinconnu' | 'telguarder';

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
