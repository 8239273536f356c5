import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUES, LANGUAGES } from '../../domain/wording/catalogue.js';
import {
  PAGE_CONTENT_SECURITY_POLICY,
  renderPageTemplate,
  webPageRoutes,
  writePrecompressedPageFiles,
} from './web-page.js';

const app = Fastify();

beforeAll(async () => {
  await app.register(webPageRoutes);
  await app.ready();
});
afterAll(() => app.close());

describe('the lookup page files', () => {
  it('serve the page as HTML with a strict CSP, nosniff and no referrer, revalidated on each load', async () => {
    const response = await app.inject({ url: '/?number=0612345678' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(PAGE_CONTENT_SECURITY_POLICY);
    expect(PAGE_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(PAGE_CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.body).toContain('<form id="lookup-form"');
  });

  it('reference their script and styles by content-versioned URLs, with no inline script and no external asset', async () => {
    const html = (await app.inject({ url: '/' })).body;
    expect(html).toMatch(/<script src="\/assets\/app\.js\?v=[0-9a-f]{12}" defer><\/script>/);
    expect(html).toMatch(/href="\/assets\/styles\.css\?v=[0-9a-f]{12}"/);
    expect(html).not.toMatch(/<script>(?!<)/);
    // The one other script element is a data block, which a browser never runs.
    expect(html.match(/<script[^>]*>/g)).toEqual([
      expect.stringMatching(/^<script type="application\/json" id="page-words">$/),
      expect.stringMatching(/^<script src=/),
    ]);
    // No asset from elsewhere; the only links out are the two official reporting channels.
    expect(html).not.toMatch(/src="(https?:)?\/\//);
    expect(html).not.toMatch(/<link[^>]*href="(https?:)?\/\//);
    expect(html.match(/href="(https?:)?\/\/[^"]*"/g)).toEqual([
      // The call-centre operators' source list (docs/numbering.md): a link, not an asset.
      'href="https://github.com/cbouvat/saracroche-ios/blob/0895d5f/saracroche/blocked-patterns.json"',
      'href="https://www.33700.fr/"',
      'href="https://signal.conso.gouv.fr/"',
    ]);
  });

  it('serve the script and styles with their types and a long cache life', async () => {
    const script = await app.inject({ url: '/assets/app.js?v=1' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toContain('immutable');
    expect(script.body).toContain('textContent');
    expect(script.body).not.toContain('innerHTML');
    const styles = await app.inject({ url: '/assets/styles.css' });
    expect(styles.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(styles.body).not.toMatch(/url\(\s*['"]?https?:/);
  });

  it('answer 304 to a matching If-None-Match', async () => {
    const first = await app.inject({ url: '/' });
    const etag = first.headers.etag;
    expect(typeof etag).toBe('string');
    const second = await app.inject({ url: '/', headers: { 'if-none-match': String(etag) } });
    expect(second.statusCode).toBe(304);
    expect(second.body).toBe('');
  });
});

const PAGE_URLS = ['/', '/assets/app.js', '/assets/styles.css'];

describe('the lookup page files, compressed', () => {
  it('decode from brotli and from gzip to the same bytes as the identity answer, with Vary, Content-Encoding and Content-Length', async () => {
    for (const url of PAGE_URLS) {
      const identity = await app.inject({ url });
      const vary = url === '/' ? 'Accept-Language, Cookie, Accept-Encoding' : 'Accept-Encoding';
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(identity.headers.vary).toBe(vary);
      for (const [acceptEncoding, coding, decode] of [
        ['br', 'br', brotliDecompressSync],
        ['gzip', 'gzip', gunzipSync],
        ['gzip, deflate, br', 'br', brotliDecompressSync],
      ] as const) {
        const compressed = await app.inject({ url, headers: { 'accept-encoding': acceptEncoding } });
        expect(compressed.statusCode).toBe(200);
        expect(compressed.headers['content-encoding']).toBe(coding);
        expect(compressed.headers.vary).toBe(vary);
        expect(compressed.headers['content-type']).toBe(identity.headers['content-type']);
        expect(compressed.headers['content-security-policy']).toBe(PAGE_CONTENT_SECURITY_POLICY);
        expect(Number(compressed.headers['content-length'])).toBe(compressed.rawPayload.length);
        expect(compressed.rawPayload.length).toBeLessThan(identity.rawPayload.length);
        expect(decode(compressed.rawPayload).equals(identity.rawPayload)).toBe(true);
      }
    }
  });

  it('answer identity to identity, to br;q=0 alone and to codings it does not make', async () => {
    for (const acceptEncoding of ['identity', 'br;q=0', 'deflate', 'identity;q=0']) {
      const response = await app.inject({ url: '/assets/app.js', headers: { 'accept-encoding': acceptEncoding } });
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.headers.vary).toBe('Accept-Encoding');
      expect(response.body).toContain('textContent');
    }
  });

  it('tag each coding with its own ETag and answer 304 only to the tag of the coding asked for', async () => {
    const br = await app.inject({ url: '/assets/styles.css', headers: { 'accept-encoding': 'br' } });
    const gzipped = await app.inject({ url: '/assets/styles.css', headers: { 'accept-encoding': 'gzip' } });
    const identity = await app.inject({ url: '/assets/styles.css' });
    const tags = [br.headers.etag, gzipped.headers.etag, identity.headers.etag];
    expect(new Set(tags).size).toBe(3);
    const revalidated = await app.inject({
      url: '/assets/styles.css',
      headers: { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) },
    });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.headers.etag).toBe(br.headers.etag);
    expect(revalidated.headers.vary).toBe('Accept-Encoding');
    const otherCoding = await app.inject({
      url: '/assets/styles.css',
      headers: { 'accept-encoding': 'gzip', 'if-none-match': String(br.headers.etag) },
    });
    expect(otherCoding.statusCode).toBe(200);
    expect(gunzipSync(otherCoding.rawPayload).equals(identity.rawPayload)).toBe(true);
  });
});

describe("the build's precompressed siblings", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'web-static-'));
    cpSync(fileURLToPath(new URL('../../web/static/', import.meta.url)), dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('are written for every page file as served, and are what the server sends', async () => {
    const written = await writePrecompressedPageFiles(dir);
    expect(written.sort()).toEqual([
      'app.js.br',
      'app.js.gz',
      'index.en.html.br',
      'index.en.html.gz',
      'index.fr.html.br',
      'index.fr.html.gz',
      'styles.css.br',
      'styles.css.gz',
    ]);
    const served = Fastify();
    try {
      await served.register(webPageRoutes, { staticDir: dir });
      const page = await served.inject({ url: '/', headers: { 'accept-encoding': 'br' } });
      // The served page is the fingerprinted one, and the build's sibling holds exactly it.
      expect(page.rawPayload.equals(readFileSync(join(dir, 'index.en.html.br')))).toBe(true);
      const french = await served.inject({
        url: '/',
        headers: { 'accept-encoding': 'br', 'accept-language': 'fr-FR' },
      });
      expect(french.rawPayload.equals(readFileSync(join(dir, 'index.fr.html.br')))).toBe(true);
      expect(brotliDecompressSync(page.rawPayload).toString('utf8')).toMatch(/\/assets\/app\.js\?v=[0-9a-f]{12}/);
      const script = await served.inject({ url: '/assets/app.js', headers: { 'accept-encoding': 'gzip' } });
      expect(script.rawPayload.equals(readFileSync(join(dir, 'app.js.gz')))).toBe(true);
    } finally {
      await served.close();
    }
  });

  it('are ignored when they no longer match their file, so an edited file is never sent stale', async () => {
    await writePrecompressedPageFiles(dir);
    writeFileSync(join(dir, 'app.js'), `${readFileSync(join(dir, 'app.js'), 'utf8')}\n// edited after the build\n`);
    const served = Fastify();
    try {
      await served.register(webPageRoutes, { staticDir: dir });
      for (const [acceptEncoding, decode] of [
        ['br', brotliDecompressSync],
        ['gzip', gunzipSync],
      ] as const) {
        const script = await served.inject({ url: '/assets/app.js', headers: { 'accept-encoding': acceptEncoding } });
        expect(decode(script.rawPayload).toString('utf8')).toContain('// edited after the build');
      }
    } finally {
      await served.close();
    }
  });
});

describe('the page in the language asked for, before any script runs', () => {
  const titleOf = (html: string): string => /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? '';
  const langOf = (html: string): string => /<html lang="([a-z]+)">/.exec(html)?.[1] ?? '';

  it('follows Accept-Language, then the switch cookie, then ?lang=, in <html lang>, <title> and every word', async () => {
    const cases = [
      [{ 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.8' }, '/', 'fr'],
      [{ 'accept-language': 'en-US,en;q=0.9' }, '/', 'en'],
      [{}, '/', 'en'],
      [{ 'accept-language': 'fr-FR', cookie: 'other=1; lang=en' }, '/', 'en'],
      [{ 'accept-language': 'en-US', cookie: 'lang=fr' }, '/', 'fr'],
      [{ 'accept-language': 'fr-FR', cookie: 'lang=fr' }, '/?lang=en', 'en'],
      [{ 'accept-language': 'en-US', cookie: 'lang=en' }, '/?lang=fr&number=0612345678', 'fr'],
      [{ 'accept-language': 'fr-FR' }, '/?lang=xx', 'fr'],
    ] as const;
    for (const [headers, url, language] of cases) {
      const response = await app.inject({ url, headers });
      expect(response.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(200);
      expect(langOf(response.body)).toBe(language);
      expect(response.headers['content-language']).toBe(language);
      expect(titleOf(response.body)).toBe(CATALOGUES[language]['page.title'].replace(/'/g, '&#39;'));
      expect(response.body).toContain(`>${CATALOGUES[language]['form.button']}</button>`);
      // The switch marks the language shown.
      expect(response.body).toMatch(new RegExp(`data-lang="${language}"[^>]*aria-current="true"`));
      const words = JSON.parse(
        /<script type="application\/json" id="page-words">([^<]*)<\/script>/.exec(response.body)?.[1] ?? 'null',
      ) as { language: string; words: Record<string, string> };
      expect(words.language).toBe(language);
      expect(words.words).toEqual(CATALOGUES[language]);
    }
  });

  it('tags each language with its own ETag, and a 304 holds only for the same language', async () => {
    const french = await app.inject({ url: '/', headers: { 'accept-language': 'fr' } });
    const english = await app.inject({ url: '/', headers: { 'accept-language': 'en' } });
    expect(french.headers.etag).not.toBe(english.headers.etag);
    const again = await app.inject({
      url: '/',
      headers: { 'accept-language': 'fr', 'if-none-match': String(french.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const switched = await app.inject({
      url: '/',
      headers: { 'accept-language': 'fr', cookie: 'lang=en', 'if-none-match': String(french.headers.etag) },
    });
    expect(switched.statusCode).toBe(200);
    expect(langOf(switched.body)).toBe('en');
  });

  it('leaves no token unfilled, and refuses a template that names a word the catalogue lacks', () => {
    const template = readFileSync(fileURLToPath(new URL('../../web/static/index.html', import.meta.url)), 'utf8');
    for (const language of LANGUAGES) expect(renderPageTemplate(template, language)).not.toContain('{{');
    expect(() => renderPageTemplate('<p>{{no.such.key}}</p>', 'fr')).toThrow(/no\.such\.key/);
  });

  it('keeps the inlined words from closing their element, whatever they hold', async () => {
    const html = (await app.inject({ url: '/' })).body;
    const block = /<script type="application\/json" id="page-words">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect(block).not.toMatch(/[<>&]/);
  });
});

describe("the words the page's script asks for", () => {
  const script = readFileSync(fileURLToPath(new URL('../../web/static/app.js', import.meta.url)), 'utf8');

  it('are all in the catalogue', () => {
    const asked = [...script.matchAll(/\bt\('([\w.-]+)'\s*[,)]/g)].map((match) => match[1] ?? '');
    expect(asked.length).toBeGreaterThan(20);
    for (const key of asked) expect(Object.keys(CATALOGUES.fr), key).toContain(key);
  });

  it('cover every status, failure reason, hint, risk and line type the API can give', async () => {
    const { FAILURE_REASONS, SOURCE_STATUSES } = await import('../../domain/ports/source.js');
    const { HINTS } = await import('../../domain/hints.js');
    const keys = new Set(Object.keys(CATALOGUES.fr));
    for (const reason of [...FAILURE_REASONS, 'not_covered']) expect(keys.has(`reason.${reason}`), reason).toBe(true);
    for (const status of [...SOURCE_STATUSES, 'skipped', 'pending'])
      expect(keys.has(`status.${status}`), status).toBe(true);
    for (const hint of HINTS) expect(keys.has(`hint.${hint}`), hint).toBe(true);
    for (const risk of ['trustworthy', 'neutral', 'suspicious', 'unknown']) {
      expect(keys.has(`risk.${risk}`), risk).toBe(true);
      expect(keys.has(`advice.${risk}`), risk).toBe(true);
    }
    // phoneInfo.type's closed set, as docs/numbering.md lists it.
    for (const type of [
      'mobile',
      'fixed_line',
      'fixed_line_or_mobile',
      'toll_free',
      'premium_rate',
      'shared_cost',
      'voip',
      'personal_number',
      'pager',
      'uan',
      'voicemail',
      'unknown',
    ]) {
      expect(keys.has(`line.${type}`), type).toBe(true);
    }
  });
});
