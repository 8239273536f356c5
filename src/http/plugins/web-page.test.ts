import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CONTENT_SECURITY_POLICY, registerWebPage } from './web-page.js';

const app = Fastify();

beforeAll(async () => {
  registerWebPage(app);
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
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
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
