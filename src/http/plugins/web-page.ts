// The lookup page at `/`: three static files (src/web/static, copied to dist/web/static by the
// build) read once when the app is built, served with a strict Content-Security-Policy, in brotli
// or gzip when the client accepts it (precompressed by the build, see docs/compression.md). Not
// rate limited (they are static and cost no upstream request); the page's own calls to
// /api/phone/* are, like any client's.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { chooseVariant, codingsOf, negotiateEncoding, precompress, varyOnAcceptEncoding, type ContentCoding, type EncodedVariants } from '../encoding.js';

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

/** One file of the page as it is served, with the name of the file it comes from. */
export interface PageFile {
  fileName: string;
  urlPath: string;
  body: Buffer;
  contentType: string;
  cacheControl: string;
}

interface ServedFile extends PageFile {
  variants: EncodedVariants;
  /** The strong ETag of each variant: a compressed form is a representation of its own. */
  etags: Readonly<Record<ContentCoding | 'identity', string>>;
}

export interface WebPageOptions {
  /** Folder holding index.html, app.js and styles.css; defaults to web/static beside the running code. */
  staticDir?: string;
}

/**
 * The folder two levels above this module: src/web/static when run from the sources (tests,
 * `npm run dev`), dist/web/static in the build, where `npm run build` copies the files.
 */
function defaultStaticDir(): string {
  const path = fileURLToPath(new URL('../../web/static/', import.meta.url));
  if (existsSync(`${path}index.html`)) return path;
  throw new Error(`web page files not found in ${path} (a build copies them there: run \`npm run build\`)`);
}

const withSlash = (dir: string): string => (dir.endsWith('/') ? dir : `${dir}/`);

const versionOf = (body: Buffer): string => createHash('sha256').update(body).digest('hex').slice(0, 12);

/**
 * The three files as served: index.html with its asset URLs fingerprinted so the assets can be
 * cached for long. Replacing an already fingerprinted URL gives the same text, so the build and
 * the server agree on the page's bytes.
 */
export function readWebPageFiles(staticDir: string = defaultStaticDir()): PageFile[] {
  const dir = withSlash(staticDir);
  const script = readFileSync(`${dir}app.js`);
  const styles = readFileSync(`${dir}styles.css`);
  const html = readFileSync(`${dir}index.html`, 'utf8')
    .replace(/\/assets\/app\.js(?:\?v=[0-9a-f]*)?/, `/assets/app.js?v=${versionOf(script)}`)
    .replace(/\/assets\/styles\.css(?:\?v=[0-9a-f]*)?/, `/assets/styles.css?v=${versionOf(styles)}`);
  // Asset URLs change with their content, so they may be cached for a year; the page itself is
  // revalidated on each load so a new version reaches people at once.
  const immutable = 'public, max-age=31536000, immutable';
  return [
    { fileName: 'index.html', urlPath: '/', body: Buffer.from(html, 'utf8'), contentType: 'text/html; charset=utf-8', cacheControl: 'no-cache' },
    { fileName: 'app.js', urlPath: '/assets/app.js', body: script, contentType: 'text/javascript; charset=utf-8', cacheControl: immutable },
    { fileName: 'styles.css', urlPath: '/assets/styles.css', body: styles, contentType: 'text/css; charset=utf-8', cacheControl: immutable },
  ];
}

const SIBLING_SUFFIX: Readonly<Record<ContentCoding, string>> = { br: '.br', gzip: '.gz' };

/**
 * Writes the `.br` and `.gz` siblings of the page's files as served (the build does this once, at
 * brotli's best quality, so the server starts without compressing anything).
 */
export async function writePrecompressedPageFiles(staticDir: string): Promise<string[]> {
  const dir = withSlash(staticDir);
  const written: string[] = [];
  for (const file of readWebPageFiles(dir)) {
    const variants = await precompress(file.body);
    for (const coding of codingsOf(variants)) {
      const bytes = variants[coding];
      if (bytes === undefined) continue;
      writeFileSync(`${dir}${file.fileName}${SIBLING_SUFFIX[coding]}`, bytes);
      written.push(`${file.fileName}${SIBLING_SUFFIX[coding]}`);
    }
  }
  return written;
}

/** A sibling the build wrote, if it is there and decodes to exactly the body served; else undefined. */
function verifiedSibling(path: string, coding: ContentCoding, body: Buffer): Buffer | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const bytes = readFileSync(path);
    const decoded = coding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes);
    return decoded.equals(body) ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The compressed forms of a file: the build's siblings when both are there and true to the body
 * (checked, so a file edited after the build is never sent stale), else made now. Running from
 * src/ (tests, `npm run dev`) there are none and the files are compressed at start.
 */
async function variantsOf(dir: string, file: PageFile): Promise<EncodedVariants> {
  const br = verifiedSibling(`${dir}${file.fileName}.br`, 'br', file.body);
  const gzipped = verifiedSibling(`${dir}${file.fileName}.gz`, 'gzip', file.body);
  if (br !== undefined && gzipped !== undefined) return { identity: file.body, br, gzip: gzipped };
  return precompress(file.body);
}

function etagOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 22);
}

/** Reads the files and their compressed forms, ready to serve. */
export async function loadWebPageFiles(staticDir: string = defaultStaticDir()): Promise<ServedFile[]> {
  const dir = withSlash(staticDir);
  return Promise.all(
    readWebPageFiles(dir).map(async (file) => {
      const tag = etagOf(file.body);
      return { ...file, variants: await variantsOf(dir, file), etags: { identity: `"${tag}"`, br: `"${tag}-br"`, gzip: `"${tag}-gzip"` } };
    }),
  );
}

function ifNoneMatchHits(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*');
}

/** The page's route group, an encapsulated plugin. */
export async function webPageRoutes(app: FastifyInstance, options: WebPageOptions = {}): Promise<void> {
  const files = await loadWebPageFiles(options.staticDir);
  for (const file of files) {
    app.get(file.urlPath, { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
      reply.headers(SECURITY_HEADERS);
      reply.header('Cache-Control', file.cacheControl);
      varyOnAcceptEncoding(reply);
      const coding = negotiateEncoding(request.headers['accept-encoding'], codingsOf(file.variants));
      const etag = file.etags[coding ?? 'identity'];
      reply.header('ETag', etag);
      if (ifNoneMatchHits(request, etag)) return reply.code(304).send();
      return reply.type(file.contentType).send(chooseVariant(request.headers['accept-encoding'], reply, file.variants));
    });
  }
}
