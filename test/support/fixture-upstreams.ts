// Three loopback servers standing in for tellows, numeroinconnu.fr and telguarder, each serving
// its adapter's own "normal" fixture unless a test gives it another behaviour. `env` points the
// service's base-URL variables at them, so the real adapters and HTTP client do the work.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type http from 'node:http';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer, type ReceivedRequest } from './loopback-server.js';

export type UpstreamName = 'tellows' | 'numeroinconnu' | 'telguarder';
export const UPSTREAM_NAMES: readonly UpstreamName[] = ['tellows', 'numeroinconnu', 'telguarder'];

const FIXTURE_DIRECTORIES: Record<UpstreamName, string> = {
  tellows: '../../src/sources/tellows/fixtures/',
  numeroinconnu: '../../src/sources/numeroinconnu/fixtures/',
  telguarder: '../../src/sources/telguarder/fixtures/',
};

/** The normal page of each upstream, the one a healthy site answers for a known number. */
const NORMAL_FIXTURES: Record<UpstreamName, string> = {
  tellows: 'page-normal.html',
  numeroinconnu: 'normal.html',
  telguarder: 'normal.html',
};

export function readFixture(upstream: UpstreamName, file: string): string {
  return readFileSync(fileURLToPath(new URL(`${FIXTURE_DIRECTORIES[upstream]}${file}`, import.meta.url)), 'utf8');
}

export function normalFixture(upstream: UpstreamName): string {
  return readFixture(upstream, NORMAL_FIXTURES[upstream]);
}

export function serveHtml(body: string, status = 200): LoopbackHandler {
  return (_request: ReceivedRequest, response: http.ServerResponse) => {
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  };
}

export interface FixtureUpstreams {
  servers: Record<UpstreamName, LoopbackServer>;
  /** TELLOWS_WEB_URL, TELLOWS_API_URL, NUMEROINCONNU_URL, TELGUARDER_URL. */
  env: Record<string, string>;
  /** Requests received by all three so far. */
  requestCount(): number;
  close(): Promise<void>;
}

export async function startFixtureUpstreams(handlers: Partial<Record<UpstreamName, LoopbackHandler>> = {}): Promise<FixtureUpstreams> {
  const entries = await Promise.all(
    UPSTREAM_NAMES.map(async (name) => [name, await startLoopbackServer(handlers[name] ?? serveHtml(normalFixture(name)))] as const),
  );
  const servers = Object.fromEntries(entries) as Record<UpstreamName, LoopbackServer>;
  return {
    servers,
    env: {
      TELLOWS_WEB_URL: servers.tellows.url,
      TELLOWS_API_URL: servers.tellows.url,
      NUMEROINCONNU_URL: servers.numeroinconnu.url,
      TELGUARDER_URL: servers.telguarder.url,
    },
    requestCount: () => UPSTREAM_NAMES.reduce((sum, name) => sum + servers[name].received.length, 0),
    close: async () => {
      await Promise.all(UPSTREAM_NAMES.map((name) => servers[name].close()));
    },
  };
}
