// A page on another origin calls the API in real headless Chromium (the system's
// /usr/bin/chromium, never a downloaded browser). The API sends its CORS headers only to a request
// that carries `Origin` (docs/api.md, "CORS"): this proves a browser's cross-origin fetch carries
// it, gets the answer, and can read the headers the API exposes, both when the answer is built
// and when it comes from the front cache; and that the same answer fetched without Origin (as a
// PBX does) has no CORS headers, so a browser could not have read it without them.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser, type Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const CHROMIUM = '/usr/bin/chromium';
const STEP_TIMEOUT_MS = 10_000;

let browser: Browser | undefined;
let api: TestServer | undefined;
let pageServer: Server | undefined;
let pageOrigin = '';

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (npm test does this, through scripts/test-prerequisites.sh); this test never downloads a browser.`,
    );
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  api = await startTestServer({
    env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: { sources: healthyFakeSources() },
  });
  // Another origin (another port): an empty page the test scripts run in.
  pageServer = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>CRM</title><p>CRM</p>');
  });
  await new Promise<void>((resolve) => pageServer?.listen(0, '127.0.0.1', resolve));
  const address = pageServer.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  pageOrigin = `http://127.0.0.1:${address.port}`;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await new Promise<void>((resolve) => (pageServer === undefined ? resolve() : pageServer.close(() => resolve())));
});

interface PageFetch {
  status: number;
  requestId: string | null;
  score: string | null;
  risk: string | null;
  cacheControl: string | null;
  body: string;
}

describe('a page on another origin', () => {
  it('reads the answers and the exposed headers of /verdict and /score, built and then held', async () => {
    if (browser === undefined || api === undefined) throw new Error('not started');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      await page.goto(`${pageOrigin}/`, { timeout: STEP_TIMEOUT_MS });
      const apiRequests: Request[] = [];
      page.on('request', (request) => {
        if (request.url().startsWith(api?.baseUrl ?? '-')) apiRequests.push(request);
      });
      for (const path of ['/api/phone/0612345678/verdict', '/api/phone/0612345678/score']) {
        // The first answer is built from the lookup, the second comes from the front cache.
        for (const round of [1, 2]) {
          const seen = await page.evaluate(async (url): Promise<PageFetch> => {
            const answer = await fetch(url, { cache: 'no-store' });
            return {
              status: answer.status,
              requestId: answer.headers.get('x-request-id'),
              score: answer.headers.get('x-reputation-score'),
              risk: answer.headers.get('x-reputation-risk'),
              cacheControl: answer.headers.get('cache-control'),
              body: await answer.text(),
            };
          }, `${api.baseUrl}${path}`);
          expect(seen.status, `${path} #${round}`).toBe(200);
          expect(seen.requestId, `${path} #${round}`).toMatch(/^[0-9a-f-]{36}$/);
          expect(seen.cacheControl, `${path} #${round}`).toMatch(/^public, max-age=\d+$/);
          if (path.endsWith('/verdict')) {
            expect(seen.body, `${path} #${round}`).toMatch(/^\w+\n$/);
            expect(seen.score, `${path} #${round}`).toMatch(/^(?:[1-9]|none)$/);
            expect(seen.risk, `${path} #${round}`).not.toBeNull();
          } else {
            expect((JSON.parse(seen.body) as { success: boolean }).success, `${path} #${round}`).toBe(true);
          }
        }
      }
      // Every one of those requests was a CORS request.
      expect(apiRequests).toHaveLength(4);
      for (const request of apiRequests) expect((await request.allHeaders()).origin).toBe(pageOrigin);
    } finally {
      await context.close();
    }
  });

  it('would be refused the same held answer without its CORS headers (control: they come with Origin only)', async () => {
    if (api === undefined) throw new Error('not started');
    const plain = await fetch(`${api.baseUrl}/api/phone/0612345678/verdict`);
    await plain.text();
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const fromPage = await fetch(`${api.baseUrl}/api/phone/0612345678/verdict`, { headers: { origin: pageOrigin } });
    await fromPage.text();
    expect(fromPage.headers.get('access-control-allow-origin')).toBe('*');
    expect(fromPage.headers.get('access-control-expose-headers')).toContain('X-Reputation-Score');
  });
});
