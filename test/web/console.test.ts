// The operator's console at /admin/ (docs/console.md) in real headless Chromium
// (/usr/bin/chromium), as built by `npm run build` (dist/web/console, which the system project's
// globalSetup makes): sign-in, the dashboard and recent calls moving with calls to /verdict,
// letting a blocked caller through for an hour (then blocked again, on an injected clock), the
// lists among 100,000 rules, a reporter's token shown once and revoked, axe in both languages on
// every view, the CSP and its reports, a phone's width and the keyboard alone.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_WORDS, type ConsoleLanguage } from '../../src/domain/wording/console-words.js';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../src/http/plugins/console-page.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startAdminServer, startTestServer, type TestServer } from '../../harness/servers.js';

const STEP_TIMEOUT_MS = 10_000;
const ADMIN = 'an-admin-token-of-at-least-32-characters';
const BULK_RULES = 100_000;
const HOUR_MS = 3_600_000;
const BUILT = fileURLToPath(new URL('../../dist/web/console/', import.meta.url));
const VIEWS = ['dashboard', 'calls', 'lists', 'reports', 'tokens', 'setup'] as const;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
let server: TestServer;
/** A server whose rate limit is 3 requests a window: the fourth wrong sign-in is a 429. */
let limited: TestServer;
/** Added to the real time by the server's clock (the phone routes and the lists' expiry). */
let shiftMs = 0;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-console-'));
  const lines = [
    'rule,list,label,note,expiresAt,createdAt,labelPublic',
    '+33162*,block,Démarchage,,,2026-01-01T00:00:00.000Z,',
  ];
  for (let index = 0; index < BULK_RULES - 1; index += 1)
    lines.push(`+33170${String(index).padStart(6, '0')},block,bulk ${index},,,2026-01-01T00:00:00.000Z,`);
  writeFileSync(join(dir, 'lists.csv'), `${lines.join('\n')}\n`);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  server = await startTestServer({
    env: {
      LISTS_FILE: join(dir, 'lists.csv'),
      ADMIN_TOKEN: ADMIN,
      RATE_LIMIT_MAX: '10000',
      MAX_EVENT_LOOP_DELAY_MS: '0',
    },
    overrides: { sources: healthyFakeSources(), now: () => Date.now() + shiftMs },
  });
  const other = mkdtempSync(join(tmpdir(), 'phone-rep-console-limited-'));
  limited = await startTestServer({
    env: { LISTS_FILE: join(other, 'lists.csv'), ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '600' },
    overrides: { sources: healthyFakeSources() },
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await limited?.close();
});

