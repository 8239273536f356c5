// The lookup page at `/`: three static files (src/web/static, copied to dist/web/static by the
// build) read once when the app is built, served with a strict Content-Security-Policy, in brotli
// or gzip when the client accepts it (precompressed by the build, see docs/compression.md). Not
// rate limited (they are static and cost no upstream request); the page's own calls to
// /api/phone/* are, like any client's.
// index.html is a template: every fixed word is a `{{key}}` of the wording catalogue, filled
// here once per language, and the chosen language's catalogue is inlined as a JSON data block
// the script reads (a data block is not script, so `script-src 'self'` stays as strict). Which
// language a request gets is decided in ../language.ts; see docs/web-page.md.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SOURCE_SLOTS } from '../../domain/report.js';
import { SLOT_DISPLAY } from '../../domain/slot-display.js';
import { CATALOGUES, LANGUAGES, type Language } from '../../domain/wording/catalogue.js';
import {
  chooseVariant,
  codingsOf,
  negotiateEncoding,
  precompress,
  varyOnAcceptEncoding,
  type ContentCoding,
  type EncodedVariants,
} from '../encoding.js';
import { chooseLanguage } from '../language.js';
import { PageQuerySchema } from '../schemas/page.js';

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
  /** The name its precompressed siblings are written under (`index.fr.html` → `index.fr.html.br`). */
  fileName: string;
  /** Set on the page itself, one file per language; the assets are the same in every language. */
  language?: Language;
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

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
/** Text safe in HTML content and in a quoted attribute. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);

/**
 * JSON that can sit inside a `<script type="application/json">` element: no `<` (so no
 * `</script>`), no `&`, and no line separators that older parsers would choke on.
 */
function jsonForHtml(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * What the page needs of the slot display table (src/domain/slot-display.ts), in slot order: the
 * page renders each slot from it and names no slot or field of its own.
 */
export const PAGE_SLOTS = SOURCE_SLOTS.map((slot) => {
  const { title, figures, comment } = SLOT_DISPLAY[slot];
  return { slot, title, figures: figures.map(({ unit, field, label }) => ({ unit, field, label })), comment };
});

const TEMPLATE_TOKEN = /\{\{([@\w.-]+)\}\}/g;

/**
 * index.html in `language`: `{{key}}` is that catalogue's words for `key` (escaped), `{{@lang}}`
 * the language, `{{@words}}` the catalogue and the slot display table as JSON, `{{@current-fr}}` / `{{@current-en}}`
 * marks the switch's link of the language shown. An unknown token throws, so a template and a
 * catalogue that drift apart fail at start (and in the tests), never on a person's screen.
 */
export function renderPageTemplate(template: string, language: Language): string {
  const catalogue: Readonly<Record<string, string>> = CATALOGUES[language];
  return template.replace(TEMPLATE_TOKEN, (token, name: string) => {
    if (name === '@lang') return language;
    if (name === '@words') return jsonForHtml({ language, words: CATALOGUES[language], slots: PAGE_SLOTS });
    if (name.startsWith('@current-')) return name === `@current-${language}` ? 'aria-current="true"' : '';
    const text = catalogue[name];
    if (text === undefined) throw new Error(`index.html: ${token} is not a key of the wording catalogue`);
    return escapeHtml(text);
  });
}

/**
 * The files as served: index.html once per language, with its asset URLs fingerprinted so the
 * assets can be cached for long. Replacing an already fingerprinted URL gives the same text, so
 * the build and the server agree on the page's bytes.
 */
export function readWebPageFiles(staticDir: string = defaultStaticDir()): PageFile[] {
  const dir = withSlash(staticDir);
  const script = readFileSync(`${dir}app.js`);
  const styles = readFileSync(`${dir}styles.css`);
  const template = readFileSync(`${dir}index.html`, 'utf8')
    .replace(/\/assets\/app\.js(?:\?v=[0-9a-f]*)?/, `/assets/app.js?v=${versionOf(script)}`)
    .replace(/\/assets\/styles\.css(?:\?v=[0-9a-f]*)?/, `/assets/styles.css?v=${versionOf(styles)}`);
  // Asset URLs change with their content, so they may be cached for a year; the page itself is
  // revalidated on each load so a new version reaches people at once.
  const immutable = 'public, max-age=31536000, immutable';
  return [
    ...LANGUAGES.map((language): PageFile => ({
      fileName: `index.${language}.html`,
      language,
      urlPath: '/',
      body: Buffer.from(renderPageTemplate(template, language), 'utf8'),
      contentType: 'text/html; charset=utf-8',
      cacheControl: 'no-cache',
    })),
    {
      fileName: 'app.js',
      urlPath: '/assets/app.js',
      body: script,
      contentType: 'text/javascript; charset=utf-8',
      cacheControl: immutable,
    },
    {
      fileName: 'styles.css',
      urlPath: '/assets/styles.css',
      body: styles,
      contentType: 'text/css; charset=utf-8',
      cacheControl: immutable,
    },
  ];
}

export const SIBLING_SUFFIX: Readonly<Record<ContentCoding, string>> = { br: '.br', gzip: '.gz' };

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
export async function variantsOf(dir: string, file: PageFile): Promise<EncodedVariants> {
  const br = verifiedSibling(`${dir}${file.fileName}.br`, 'br', file.body);
  const gzipped = verifiedSibling(`${dir}${file.fileName}.gz`, 'gzip', file.body);
  if (br !== undefined && gzipped !== undefined) return { identity: file.body, br, gzip: gzipped };
  return precompress(file.body);
}

export function etagOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 22);
}

