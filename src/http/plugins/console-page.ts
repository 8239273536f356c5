// The operator's console at /admin/ (docs/console.md): an HTML shell in French or English and
// the console's script and styles, built by `npm run build` (scripts/build-console.ts) into
// web/console beside the running code, named by their content's hash and precompressed there.
// Served where the admin API is (ADMIN_PORT, else the API port) when ADMIN_TOKEN is set, as a
// sibling of the admin routes, outside their Bearer check: the shell and its assets hold no data;
// every piece of data the console shows comes from the admin API with the token.
//
// The shell is sent with a strict Content-Security-Policy whose `report-uri` is
// POST /admin/csp-report: each violation a browser reports is counted by its directive
// (phone_rep_csp_violations_total), and nothing else of the report is kept or logged.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CONSOLE_LANGUAGES, CONSOLE_WORDS, type ConsoleLanguage } from '../../domain/wording/console-words.js';
import type { EncodedVariants } from '../encoding.js';
import { ApiError } from '../errors.js';
import { sendProblem, toApiError } from './problems.js';
import { chooseLanguage } from '../language.js';
import { ConsoleAssetParamsSchema, ConsoleQuerySchema, CspReportSchema } from '../schemas/console-page.js';
import { escapeHtml, etagOf, sendServedFile, variantsOf } from './web-page.js';
import { CSP_DIRECTIVES, type CspDirective } from '../../infra/metrics/service-metrics.js';

/** Where the console's CSP reports go. */
export const CSP_REPORT_PATH = '/admin/csp-report';

/** The console's policy: nothing but its own script, styles and API; no inline code, no framing. */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  `report-uri ${CSP_REPORT_PATH}`,
].join('; ');

const SHELL_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Robots-Tag': 'noindex',
};

/** The largest CSP report read: a browser's report is well under 2 KiB. */
export const CSP_REPORT_MAX_BYTES = 8 * 1024;

/** The manifest the build writes beside the assets (scripts/build-console.ts). */
export interface ConsoleManifest {
  script: string;
  style: string;
}
export const CONSOLE_MANIFEST = 'manifest.json';

export interface ConsolePageOptions {
  /** Folder of the built console (manifest.json and the assets); default: web/console beside the running code. */
  dir?: string;
  /** Counts a reported violation (the service's metrics); absent, reports are read and dropped. */
  onCspViolation?: (directive: CspDirective) => void;
}

/**
 * web/console beside the running code (dist/web/console in the build); running from the sources
 * (tests, `npm run dev`), the one the last `npm run build` wrote in dist/. Undefined when neither
 * holds a built console.
 */
export function defaultConsoleDir(): string | undefined {
  for (const url of ['../../web/console/', '../../../dist/web/console/']) {
    const dir = fileURLToPath(new URL(url, import.meta.url));
    if (existsSync(`${dir}${CONSOLE_MANIFEST}`)) return dir;
  }
  return undefined;
}