async function newPage(
  language: ConsoleLanguage,
  options: { bypassCSP?: boolean; width?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    locale: language === 'fr' ? 'fr-FR' : 'en-GB',
    viewport: { width: options.width ?? 1280, height: 900 },
    bypassCSP: options.bypassCSP ?? false,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  return { context, page };
}

/** Opens the console and signs in; resolves on the dashboard, loaded. */
async function signIn(page: Page, base: string, language: ConsoleLanguage, token = ADMIN): Promise<void> {
  await page.goto(`${base}/admin/?lang=${language}`);
  await page.fill('#token', token);
  await page.click('#sign-in button[type=submit]');
  await page.locator('#nav-dashboard').waitFor();
  await shown(page, 'dashboard');
}

/** Opens a view from the menu and waits until its data is on screen. */
async function open(page: Page, view: (typeof VIEWS)[number]): Promise<void> {
  await page.click(`#nav-${view}`);
  await shown(page, view);
}

async function shown(page: Page, view: string): Promise<void> {
  await page.locator(`#view-${view}[aria-busy="false"]`).waitFor();
}

async function refresh(page: Page, view: string): Promise<void> {
  await page.click('#refresh');
  await shown(page, view);
}

async function verdictOf(number: string): Promise<string> {
  const answer = await fetch(`${server.baseUrl}/api/phone/${encodeURIComponent(number)}/verdict`);
  return (await answer.text()).trim();
}

const adminHeaders = { authorization: `Bearer ${ADMIN}` };

describe('the console’s files', () => {
  it('serves the shell without a token, with its strict CSP, and the assets compressed and immutable', async () => {
    for (const path of ['/admin', '/admin/']) {
      const answer = await fetch(`${server.baseUrl}${path}?lang=fr`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
      expect(answer.headers.get('content-language')).toBe('fr');
      const html = await answer.text();
      expect(html).toContain('<html lang="fr">');
      expect(html).toContain(CONSOLE_WORDS.fr['page.title']);
    }
    expect(CONSOLE_CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; report-uri /admin/csp-report",
    );
    const manifest = JSON.parse(readFileSync(join(BUILT, 'manifest.json'), 'utf8')) as {
      script: string;
      style: string;
    };
    for (const name of [manifest.script, manifest.style]) {
      const answer = await fetch(`${server.baseUrl}/admin/assets/${name}`, { headers: { 'accept-encoding': 'br' } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-encoding')).toBe('br');
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      await answer.arrayBuffer();
    }
    // Nothing else is served from there, and the data still needs the token.
    expect((await fetch(`${server.baseUrl}/admin/assets/console.0000000000000000.js`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/admin/setup`)).status).toBe(401);
  });

  it('is served on ADMIN_PORT with the admin API, and then not on the API port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-console-admin-port-'));
    const admin = await startAdminServer(
      { LISTS_FILE: join(dir, 'lists.csv'), HASH_SECRET: 'test-secret-0123456789' },
      ADMIN,
    );
    const api = await startTestServer({
      env: { LISTS_FILE: join(dir, 'lists.csv'), ADMIN_TOKEN: ADMIN, ADMIN_PORT: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const answer = await fetch(`${admin.base}/admin/?lang=en`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
      expect(await answer.text()).toContain(CONSOLE_WORDS.en['page.title']);
      const report = await fetch(`${admin.base}/admin/csp-report`, {
        method: 'POST',
        headers: { 'content-type': 'application/csp-report' },
        body: JSON.stringify({ 'csp-report': { 'effective-directive': 'style-src-attr' } }),
      });
      expect(report.status).toBe(204);
      expect((await fetch(`${api.baseUrl}/admin/`)).status).toBe(404);
    } finally {
      await admin.close();
      await api.close();
    }
  });

  it('keeps the console’s own code within 80 KiB compressed', () => {
    const manifest = JSON.parse(readFileSync(join(BUILT, 'manifest.json'), 'utf8')) as {
      script: string;
      style: string;
    };
    const gzipped =
      statSync(join(BUILT, `${manifest.script}.gz`)).size + statSync(join(BUILT, `${manifest.style}.gz`)).size;
    expect(gzipped).toBeLessThanOrEqual(80 * 1024);
  });
});

describe('signing in', () => {
  it.each(['fr', 'en'] as const)(
    'refuses a wrong token, takes the right one and forgets it on sign-out, in %s',
    async (language) => {
      const { context, page } = await newPage(language);
      const words = CONSOLE_WORDS[language];
      try {
        await page.goto(`${server.baseUrl}/admin/`);
        await page.fill('#token', 'not-the-admin-token-but-as-long-as-one');
        await page.click('#sign-in button[type=submit]');
        await page.locator('#sign-in-error').filter({ hasText: words['signin.wrong'] }).waitFor();
        expect(await page.locator('#nav-dashboard').count()).toBe(0);

        await page.fill('#token', ADMIN);
        await page.click('#sign-in button[type=submit]');
        await shown(page, 'dashboard');
        // No cookie and no storage holds it.
        expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain('token');
        expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);
        expect(JSON.stringify(await context.storageState())).not.toContain(ADMIN);

        await page.click('#sign-out');
        await page.locator('#sign-in').waitFor();
        expect(await page.textContent('#notice')).toBe(words['signout.done']);
        await page.evaluate(() => {
          location.hash = '#/calls';
        });
        expect(await page.locator('#sign-in').isVisible()).toBe(true);
      } finally {
        await context.close();
      }
    },
  );

  it('shows the rate limit when wrong tokens keep coming (a 401 storm is a 429)', async () => {
    const { context, page } = await newPage('en');
    try {
      await page.goto(`${limited.baseUrl}/admin/`);
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        await page.fill('#token', `wrong-token-number-${attempt}-of-a-storm-xxxxxxxx`);
        const answered = page.waitForResponse((response) => response.url().includes('/admin/setup'));
        await page.click('#sign-in button[type=submit]');
        expect((await answered).status()).toBe(401);
      }
      const answered = page.waitForResponse((response) => response.url().includes('/admin/setup'));
      await page.click('#sign-in button[type=submit]');
      expect((await answered).status()).toBe(429);
      await page
        .locator('#sign-in-error')
        .filter({ hasText: /^Too many attempts: retry in \d+ s\.$/ })
        .waitFor();
    } finally {
      await context.close();
    }
  });
});

describe('what was screened', () => {
  it('moves the dashboard’s counts and the recent calls with calls to /verdict', async () => {
    const { context, page } = await newPage('en');
    try {
      await signIn(page, server.baseUrl, 'en');
      const before = Number((await page.textContent('#totals-24h-total'))?.replace(/\D/g, ''));
      for (const number of ['+33612345671', '+33612345672', '+33162000001']) await verdictOf(number);
      // The calls are noted off the request's path and recorded once a second, or when flushed.
      await server.deps.screening.flush();
      await refresh(page, 'dashboard');
      expect(Number((await page.textContent('#totals-24h-total'))?.replace(/\D/g, ''))).toBe(before + 3);
      expect(Number((await page.textContent('#totals-24h-block'))?.replace(/\D/g, ''))).toBeGreaterThanOrEqual(1);

      await open(page, 'calls');
      const numbers = await page.locator('#calls-table .number').allTextContents();
      expect(numbers.slice(0, 3)).toEqual(['+33162000001', '+33612345672', '+33612345671']);
      // The filters: by what decided, by prefix.
      await page.selectOption('#calls-decided', 'lists');
      await page.fill('#calls-prefix', '+33162');
      await page.click('.filters button[type=submit]');
      await page.locator('#calls-table .number').first().filter({ hasText: '+33162000001' }).waitFor();
      expect(new Set(await page.locator('#calls-table .number').allTextContents())).toEqual(new Set(['+33162000001']));
    } finally {
      await context.close();
    }
  });

  it('lets a blocked caller through for one hour from the recent calls, then blocks it again', async () => {
    const caller = '+33162000077';
    const { context, page } = await newPage('en');
    try {
      expect(await verdictOf(caller)).toBe('block');
      await server.deps.screening.flush();
      await signIn(page, server.baseUrl, 'en');
      await open(page, 'calls');
      await page.fill('#calls-prefix', caller);
      await page.click('.filters button[type=submit]');
      const row = page.locator('#calls-table tbody tr').filter({ hasText: caller }).first();
      await row.locator('summary').click();
      const put = page.waitForResponse((response) => response.request().method() === 'PUT');
      await row.locator('button.let-hour').click();
      expect((await put).status()).toBe(201);
      await page
        .locator('#notice')
        .filter({ hasText: `${caller} is let through until` })
        .waitFor();
      expect(await verdictOf(caller)).toBe('allow');
      shiftMs = HOUR_MS + 60_000;
      expect(await verdictOf(caller)).toBe('block');
    } finally {
      shiftMs = 0;
      await context.close();
    }
  });
});

describe('the lists', () => {
  it('adds, finds and removes a rule among 100,000', async () => {
    const { context, page } = await newPage('en');
    try {
      await signIn(page, server.baseUrl, 'en');
      await open(page, 'lists');
      expect(await page.textContent('#rules-range')).toMatch(/^1–50 of 100,\d{3}$/);
      await page.fill('#rules-q', 'bulk 99997');
      await page.click('form[role=search] button[type=submit]');
      await page.locator('#rules-table .number').filter({ hasText: '+33170099997' }).waitFor();

      await page.fill('#rule-rule', '+33478000001');
      await page.selectOption('#rule-list', 'allow');
      await page.fill('#rule-label', 'Cabinet médical');
      await page.fill('#rule-note', 'added from the console');
      const put = page.waitForResponse((response) => response.request().method() === 'PUT');
      await page.click('#rule-form button[type=submit]');
      expect((await put).status()).toBe(201);
      await page.fill('#rules-q', 'Cabinet médical');
      await page.click('form[role=search] button[type=submit]');
      await page.locator('#rules-range').filter({ hasText: '1–1 of 1' }).waitFor();

      await page.fill('#decide-number', '04 78 00 00 01');
      await page.click('form:has(#decide-number) button[type=submit]');
      await page
        .locator('#decide-result')
        .filter({ hasText: '+33478000001 (allow) decides for +33478000001.' })
        .waitFor();

      const removed = page.waitForResponse((response) => response.request().method() === 'DELETE');
      await page.click('button[aria-label="Remove +33478000001"]');
      expect((await removed).status()).toBe(204);
      await page.locator('#rules-results').filter({ hasText: 'No rule.' }).waitFor();
      const rules = (await (
        await fetch(`${server.baseUrl}/admin/lists/search?q=478000001`, { headers: adminHeaders })
      ).json()) as {
        total: number;
      };
      expect(rules.total).toBe(0);
    } finally {
      await context.close();
    }
  });
});

describe('the reporters’ tokens', () => {
  it('shows a new token once with its configs and QR code, and its reports are refused once revoked', async () => {
    const { context, page } = await newPage('en');
    try {
      await signIn(page, server.baseUrl, 'en');
      await open(page, 'tokens');
      await page.fill('#token-label', 'Kitchen phone');
      await page.click('form:has(#token-label) button[type=submit]');
      const secret = (await page.locator('#token-secret').textContent()) ?? '';
      expect(secret).toMatch(/^prt_/);
      expect(await page.locator('#token-query-config').textContent()).toContain('"');
      expect(await page.locator('#token-report-config').textContent()).toContain('/api/report');
      await page.locator('#token-qr').waitFor();
      expect(
        await page.locator('#token-qr').evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0),
      ).toBe(true);
      await page.click('#token-hide');
      await refresh(page, 'tokens');
      expect(await page.content()).not.toContain(secret);

      const report = (): Promise<Response> =>
        fetch(`${server.baseUrl}/api/report`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ phone: '+33612340001', rating: 'fraud' }),
        });
      expect((await report()).status).toBeLessThan(300);
      const revoked = page.waitForResponse((response) => response.request().method() === 'DELETE');
      await page.click('button[aria-label="Revoke Kitchen phone"]');
      expect((await revoked).status()).toBe(204);
      await page.locator('#notice').filter({ hasText: 'Token Kitchen phone revoked.' }).waitFor();
      expect((await report()).status).toBe(401);
    } finally {
      await context.close();
    }
  });
});

describe('for everyone', () => {
  for (const language of ['fr', 'en'] as const) {
    it(`has no WCAG 2.1 AA violation on any view, and fits 360 px, in ${language}`, async () => {
      // axe is injected as an inline script, which the page's CSP rightly refuses: this context bypasses it.
      for (const width of [1280, 360]) {
        const { context, page } = await newPage(language, { bypassCSP: true, width });
        try {
          await page.goto(`${server.baseUrl}/admin/?lang=${language}`);
          await page.addScriptTag({ content: AXE_SOURCE });
          expect(await axeViolations(page), 'sign-in').toEqual([]);
          await signIn(page, server.baseUrl, language);
          await page.addScriptTag({ content: AXE_SOURCE });
          for (const view of VIEWS) {
            await open(page, view);
            if (width === 1280) expect(await axeViolations(page), view).toEqual([]);
            if (width === 1280 && view === 'setup') {
              // What the service answers for a number, as the setup view and "look up" show it.
              await page.fill('#setup-number', '0612345678');
              await page.click('form:has(#setup-number) button[type=submit]');
              await page.locator('#setup-check-answer').waitFor();
              expect(await axeViolations(page), 'setup check').toEqual([]);
            }
            if (width === 1280 && view === 'tokens') {
              // A new token, shown once with its configs and QR code.
              await page.fill('#token-label', `axe ${language}`);
              await page.click('form:has(#token-label) button[type=submit]');
              await page.locator('#token-once').waitFor();
              expect(await axeViolations(page), 'token shown once').toEqual([]);
            }
            const overflow = await page.evaluate(
              () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
            );
            expect(overflow, `${view} at ${width} px`).toBeLessThanOrEqual(0);
          }
        } finally {
          await context.close();
        }
      }
    });
  }

  it('is usable with the keyboard alone', async () => {
    const { context, page } = await newPage('en');
    try {
      await page.goto(`${server.baseUrl}/admin/`);
      await page.locator('#token:focus').waitFor();
      await page.keyboard.type(ADMIN);
      await page.keyboard.press('Enter');
      await shown(page, 'dashboard');
      // Tab to "Recent calls" in the menu, and open it.
      for (let step = 0; step < 20; step += 1) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(() => document.activeElement?.id === 'nav-calls')) break;
      }
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('nav-calls');
      await page.keyboard.press('Enter');
      await shown(page, 'calls');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('view-title');
      // The first caller's actions open from the keyboard.
      for (let step = 0; step < 30; step += 1) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(() => document.activeElement?.tagName === 'SUMMARY')) break;
      }
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.className)).toBe('let-hour');
    } finally {
      await context.close();
    }
  });
});

describe('the Content-Security-Policy', () => {
  it('holds on every view with no violation, and counts one when it refuses something', async () => {
    const { context, page } = await newPage('fr');
    const counted = async (directive: string): Promise<number> => {
      const metric = await server.deps.metrics?.registry.getSingleMetric('phone_rep_csp_violations_total')?.get();
      return metric?.values.find((value) => value.labels.directive === directive)?.value ?? 0;
    };
    const total = async (): Promise<number> => {
      const metric = await server.deps.metrics?.registry.getSingleMetric('phone_rep_csp_violations_total')?.get();
      return (metric?.values ?? []).reduce((sum, value) => sum + value.value, 0);
    };
    try {
      const before = await total();
      const violations: string[] = [];
      await page.exposeFunction('recordViolation', (directive: string) => violations.push(directive));
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) => {
          void (window as unknown as { recordViolation(directive: string): Promise<void> }).recordViolation(
            event.effectiveDirective,
          );
        });
      });
      const reports: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/admin/csp-report')) reports.push(request.url());
      });
      await signIn(page, server.baseUrl, 'fr');
      for (const view of VIEWS) await open(page, view);
      await page.click('.language-switch a[hreflang=en]');
      await shown(page, 'setup');
      expect(await page.textContent('#view-title')).toBe(CONSOLE_WORDS.en['nav.setup']);
      expect(violations).toEqual([]);
      expect(reports).toEqual([]);
      expect(await total()).toBe(before);

      // An inline script, refused: the browser reports it, and it is counted under its directive.
      const scriptElem = await counted('script-src-elem');
      const reported = page.waitForResponse((response) => response.url().endsWith('/admin/csp-report'));
      await page.evaluate(() => {
        const script = document.createElement('script');
        script.textContent = 'document.title = "injected"';
        document.head.appendChild(script);
      });
      expect((await reported).status()).toBe(204);
      expect(await counted('script-src-elem')).toBe(scriptElem + 1);
      expect(await page.title()).not.toBe('injected');
    } finally {
      await context.close();
    }
  });

  it('takes both report formats, counts only the directive, and refuses what is not JSON', async () => {
    const post = (type: string, body: string): Promise<Response> =>
      fetch(`${server.baseUrl}/admin/csp-report`, { method: 'POST', headers: { 'content-type': type }, body });
    const reportUri = JSON.stringify({
      'csp-report': { 'effective-directive': 'img-src', 'blocked-uri': 'https://elsewhere.example/+33612345678.png' },
    });
    expect((await post('application/csp-report', reportUri)).status).toBe(204);
    const reportTo = JSON.stringify([{ type: 'csp-violation', body: { effectiveDirective: 'made-up-src' } }]);
    expect((await post('application/reports+json', reportTo)).status).toBe(204);
    expect((await post('application/csp-report', 'not json')).status).toBe(400);
    expect((await post('application/csp-report', 'x'.repeat(9 * 1024))).status).toBe(413);
    const text = await server.deps.metrics?.registry.getSingleMetricAsString('phone_rep_csp_violations_total');
    expect(text).toMatch(/directive="img-src"} [1-9]/);
    expect(text).toMatch(/directive="other"} [1-9]/);
    expect(text).not.toContain('+33612345678');
  });
});

async function axeViolations(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
        };
      }
    ).axe;
    const results = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return results.violations.map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
  });
}