/** Reads the files and their compressed forms, ready to serve. */
export async function loadWebPageFiles(staticDir: string = defaultStaticDir()): Promise<ServedFile[]> {
  const dir = withSlash(staticDir);
  return Promise.all(
    readWebPageFiles(dir).map(async (file) => {
      const tag = etagOf(file.body);
      return {
        ...file,
        variants: await variantsOf(dir, file),
        etags: { identity: `"${tag}"`, br: `"${tag}-br"`, gzip: `"${tag}-gzip"` },
      };
    }),
  );
}

export function ifNoneMatchHits(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*');
}

/** A static file as served: its caching, the encoding the client takes, its ETag, a 304 when it already holds it. */
export function sendServedFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: Pick<ServedFile, 'cacheControl' | 'variants' | 'etags' | 'contentType'>,
): FastifyReply {
  reply.header('Cache-Control', file.cacheControl);
  varyOnAcceptEncoding(reply);
  const coding = negotiateEncoding(request.headers['accept-encoding'], codingsOf(file.variants));
  const etag = file.etags[coding ?? 'identity'];
  reply.header('ETag', etag);
  if (ifNoneMatchHits(request, etag)) return reply.code(304).send();
  return reply.type(file.contentType).send(chooseVariant(request.headers['accept-encoding'], reply, file.variants));
}

/** The page's route group, an encapsulated plugin. */
export async function webPageRoutes(app: FastifyInstance, options: WebPageOptions = {}): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const files = await loadWebPageFiles(options.staticDir);
  const byPath = new Map<string, ServedFile[]>();
  for (const file of files) byPath.set(file.urlPath, [...(byPath.get(file.urlPath) ?? []), file]);
  for (const [urlPath, versions] of byPath) {
    const [first] = versions;
    if (first === undefined) continue;
    const localised = first.language !== undefined;
    typed.get(urlPath, { schema: { hide: true, querystring: PageQuerySchema } }, async (request, reply) => {
      let file = first;
      if (localised) {
        const language = chooseLanguage({
          query: request.query.lang,
          cookie: request.headers.cookie,
          acceptLanguage: request.headers['accept-language'],
        });
        file = versions.find((version) => version.language === language) ?? first;
        reply.header('Content-Language', language);
        // The same URL answers in either language: a shared cache must key on what decided it.
        reply.header('Vary', 'Accept-Language, Cookie');
      }
      reply.headers(SECURITY_HEADERS);
      return sendServedFile(request, reply, file);
    });
  }
}
