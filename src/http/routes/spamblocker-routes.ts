// Ready-to-import configs for SpamBlocker (aj3423/SpamBlocker, the open Android call blocker),
// in the app's own JSON (kotlinx.serialization, `type` as the class discriminator), filled with
// this deployment's public base URL: docs/integrations/spamblocker.md.
//
// - query.json: an "Instant Query" API (the app's `Api`): ParseIncomingNumber, then HttpDownload
//   of `/verdict?cid=fr` for `{cc}{domestic}` (pasted unencoded by the app), then
//   ParseQueryResult (negative: the body starts with `block`; positive: with `allow`; category:
//   the `/cid` line), FilterSpamResult and ImportToSpamDB. Public: it holds no secret.
// - workflow.json (feed-routes.ts, behind the feed's password): a scheduled workflow (`Bot`)
//   that downloads /feed/blocklist.csv, parses it with ParseCSV and replaces one number rule.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

/**
 * SpamBlocker races every enabled API within about 4.5 s and gives none a deadline of its own:
 * the lookup answers within 3.5 s (what is still fetching then counts as unknown), leaving a
 * second for the network.
 */
export const SPAMBLOCKER_WAIT_MS = 3500;

/** The regular expressions ParseQueryResult applies (the app's default flags: ignore case, dot matches all). */
export const SPAMBLOCKER_SIGNATURES = {
  negativeSig: '^block',
  positiveSig: '^allow',
  // The second line of `/verdict?cid=`: the `/cid` line.
  categorySig: '\\n([^\\r\\n]+)',
} as const;

const HOST = /^(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The port a scheme implies, left out of a URL. */
const DEFAULT_PORT: Readonly<Record<'http' | 'https', string>> = { http: '80', https: '443' };

/**
 * The port a trusted proxy says the client reached (X-Forwarded-Port, the last value), or
 * undefined. Trusted means what TRUST_PROXY says of the proxy that sent it: Fastify's `ips` holds
 * more than the socket's address only when that peer is trusted and sent X-Forwarded-For (every
 * proxy that sends X-Forwarded-Port does), so a client's own header is never read.
 */
function forwardedPort(request: FastifyRequest): string | undefined {
  const header = request.headers['x-forwarded-port'];
  if (header === undefined || request.ips === undefined || request.ips.length < 2) return undefined;
  const value = (Array.isArray(header) ? header.join(',') : header).split(',').pop()?.trim() ?? '';
  const port = /^[0-9]{1,5}$/.test(value) ? Number(value) : 0;
  return port >= 1 && port <= 65535 ? String(port) : undefined;
}

/**
 * The deployment's public base URL, without a trailing slash: PUBLIC_URL when set; else the
 * request's protocol, host and port, which Fastify takes from X-Forwarded-Proto and
 * X-Forwarded-Host (and this from X-Forwarded-Port) only when TRUST_PROXY trusts the proxy that
 * sent them, and from the connection and Host otherwise. A forwarded port is kept unless it is
 * the scheme's own: behind a proxy published on 8080, phones are sent to 8080.
 */
export function publicBaseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl.replace(/\/+$/, '');
  const host = request.host;
  if (!HOST.test(host)) throw new ApiError('bad_request', 'The Host header is not a host name: set PUBLIC_URL.');
  const protocol = request.protocol === 'https' ? 'https' : 'http';
  const port = /:\d+$/.test(host) ? undefined : forwardedPort(request);
  return `${protocol}://${host}${port === undefined || port === DEFAULT_PORT[protocol] ? '' : `:${port}`}`;
}

/** The Instant Query API, as SpamBlocker's `Api` serialises. */
export function spamBlockerQueryApi(base: string): Record<string, unknown> {
  return {
    desc: `phone-reputation (${new URL(base).host})`,
    enabled: true,
    actions: [
      { type: 'ParseIncomingNumber', numberFilter: '.*' },
      { type: 'HttpDownload', url: `${base}/api/phone/{cc}{domestic}/verdict?wait=${SPAMBLOCKER_WAIT_MS}&cid=fr`, header: '' },
      { type: 'ParseQueryResult', ...SPAMBLOCKER_SIGNATURES },
      { type: 'FilterSpamResult' },
      { type: 'ImportToSpamDB' },
    ],
  };
}

export const WORKFLOW_RULE_DESCRIPTION = 'phone-reputation blocklist';

/** The scheduled workflow, as SpamBlocker's `Bot` serialises: every 6 hours, the CSV replaces one number rule. */
export function spamBlockerWorkflow(base: string, basicCredentials: string): Record<string, unknown> {
  return {
    desc: WORKFLOW_RULE_DESCRIPTION,
    schedule: { type: 'Periodically', time: { hour: 6, min: 0 } },
    actions: [
      { type: 'HttpDownload', url: `${base}/feed/blocklist.csv`, header: `Authorization: Basic ${basicCredentials}` },
      { type: 'ParseCSV', columnMapping: '{}' },
      { type: 'ImportAsRegexRule', description: WORKFLOW_RULE_DESCRIPTION, priority: 0, isWhitelist: false, importType: 'Replace', importAs: 0 },
    ],
    enabled: true,
  };
}

export async function spamBlockerRoutes(app: FastifyInstance, options: { publicUrl: string | undefined }): Promise<void> {
  app.get('/integrations/spamblocker/query.json', { config: { rateLimit: true, shed: true }, schema: { hide: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8');
    return reply.send(`${JSON.stringify(spamBlockerQueryApi(publicBaseUrl(request, options.publicUrl)), null, 2)}\n`);
  });
}
