// Stand-ins for what the three upstream sites serve, for the tests of the adapters and of the
// whole service: fake sites on loopback serving each adapter's own fixtures, and fast-check
// generators of hostile pages for the parsers' property tests.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { startLoopbackServer, type LoopbackServer } from './loopback.js';

// One loopback server that stands in for all three upstream sites at once, serving the
// adapters' own fixtures (written in each site's documented format) per number:
//   tellows partner API  GET  /basic/num/{n}       (TELLOWS_API_URL)
//   tellows web page     GET  /num/{n}             (TELLOWS_WEB_URL)
//   numeroinconnu.fr     GET  /numero/{n}          (NUMEROINCONNU_URL)
//   telguarder           POST /fr/search q={n} -> 302 -> GET /fr/numero/{n}  (TELGUARDER_URL)
// Point every *_URL variable at its `url` (`env()`, or `upstreamEnv(url)`). Unknown numbers get
// each site's "unknown number" fixture; a scenario per number can pick other fixtures or statuses.
export type Site = 'tellowsApi' | 'tellowsWeb' | 'numeroinconnu' | 'telguarder';

/** A fixture file name of that site's adapter, or a bare status (403, 429, 500…). */
export type SiteAnswer =
  { fixture: string; status?: number } | { status: number; headers?: Record<string, string> } | { blackHole: true };

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

function fixtureBytes(site: Site, name: string): Buffer {
  return readFileSync(new URL(`../src/sources/${FIXTURE_DIRS[site]}/fixtures/${name}`, import.meta.url));
}

export function fixtureText(site: Site, name: string): string {
  return fixtureBytes(site, name).toString('latin1');
}

/** Environment that points every upstream of the service at `url`. */
export function upstreamEnv(url: string): Record<string, string> {
  return { TELLOWS_API_URL: url, TELLOWS_WEB_URL: url, NUMEROINCONNU_URL: url, TELGUARDER_URL: url };
}

export interface FakeUpstreamSites extends LoopbackServer {
  /** Scenario per national number (0XXXXXXXXX); numbers not listed get `fallback`. */
  scenarios: Map<string, Scenario>;
  fallback: Scenario;
  /** Requests received per site. */
  count(site: Site): number;
  /** Requests received by all the sites together. */
  total(): number;
  /** Environment that points every upstream of the service at this server. */
  env(): Record<string, string>;
}

export async function startFakeUpstreamSites(
  options: { scenarios?: Record<string, Scenario>; fallback?: Scenario; delayMs?: number } = {},
): Promise<FakeUpstreamSites> {
  const counts: Record<Site, number> = { tellowsApi: 0, tellowsWeb: 0, numeroinconnu: 0, telguarder: 0 };
  const scenarios = new Map(Object.entries(options.scenarios ?? {}));
  const self: { sites?: FakeUpstreamSites } = {};

  const answer = (site: Site, number: string, response: ServerResponse): void => {
    counts[site] += 1;
    const scenario = scenarios.get(number) ?? self.sites?.fallback ?? UNKNOWN_NUMBER;
    const chosen: SiteAnswer = scenario[site] ?? UNKNOWN_NUMBER[site];
    if ('blackHole' in chosen) return; // never answer
    if ('fixture' in chosen) {
      const contentType =
        chosen.fixture.endsWith('.json') || chosen.fixture.endsWith('.txt') ? 'text/html; charset=utf-8' : 'text/html';
      const latin1 = chosen.fixture.includes('latin1');
      response.writeHead(chosen.status ?? 200, {
        'content-type': latin1 ? 'text/html; charset=iso-8859-1' : contentType,
      });
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
    total: () => Object.values(counts).reduce((sum, count) => sum + count, 0),
    env: () => upstreamEnv(server.url),
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

// fast-check generators of hostile HTML for parser property tests: random text, and documents
// stitched from real markers, broken tags, entities and control characters.
const FRAGMENTS = [
  '<div',
  '<div>',
  '</div>',
  '<p>',
  '</p>',
  '<td>',
  '<tr>',
  '<span>',
  '</span>',
  '<script>',
  '</script>',
  '<!--',
  '-->',
  '<style>',
  '<strong class="rank r1">',
  '<span class="date">',
  '<p class="comment-text">',
  '<div class="comment-item">',
  '<div class="comment-item comment-disabled">',
  '<div id="count-comments">',
  '<div id="progress-bar-inner">',
  '<div id="filter-rank-only">',
  '<strong class="comment-heading">',
  'Niveau de danger :',
  'Nombre de commentaires :',
  'Nombre de visites :',
  'Dernière évaluation :',
  'Dernière visite :',
  '<div class="ai-number-stats-panel">',
  '<div class="ai-row-1-cell">',
  '<div id="securityLevelValue" data-security-level="',
  '<div class="ai-assessment-body">',
  '<div class="ai-comment-text">',
  '<span class="ai-assessment-date">',
  '<span class="ai-spam-reason ai-sr-x">',
  "Commentaire de l'utilisateur (",
  '84',
  '%',
  '×',
  '\u00a0',
  '\u202f',
  '0',
  '12 mars 2024',
  '31.02.2026',
  '2026-11-20',
  '&amp;',
  '&#0;',
  '&#x110000;',
  '&valueOf;',
  '&',
  '<',
  '>',
  '"',
  "'",
  '=',
  ':',
  '\u0000',
  '\u202e',
  '\ud800',
  ' ',
  '\n',
  '<constructor>',
  '<__proto__>',
  '<a_b',
  'Dangereux',
  'Gênant',
  'r5',
  'class=',
  'id=',
];

export const hostileHtml = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength: 300 }),
    fc
      .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 })), { maxLength: 120 })
      .map((parts) => parts.join('')),
  );

/** Every date the parsers output is DD/MM/YYYY or "". */
export const isOutputDate = (date: string): boolean => date === '' || /^\d{2}\/\d{2}\/\d{4}$/.test(date);

/** Scraped text holds no tag and no control or bidi character. */
export const isPlainText = (text: string): boolean =>
  // eslint-disable-next-line no-control-regex -- checking that control characters are gone is the point
  !/<\/?[a-zA-Z][^<>]*>|[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(text) && text.length <= 1000;

/** 1 MiB of `unit` opened again and again and never closed: a page a parser must stop reading at its work bound. */
export const nestedPage = (unit: string): string => unit.repeat(Math.floor((1024 * 1024) / unit.length));
