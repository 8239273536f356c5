// The lookup page at `/`: three static files (src/web/static) read once when the app is built,
// served with a strict Content-Security-Policy. Not rate limited (they are static and cost no
// upstream request); the page's own calls to /api/phone/* are, like any client's.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Nothing but our own script, style and API; no inline code, no framing, no referrer. */
export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': PAGE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** The page's URL paths, for the 405 table of app.ts. */
export const WEB_PAGE_PATHS = ['/', '/assets/app.js', '/assets/styles.css'] as const;

interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
  cacheControl: string;
}

export interface WebPageOptions {
  /** Folder holding index.html, app.js and styles.css; defaults to src/web/static. */
  staticDir?: string;
}

/**
 * From src/http/plugins the files are two folders up; from the compiled dist/http/plugins
 * (tsc does not copy them) they are still in the source tree.
 */
function defaultStaticDir(): string {
  const candidates = [new URL('../../web/static/', import.meta.url), new URL('../../../src/web/static/', import.meta.url)];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    if (existsSync(`${path}index.html`)) return path;
  }
  throw new Error('web page files not found (expected src/web/static/index.html)');
}

function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

function staticFile(body: Buffer, contentType: string, cacheControl: string): StaticFile {
  return { body, contentType, etag: etagOf(body), cacheControl };
}

/** Reads the three files and fingerprints the asset URLs in index.html so they can be cached for long. */
export function loadWebPageFiles(staticDir: string = defaultStaticDir()): Map<string, StaticFile> {
  const dir = staticDir.endsWith('/') ? staticDir : `${staticDir}/`;
  const script = readFileSync(`${dir}app.js`);
  const styles = readFileSync(`${dir}styles.css`);
  const version = (body: Buffer): string => createHash('sha256').update(body).digest('hex').slice(0, 12);
  const html = readFileSync(`${dir}index.html`, 'utf8')
    .replace('/assets/app.js', `/assets/app.js?v=${version(script)}`)
    .replace('/assets/styles.css', `/assets/styles.css?v=${version(styles)}`);
  // Asset URLs change with their content, so they may be cached for a year; the page itself is
  // revalidated on each load so a new version reaches people at once.
  const immutable = 'public, max-age=31536000, immutable';
  return new Map([
    ['/', staticFile(Buffer.from(html, 'utf8'), 'text/html; charset=utf-8', 'no-cache')],
    ['/assets/app.js', staticFile(script, 'text/javascript; charset=utf-8', immutable)],
    ['/assets/styles.css', staticFile(styles, 'text/css; charset=utf-8', immutable)],
  ]);
}

function ifNoneMatchHits(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*');
}

export function registerWebPage(app: FastifyInstance, options: WebPageOptions = {}): void {
  const files = loadWebPageFiles(options.staticDir);
  for (const [path, file] of files) {
    app.get(path, { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
      reply.headers(SECURITY_HEADERS);
      reply.header('Cache-Control', file.cacheControl);
      reply.header('ETag', file.etag);
      if (ifNoneMatchHits(request, file.etag)) return reply.code(304).send();
      return reply.type(file.contentType).send(file.body);
    });
  }
}
