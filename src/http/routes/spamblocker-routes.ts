// Ready-to-import configs for SpamBlocker (aj3423/SpamBlocker, the open Android call blocker),
// in the app's own JSON (kotlinx.serialization, `type` as the class discriminator), filled with
// this deployment's public base URL: docs/integrations/spamblocker.md.
//
// Built from a guessed or a loopback base URL (PUBLIC_URL unset), a config says so in its
// description (which the app shows) and in an X-Public-URL-Warning header (public-url.ts).
//
// - query.json: an "Instant Query" API (the app's `Api`): ParseIncomingNumber, then HttpDownload
//   of `/verdict?cid=fr` for `{cc}{domestic}` (pasted unencoded by the app), then
//   ParseQueryResult (negative: the body starts with `block`; positive: with `allow`; category:
//   the `/cid` line), FilterSpamResult and ImportToSpamDB. Public: it holds no secret.
// - workflow.json (feed-routes.ts, behind the feed's password): a scheduled workflow (`Bot`)
//   that downloads /feed/blocklist.csv, parses it with ParseCSV and replaces one number rule.
// - report.json: the "Report API" (the app's `ReportApi`), posting to /api/report with the token
//   left to paste (spamblocker-report.ts; `phone-rep token create --spamblocker` fills it in).
// - query-qr.svg: the address of query.json as a QR code, for the lookup page's setup section:
//   a phone's camera opens it, and the JSON is then one copy away from SpamBlocker's import box.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import qrcode from 'qrcode-generator';
import { publicBase, PUBLIC_URL_WARNINGS, type PublicUrlWarning } from '../public-url.js';
import { SPAMBLOCKER_REPORT_PATH, spamBlockerReportApi } from './spamblocker-report.js';

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

/** The Instant Query API, as SpamBlocker's `Api` serialises. */
export function spamBlockerQueryApi(base: string, warning?: PublicUrlWarning): Record<string, unknown> {
  return {
    desc: `phone-reputation (${new URL(base).host}${warning === undefined ? '' : `; ${PUBLIC_URL_WARNINGS[warning].short}`})`,
    enabled: true,
    actions: [
      { type: 'ParseIncomingNumber', numberFilter: '.*' },
      {
        type: 'HttpDownload',
        url: `${base}/api/phone/{cc}{domestic}/verdict?wait=${SPAMBLOCKER_WAIT_MS}&cid=fr`,
        header: '',
      },
      { type: 'ParseQueryResult', ...SPAMBLOCKER_SIGNATURES },
      { type: 'FilterSpamResult' },
      { type: 'ImportToSpamDB' },
    ],
  };
}

export const WORKFLOW_RULE_DESCRIPTION = 'phone-reputation blocklist';

/**
 * The scheduled workflow, as SpamBlocker's `Bot` serialises: every 6 hours, the CSV replaces one
 * number rule. A warning goes in the workflow's own description only: the rule's is what
 * `Replace` finds the rule by.
 */
export function spamBlockerWorkflow(
  base: string,
  basicCredentials: string,
  warning?: PublicUrlWarning,
): Record<string, unknown> {
  return {
    desc:
      warning === undefined
        ? WORKFLOW_RULE_DESCRIPTION
        : `${WORKFLOW_RULE_DESCRIPTION} (${PUBLIC_URL_WARNINGS[warning].short})`,
    schedule: { type: 'Periodically', time: { hour: 6, min: 0 } },
    actions: [
      { type: 'HttpDownload', url: `${base}/feed/blocklist.csv`, header: `Authorization: Basic ${basicCredentials}` },
      { type: 'ParseCSV', columnMapping: '{}' },
      {
        type: 'ImportAsRegexRule',
        description: WORKFLOW_RULE_DESCRIPTION,
        priority: 0,
        isWhitelist: false,
        importType: 'Replace',
        importAs: 0,
      },
    ],
    enabled: true,
  };
}

export const SPAMBLOCKER_QUERY_PATH = '/integrations/spamblocker/query.json';
export const SPAMBLOCKER_QUERY_QR_PATH = '/integrations/spamblocker/query-qr.svg';

/**
 * `text` as a QR code, one SVG document that scales (no fixed pixel size), black on white with
 * the four-module quiet zone the standard asks for. Error correction M: a phone's screen
 * photographed by another phone reads it well, and an address of a hundred characters stays a
 * small code (version 6 or so).
 */
export function qrCodeSvg(text: string): string {
  const code = qrcode(0, 'M');
  code.addData(text, 'Byte');
  code.make();
  // One rectangle per run of dark modules in a row (`M x y h n v1 h-n z`), not one square per
  // module: a config of a kilobyte is a code of ~130×130 modules, 100 KB drawn square by square.
  const margin = 4;
  const count = code.getModuleCount();
  const side = count + 2 * margin;
  const runs: string[] = [];
  for (let row = 0; row < count; row += 1) {
    for (let column = 0; column < count;) {
      if (!code.isDark(row, column)) {
        column += 1;
        continue;
      }
      const start = column;
      while (column < count && code.isDark(row, column)) column += 1;
      runs.push(`M${start + margin} ${row + margin}h${column - start}v1h-${column - start}z`);
    }
  }
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" ` +
    `preserveAspectRatio="xMinYMin meet" shape-rendering="crispEdges"><rect width="100%" height="100%" fill="white"/>` +
    `<path d="${runs.join('')}" fill="black"/></svg>\n`
  );
}

export async function spamBlockerRoutes(
  app: FastifyInstance,
  options: { publicUrl: string | undefined },
): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  // The address a phone opens to read the config: the same base URL the config itself carries.
  typed.get(
    SPAMBLOCKER_QUERY_QR_PATH,
    { config: { rateLimit: true, shed: true }, schema: { hide: true } },
    async (request, reply) => {
      const base = publicBase(request, options.publicUrl);
      reply.header('cache-control', 'no-store').header('content-type', 'image/svg+xml; charset=utf-8');
      // A guessed or loopback address is said here too: the QR code carries the same base as query.json.
      if (base.warning !== undefined) reply.header('x-public-url-warning', PUBLIC_URL_WARNINGS[base.warning].sentence);
      return reply.send(qrCodeSvg(`${base.url}${SPAMBLOCKER_QUERY_PATH}`));
    },
  );
  typed.get(
    SPAMBLOCKER_QUERY_PATH,
    { config: { rateLimit: true, shed: true }, schema: { hide: true } },
    async (request, reply) => {
      const base = publicBase(request, options.publicUrl);
      reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8');
      if (base.warning !== undefined) reply.header('x-public-url-warning', PUBLIC_URL_WARNINGS[base.warning].sentence);
      return reply.send(`${JSON.stringify(spamBlockerQueryApi(base.url, base.warning), null, 2)}\n`);
    },
  );
  // Public like query.json: it holds no token, only the place to paste one.
  typed.get(
    SPAMBLOCKER_REPORT_PATH,
    { config: { rateLimit: true, shed: true }, schema: { hide: true } },
    async (request, reply) => {
      const base = publicBase(request, options.publicUrl);
      reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8');
      if (base.warning !== undefined) reply.header('x-public-url-warning', PUBLIC_URL_WARNINGS[base.warning].sentence);
      return reply.send(`${JSON.stringify(spamBlockerReportApi(base.url, undefined, base.warning), null, 2)}\n`);
    },
  );
}
