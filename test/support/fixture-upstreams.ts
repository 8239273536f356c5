// The three upstream sites on loopback, serving the adapters' own fixture pages in each site's
// format (tellows' number page, numeroinconnu's page, telguarder's search-then-page), for
// tests that run the whole service with its real adapters. Each site can be switched to
// another fixture or to a bare status (a 429 with Retry-After, a 500…).
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { startLoopbackServer, type LoopbackServer, type ReceivedRequest } from './loopback-server.js';

export type UpstreamSite = 'tellows' | 'numeroinconnu' | 'telguarder';

export type SiteAnswer = { fixture: string } | { status: number; headers?: Record<string, string> };

const DEFAULT_FIXTURES: Record<UpstreamSite, string> = {
  tellows: 'page-normal.html',
  numeroinconnu: 'normal.html',
  telguarder: 'normal.html',
};

function fixtureBytes(site: UpstreamSite, name: string): Buffer {
  return readFileSync(new URL(`../../src/sources/${site}/fixtures/${name}`, import.meta.url));
}

export interface FixtureUpstreams {
  /** Environment pointing the service's adapters at these servers. */
  env: Record<string, string>;
  answerWith(site: UpstreamSite, answer: SiteAnswer): void;
  /** Requests each site received (telguarder's search POST included). */
  requestCount(site: UpstreamSite): number;
  close(): Promise<void>;
}

export async function startFixtureUpstreams(): Promise<FixtureUpstreams> {
  const answers: Record<UpstreamSite, SiteAnswer> = {
    tellows: { fixture: DEFAULT_FIXTURES.tellows },
    numeroinconnu: { fixture: DEFAULT_FIXTURES.numeroinconnu },
    telguarder: { fixture: DEFAULT_FIXTURES.telguarder },
  };

  const send = (site: UpstreamSite, response: ServerResponse): void => {
    const answer = answers[site];
    if ('status' in answer) {
      response.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8', ...answer.headers });
      response.end('<html><body>unavailable</body></html>');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(fixtureBytes(site, answer.fixture));
  };

  const servers: Record<UpstreamSite, LoopbackServer> = {
    tellows: await startLoopbackServer((_request, response) => send('tellows', response)),
    numeroinconnu: await startLoopbackServer((_request, response) => send('numeroinconnu', response)),
    telguarder: await startLoopbackServer((request: ReceivedRequest, response) => {
      // The site's search: POST /fr/search answers 302 to the number page, served by GET.
      if (request.method === 'POST' && request.url === '/fr/search') {
        const digits = new URLSearchParams(request.body).get('q') ?? '';
        response.writeHead(302, { location: `/fr/numero/${digits}` });
        response.end();
        return;
      }
      send('telguarder', response);
    }),
  };

  return {
    env: {
      TELLOWS_API_URL: servers.tellows.url,
      TELLOWS_WEB_URL: servers.tellows.url,
      NUMEROINCONNU_URL: servers.numeroinconnu.url,
      TELGUARDER_URL: servers.telguarder.url,
    },
    answerWith(site, answer) {
      answers[site] = answer;
    },
    requestCount: (site) => servers[site].received.length,
    close: async () => {
      await Promise.all(Object.values(servers).map((server) => server.close()));
    },
  };
}