/** The shell in one language: the script renders every view into it, in the page's language. */
export function consoleShell(language: ConsoleLanguage, manifest: ConsoleManifest): string {
  const words = CONSOLE_WORDS[language];
  return [
    '<!doctype html>',
    `<html lang="${language}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="robots" content="noindex">',
    `<title>${escapeHtml(words['page.title'])}</title>`,
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="/admin/assets/${escapeHtml(manifest.style)}">`,
    `<script src="/admin/assets/${escapeHtml(manifest.script)}" defer></script>`,
    '</head>',
    '<body>',
    `<noscript><p>${escapeHtml(words['page.noscript'])}</p></noscript>`,
    '<div id="console"></div>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

interface ServedFile {
  body: Buffer;
  variants: EncodedVariants;
  etags: Readonly<Record<'identity' | 'br' | 'gzip', string>>;
  contentType: string;
  cacheControl: string;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const ASSET_NAME = /^console\.[0-9a-f]{16}\.(js|css)$/;

async function served(
  dir: string,
  fileName: string,
  body: Buffer,
  contentType: string,
  cacheControl: string,
): Promise<ServedFile> {
  const tag = etagOf(body);
  return {
    body,
    variants: await variantsOf(dir, { fileName, urlPath: '', body, contentType, cacheControl }),
    etags: { identity: `"${tag}"`, br: `"${tag}-br"`, gzip: `"${tag}-gzip"` },
    contentType,
    cacheControl,
  };
}

/** The shell in each language and the two assets, by their name, with their compressed forms. */
export async function loadConsoleFiles(
  dir: string,
): Promise<{ shells: Record<ConsoleLanguage, ServedFile>; assets: Map<string, ServedFile> }> {
  const manifest = JSON.parse(readFileSync(`${dir}${CONSOLE_MANIFEST}`, 'utf8')) as ConsoleManifest;
  const assets = new Map<string, ServedFile>();
  for (const [name, type] of [
    [manifest.script, 'text/javascript; charset=utf-8'],
    [manifest.style, 'text/css; charset=utf-8'],
  ] as const) {
    if (!ASSET_NAME.test(name)) throw new Error(`${dir}${CONSOLE_MANIFEST}: ${name} is not a console asset's name`);
    assets.set(name, await served(dir, name, readFileSync(`${dir}${name}`), type, IMMUTABLE));
  }
  const entries = await Promise.all(
    CONSOLE_LANGUAGES.map(
      async (language) =>
        [
          language,
          await served(
            dir,
            `shell.${language}.html`,
            Buffer.from(consoleShell(language, manifest), 'utf8'),
            'text/html; charset=utf-8',
            'no-cache',
          ),
        ] as const,
    ),
  );
  return { shells: Object.fromEntries(entries) as Record<ConsoleLanguage, ServedFile>, assets };
}

/** The directives a report names: `application/csp-report` (report-uri) or `application/reports+json` (Reporting API). */
export function reportedDirectives(body: unknown): CspDirective[] {
  const directiveOf = (value: unknown): CspDirective => {
    const name = typeof value === 'string' ? (value.split(' ')[0] ?? '') : '';
    return (CSP_DIRECTIVES as readonly string[]).includes(name) ? (name as CspDirective) : 'other';
  };
  if (Array.isArray(body))
    return body
      .slice(0, 32)
      .filter((report: unknown) => (report as { type?: unknown } | null)?.type === 'csp-violation')
      .map((report: { body?: { effectiveDirective?: unknown } }) => directiveOf(report.body?.effectiveDirective));
  const report = (body as { 'csp-report'?: Record<string, unknown> } | null)?.['csp-report'];
  if (report === undefined || report === null || typeof report !== 'object') return [];
  return [directiveOf(report['effective-directive'] ?? report['violated-directive'])];
}

/** The console's route group, an encapsulated plugin beside (never inside) the admin routes. */
export async function consolePageRoutes(app: FastifyInstance, options: ConsolePageOptions = {}): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const dir = options.dir ?? defaultConsoleDir();
  const files = dir === undefined ? undefined : await loadConsoleFiles(dir.endsWith('/') ? dir : `${dir}/`);
  const STATIC = { rateLimit: false, shed: false, cors: false } as const;

  typed.get(
    '/admin',
    { config: STATIC, schema: { hide: true, querystring: ConsoleQuerySchema } },
    async (request, reply) => {
      if (files === undefined)
        throw new ApiError('console_not_built', 'The console was not built: run `npm run build`.');
      const language = chooseLanguage({
        query: request.query.lang,
        cookie: request.headers.cookie,
        acceptLanguage: request.headers['accept-language'],
      });
      reply.headers(SHELL_HEADERS);
      reply.header('Content-Language', language);
      reply.header('Vary', 'Accept-Language, Cookie');
      return sendServedFile(request, reply, files.shells[language]);
    },
  );

  typed.get(
    '/admin/assets/:file',
    { config: STATIC, schema: { hide: true, params: ConsoleAssetParamsSchema } },
    async (request, reply) => {
      const file = files?.assets.get(request.params.file);
      if (file === undefined) throw new ApiError('route_not_found', 'There is no such file.');
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Cross-Origin-Resource-Policy', 'same-origin');
      return sendServedFile(request, reply, file);
    },
  );

  // A report over its limit is a 413 like the report routes' (the problems plugin makes any other 4xx a 400).
  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    const failure =
      !(error instanceof ApiError) && error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? new ApiError('content_too_large', `A CSP report is at most ${CSP_REPORT_MAX_BYTES} bytes.`, { field: 'body' })
        : toApiError(error, request);
    return sendProblem(reply, request.id, failure);
  });

  // Browsers send reports as application/csp-report (report-uri) or application/reports+json.
  app.addContentTypeParser(
    ['application/csp-report', 'application/reports+json'],
    { parseAs: 'string', bodyLimit: CSP_REPORT_MAX_BYTES },
    (_request, body, done) => {
      try {
        done(null, JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as unknown);
      } catch {
        done(new ApiError('bad_request', 'A CSP report is JSON.', { field: 'body' }), undefined);
      }
    },
  );

  typed.post(
    CSP_REPORT_PATH,
    {
      config: { rateLimit: true, shed: true, cors: false },
      bodyLimit: CSP_REPORT_MAX_BYTES,
      schema: CspReportSchema,
    },
    async (request, reply) => {
      // Only the directive is kept: the blocked URL, the page and the sample are never read out.
      for (const directive of reportedDirectives(request.body)) options.onCspViolation?.(directive);
      return reply.code(204).send(null);
    },
  );
}
