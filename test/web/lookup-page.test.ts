// The lookup page end to end in real headless Chromium (the system's /usr/bin/chromium, never a
// downloaded browser): type a number and read the verdict and the comments, open a deep link,
// see the polite 400/429/502 messages, and check that hostile scraped comments stay text and
// run nothing under the page's Content-Security-Policy. Then accessibility: axe-core's WCAG 2.1
// A/AA rules in every state, and the layout shift a report causes when it arrives.
// The page, its assets, /docs and /openapi.json arrive compressed (br, as Chromium asks).
// In French and in English: each case of a browser preferring either language is read word by
// word against that language's catalogue (src/domain/wording/catalogue.ts), with the advice for
// its verdict; the FR/EN switch and `?lang=`.
// Robustness rules: every browser step has its own deadline (STEP_TIMEOUT_MS) and names itself;
// each page has a context of its own (closed with the page), so no test inherits another's
// cookies, storage or connections; nothing waits on a sleep, only on what the page shows.
// Saves screenshots to test-artifacts/ (docs/screenshot-fr.png and docs/screenshot-en.png are
// copies of lookup-page-fr.png and lookup-page-en.png).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import jsQRModule from 'jsqr';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import { CATALOGUES, countWords, type Language } from '../../src/domain/wording/catalogue.js';
import { SOURCE_SLOTS } from '../../src/domain/report.js';
import { SLOT_DISPLAY } from '../../src/domain/slot-display.js';
import { blocked, failed, notFound, ok } from '../../src/domain/ports/source.js';
import type { SourceDataBySlot } from '../../src/domain/report.js';
import { SAMPLE_DATA, fakeSource, type FakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const CHROMIUM = '/usr/bin/chromium';
/** jsQR is CommonJS whose exported function also carries itself as `default`, which its types describe. */
const jsQR = jsQRModule.default;
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);
/**
 * Every browser step (navigation, wait, click) gives up after this and names itself, well inside
 * the test's own timeout, so a step that never completes fails with its name rather than as a
 * test timeout.
 */
const STEP_TIMEOUT_MS = 10_000;

const SCRIPT_PAYLOAD = '<script>window.__pwned = "script"</script>';
const IMG_PAYLOAD = `<img src=x onerror="window.__pwned = 'img'">`;
/** Every source fails for this number: the 502 path. */
const DEAD_NUMBER = '0699999999';
/** Every source fails for this number, which lies in an NPV range: the 502 that still has facts to show. */
const DEAD_NPV_NUMBER = '0162005678';
/** Every source answers for this number, which lies in an NPV range (automated calling). */
const FULL_NPV_NUMBER = '0162001234';
/** Community is blocked (429) and signals times out for this number: a partial report. */
const BLOCKED_NUMBER = '0611223344';
/** The community source's comments carry script and markup for this number. */
const HOSTILE_NUMBER = '0612345678';
/** Every source answers with the sample data (score 8): a suspicious number. */
const SUSPICIOUS_NUMBER = '0611000001';
/** Every source answers with low figures (score 2): a trustworthy number. */
const TRUSTWORTHY_NUMBER = '0611000002';
/** The primary source fails; the others answer 50 %: a partial report with a neutral score (5). */
const PARTIAL_NUMBER = '0611000003';

function trustworthyData(): SourceDataBySlot {
  const data = structuredClone(SAMPLE_DATA);
  data.primary.score = 2;
  data.primary.commentList = [
    { author: 'Lucie', text: 'C’est mon cabinet médical, rien à signaler.', date: '20/01/2025', callerType: 'Service' },
  ];
  data.primary.commentsCount = 1;
  data.community.dangerPercent = 4;
  data.community.topCategory = 'Utile';
  data.community.commentList = [];
  data.community.commentsCount = 0;
  data.signals.spamScore = 0;
  data.signals.reportsCount = 0;
  data.signals.callerType = '';
  return data;
}

/** Sample data, with two hostile comments in the community slot of HOSTILE_NUMBER; signals times out unless said otherwise. */
function pageSources(): FakeSources {
  const failForDead = (number: ParsedPhoneNumber) => number.number === DEAD_NUMBER || number.number === DEAD_NPV_NUMBER;
  return {
    primary: fakeSource('primary', (number) => {
      if (failForDead(number) || number.number === PARTIAL_NUMBER) return failed('timeout');
      if (number.number === TRUSTWORTHY_NUMBER) return ok(trustworthyData().primary);
      return ok(structuredClone(SAMPLE_DATA.primary));
    }),
    community: fakeSource('community', (number) => {
      if (failForDead(number)) return failed('http_5xx');
      if (number.number === BLOCKED_NUMBER) return blocked('http_429', 60_000);
      if (number.number === TRUSTWORTHY_NUMBER) return ok(trustworthyData().community);
      if (number.number === PARTIAL_NUMBER) return ok({ ...structuredClone(SAMPLE_DATA.community), dangerPercent: 50 });
      const data = structuredClone(SAMPLE_DATA.community);
      if (number.number === HOSTILE_NUMBER)
        data.commentList.push(
          { text: SCRIPT_PAYLOAD, date: '10/03/2024', category: 'Arnaque' },
          { text: IMG_PAYLOAD, date: '09/03/2024', category: 'Arnaque' },
        );
      data.commentsCount = data.commentList.length;
      return ok(data);
    }),
    signals: fakeSource('signals', (number) => {
      if (failForDead(number)) return failed('connection');
      if (number.number === TRUSTWORTHY_NUMBER) return ok(trustworthyData().signals);
      if ([FULL_NPV_NUMBER, SUSPICIOUS_NUMBER, PARTIAL_NUMBER].includes(number.number))
        return ok(structuredClone(SAMPLE_DATA.signals));
      return number.number === '0698765432' ? notFound() : failed('timeout');
    }),
  };
}

let browser: Browser;
let server: TestServer;
let limitedServer: TestServer;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (npm test does this, through scripts/test-prerequisites.sh); this test never downloads a browser.`,
    );
  }
  mkdirSync(ARTIFACTS, { recursive: true });
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
  // Far more lookups than the default 30 a minute come from this one address; the 429 has servers of its own.
  server = await startTestServer({
    env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: { sources: pageSources() },
  });
  limitedServer = await startTestServer({
    env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_S: '60' },
    overrides: { sources: pageSources() },
  });
}, 60_000);

afterAll(async () => {
  // Contexts closing behind their pages finish before the browser goes, so none rejects after it.
  await Promise.allSettled(closingContexts);
  await browser?.close();
  await server?.close();
  await limitedServer?.close();
});

const closingContexts: Array<Promise<void>> = [];

/** Each page has a context of its own, closed with it (and awaited before the browser closes). */
function closeContextWithPage(page: Page, context: BrowserContext): void {
  page.once('close', () => {
    closingContexts.push(context.close());
  });
}

/** Chromium's locale sets `Accept-Language` (and navigator.language) as a browser set to that language would. */
const LOCALES: Readonly<Record<Language, string>> = { fr: 'fr-FR', en: 'en-US' };

async function openPage(viewport = { width: 1200, height: 1000 }, language: Language = 'en'): Promise<Page> {
  const context = await browser.newContext({ viewport, locale: LOCALES[language] });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  closeContextWithPage(page, context);
  // Records any CSP violation the page causes (the init script runs outside the page's CSP).
  await page.addInitScript(() => {
    const record: string[] = [];
    (window as unknown as { __cspViolations: string[] }).__cspViolations = record;
    document.addEventListener('securitypolicyviolation', (event) => record.push(event.violatedDirective));
  });
  return page;
}

async function reportShown(page: Page): Promise<void> {
  await page.locator('#verdict-card').waitFor({ state: 'visible' });
}

async function problemShown(page: Page, kind: 'error' | 'warn'): Promise<void> {
  await page
    .locator(kind === 'warn' ? '#problem.problem-warn' : '#problem:not(.problem-warn)')
    .waitFor({ state: 'visible' });
}

/** The vertical position of an element's top edge on the page. */
async function topOf(page: Page, selector: string): Promise<number> {
  const box = await page.locator(selector).boundingBox();
  if (box === null) throw new Error(`${selector} is not laid out`);
  return box.y;
}

describe('the lookup page in headless Chromium', () => {
  it('shows the verdict, the facts, each source and its comments for a typed number, and updates the URL', async () => {
    const page = await openPage();
    const response = await page.goto(`${server.baseUrl}/`);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
    await page.fill('#number-input', '06 12 34 56 78');
    await page.click('#lookup-button');
    await reportShown(page);

    expect(await page.textContent('#score-value')).toBe('8');
    expect(await page.textContent('#risk-label')).toBe('Suspicious');
    expect(await page.getAttribute('#verdict-card', 'class')).toContain('risk-suspicious');
    expect(await page.locator('.gauge-cell.active').getAttribute('data-step')).toBe('8');
    expect(await page.textContent('#fact-national')).toBe('06 12 34 56 78');
    expect(await page.textContent('#fact-e164')).toBe('+33612345678');
    expect(await page.locator('[data-slot="primary"] .comment-text').first().textContent()).toBe(
      'Appel insistant pour une isolation à 1 euro.',
    );
    expect(await page.locator('[data-slot="community"] .figure-value').first().textContent()).toBe('84%');
    // The failed source is listed with its reason, in plain words.
    expect(await page.locator('#failures').isVisible()).toBe(true);
    expect(await page.textContent('#failure-list')).toContain('Signals (telguarder) error: did not answer in time');

    expect(new URL(page.url()).searchParams.get('number')).toBe('06 12 34 56 78');
    expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual([]);
    await page.screenshot({ path: new URL('lookup-page.png', ARTIFACTS).pathname, fullPage: true });
    await page.close();
  });

  it('receives the page, its assets, /docs and /openapi.json compressed, and /docs shows the operations', async () => {
    // Chromium asks with `Accept-Encoding: gzip, deflate, br`. The answers awaited are set up
    // before each navigation, so none can be missed.
    const page = await openPage();
    const headersOf = (paths: readonly string[]): Promise<Record<string, string>[]> =>
      Promise.all(
        paths.map((path) =>
          page
            .waitForResponse((response) => new URL(response.url()).pathname === path)
            .then((response) => response.allHeaders()),
        ),
      );

    const pagePaths = ['/', '/assets/app.js', '/assets/styles.css'];
    const pageHeaders = headersOf(pagePaths);
    await page.goto(`${server.baseUrl}/`);
    for (const [index, headers] of (await pageHeaders).entries()) {
      expect(headers['content-encoding'], pagePaths[index]).toBe('br');
      // The page itself is chosen by language too (Accept-Language, or the switch's cookie).
      expect(headers.vary, pagePaths[index]).toBe(
        pagePaths[index] === '/' ? 'Accept-Language, Cookie, Accept-Encoding' : 'Accept-Encoding',
      );
    }
    expect((await pageHeaders)[0]?.['content-security-policy']).toContain("default-src 'none'");
    await page.locator('#number-input').waitFor({ state: 'visible' });
    expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual([]);

    // The docs page itself is under the threshold (Vary only); its bundle, styles and the document are not.
    const docsPaths = [
      '/docs/static/swagger-ui-bundle.js',
      '/docs/static/swagger-ui.css',
      '/docs/static/swagger-initializer.js',
      '/docs/json',
    ];
    const docsPageHeaders = headersOf(['/docs']);
    const docsHeaders = headersOf(docsPaths);
    await page.goto(`${server.baseUrl}/docs`);
    expect((await docsPageHeaders)[0]?.vary).toBe('Accept-Encoding');
    for (const [index, headers] of (await docsHeaders).entries()) {
      expect(headers['content-encoding'], docsPaths[index]).toBe('br');
      expect(headers.vary, docsPaths[index]).toBe('Accept-Encoding');
    }
    await page.locator('.opblock-summary-path').first().waitFor({ state: 'visible', timeout: 15_000 });
    const operations = await page.locator('.opblock-summary-path').allTextContents();
    expect(operations.some((path) => path.includes('/api/phone/{number}/score'))).toBe(true);

    const documentAnswer = await page.goto(`${server.baseUrl}/openapi.json`);
    const documentHeaders = await documentAnswer?.allHeaders();
    expect(documentHeaders?.['content-encoding']).toBe('br');
    expect(documentHeaders?.vary).toBe('Accept-Encoding');
    // Decoded by the browser to the document itself.
    expect((JSON.parse((await documentAnswer?.text()) ?? '') as { openapi: string }).openapi).toBe('3.1.0');
    await page.close();
  });

  it('shows hostile comments as text and runs none of them', async () => {
    const page = await openPage();
    await page.goto(`${server.baseUrl}/?number=${HOSTILE_NUMBER}`);
    await reportShown(page);
    const texts = await page.locator('[data-slot="community"] .comment-text').allTextContents();
    expect(texts).toContain(SCRIPT_PAYLOAD);
    expect(texts).toContain(IMG_PAYLOAD);
    // Nothing was parsed as HTML: no injected element, no handler ran.
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    // Our script, and the words' data block (never run); nothing injected.
    expect(await page.locator('script').count()).toBe(2);
    expect(await page.locator('script[src]').count()).toBe(1);
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    await page.close();
  });

  it('renders the report of a deep link on load, and fits a phone screen', async () => {
    const page = await openPage({ width: 375, height: 740 });
    await page.goto(`${server.baseUrl}/?number=%2B33698765432`);
    await reportShown(page);
    expect(await page.inputValue('#number-input')).toBe('+33698765432');
    expect(await page.textContent('#fact-e164')).toBe('+33698765432');
    expect(await page.locator('[data-slot="signals"] .badge').textContent()).toBe('no entry for this number');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: new URL('lookup-page-mobile.png', ARTIFACTS).pathname, fullPage: true });
    await page.close();
  });

  it('says politely when the number is invalid or every source failed', async () => {
    const page = await openPage();
    await page.goto(`${server.baseUrl}/`);
    await page.fill('#number-input', '06 12 ab');
    await page.press('#number-input', 'Enter');
    await problemShown(page, 'error');
    expect(await page.textContent('#problem-text')).toContain('Invalid phone number format');
    expect(await page.locator('#verdict-card').isVisible()).toBe(false);
    expect(await page.locator('#sources').isVisible()).toBe(false);

    await page.fill('#number-input', DEAD_NUMBER);
    await page.click('#lookup-button');
    await page.waitForFunction(
      () => document.querySelector('#problem-text')?.textContent?.includes('All data sources failed') === true,
    );
    expect(await page.locator('#problem').isVisible()).toBe(true);
    expect(await page.textContent('#status')).toBe('');
    await page.close();
  });

  it("shows the number's facts and the NPV badge on a 502 that carries them, with the failure explained below", async () => {
    const page = await openPage();
    await page.goto(`${server.baseUrl}/?number=${DEAD_NPV_NUMBER}`);
    await problemShown(page, 'error');
    expect(await page.textContent('#problem-text')).toContain('All data sources failed');
    expect(await page.locator('#facts-card').isVisible()).toBe(true);
    expect(await page.textContent('#fact-national')).toBe('01 62 00 56 78');
    expect(await page.textContent('#fact-e164')).toBe('+33162005678');
    expect(await page.textContent('#fact-npv')).toBe('yes');
    expect(await page.locator('#npv-badge').isVisible()).toBe(true);
    // No verdict and no source cards: nothing was read from the sources.
    expect(await page.locator('#verdict-card').isVisible()).toBe(false);
    expect(await page.locator('#sources').isVisible()).toBe(false);
    // The failure sits below the facts, each source with its reason.
    expect(await topOf(page, '#problem')).toBeGreaterThan(await topOf(page, '#facts-card'));
    expect(await topOf(page, '#failures')).toBeGreaterThan(await topOf(page, '#problem'));
    const failures = await page.textContent('#failure-list');
    expect(failures).toContain('Primary (tellows) error: did not answer in time');
    expect(failures).toContain('Community (numeroinconnu.fr) error: had a server error');
    expect(failures).toContain('Signals (telguarder) error: could not be reached');
    expect(await page.title()).toBe('0162005678 – Phone reputation');
    expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual([]);
    await page.screenshot({ path: new URL('lookup-page-502-facts.png', ARTIFACTS).pathname, fullPage: true });

    // A later invalid number shows its message alone, not the previous number's facts.
    await page.fill('#number-input', '06 12 ab');
    await page.click('#lookup-button');
    await page.waitForFunction(
      () => document.querySelector('#problem-text')?.textContent?.includes('Invalid phone number format') === true,
    );
    expect(await page.locator('#facts-card').isVisible()).toBe(false);
    await page.close();
  });

  it('shows the 429 message with the Retry-After delay', async () => {
    const page = await openPage();
    await page.goto(`${limitedServer.baseUrl}/?number=0612345678`);
    await reportShown(page);
    await page.fill('#number-input', '0698765432');
    await page.click('#lookup-button');
    await problemShown(page, 'warn');
    expect(await page.textContent('#problem-text')).toMatch(/^Too many requests — retry in \d+ s\.$/);
    // The previous report makes way for the message rather than sitting under it as if current.
    expect(await page.locator('#verdict-card').isVisible()).toBe(false);
    await page.close();
  });
});

// --- Accessibility -------------------------------------------------------------------------

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeNode {
  target: unknown[];
  failureSummary?: string;
}
interface AxeRule {
  id: string;
  impact?: string | null;
  nodes: AxeNode[];
}
interface AxeResults {
  violations: AxeRule[];
  passes: AxeRule[];
}

/**
 * A page in a context of its own that bypasses the CSP: axe is injected as an inline script,
 * which the page's `script-src 'self'` rightly refuses. Only the axe runs use it; every other
 * test keeps the CSP and checks that it saw no violation. Each page has its own context (closed
 * with the page), so no test inherits another's connections or storage.
 */
async function openAxePage(viewport = { width: 1200, height: 1000 }, language: Language = 'en'): Promise<Page> {
  const context = await browser.newContext({ bypassCSP: true, viewport, locale: LOCALES[language] });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  closeContextWithPage(page, context);
  return page;
}

/** axe-core's WCAG 2.0/2.1 A and AA rules on the page as it stands; the serious and critical findings. */
async function seriousAxeViolations(page: Page): Promise<Array<{ rule: string; impact: string; targets: string[] }>> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe;
    return axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations', 'passes'],
    });
  });
  // The contrast rule must have looked at the page's text, or a clean result proves nothing.
  expect(results.passes.map((rule) => rule.id)).toContain('color-contrast');
  return results.violations
    .filter((rule) => rule.impact === 'serious' || rule.impact === 'critical')
    .map((rule) => ({
      rule: rule.id,
      impact: rule.impact ?? '',
      targets: rule.nodes.map((node) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`),
    }));
}

describe('the lookup page for everyone (axe-core, WCAG 2.1 AA)', () => {
  it('has no serious or critical violation on the empty page, and describes itself to search engines', async () => {
    const page = await openAxePage();
    await page.goto(`${server.baseUrl}/`);
    expect(await seriousAxeViolations(page)).toEqual([]);
    const description = await page.getAttribute('meta[name="description"]', 'content');
    expect(description?.length ?? 0).toBeGreaterThan(50);
    await page.close();
  });

  it('has none on a full report of an NPV number, badges and all', async () => {
    const page = await openAxePage();
    await page.goto(`${server.baseUrl}/?number=${FULL_NPV_NUMBER}`);
    await reportShown(page);
    expect(await page.locator('#npv-badge').isVisible()).toBe(true);
    expect(await page.locator('.source .badge-ok').count()).toBe(3);
    expect(await page.locator('#failures').isVisible()).toBe(false);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: new URL('lookup-page-full.png', ARTIFACTS).pathname, fullPage: true });
    await page.close();
  });

  it('has none on a partial report with a blocked and a failed source, on a phone screen too', async () => {
    for (const viewport of [
      { width: 1200, height: 1000 },
      { width: 375, height: 740 },
    ]) {
      const page = await openAxePage(viewport);
      await page.goto(`${server.baseUrl}/?number=${BLOCKED_NUMBER}`);
      await reportShown(page);
      expect(await page.locator('[data-slot="community"] .badge-blocked').textContent()).toBe(
        'blocked: asked us to slow down (429); paused',
      );
      expect(await page.locator('[data-slot="signals"] .badge-error').textContent()).toBe(
        'error: did not answer in time',
      );
      expect(await page.locator('#failures').isVisible()).toBe(true);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.close();
    }
  });

  it('has none on the invalid-number message', async () => {
    const page = await openAxePage();
    await page.goto(`${server.baseUrl}/?number=06%2012%20ab`);
    await problemShown(page, 'error');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.close();
  });

  it('has none on the 502 of a number whose every source failed', async () => {
    const page = await openAxePage();
    await page.goto(`${server.baseUrl}/?number=${DEAD_NUMBER}`);
    await page.waitForFunction(
      () => document.querySelector('#problem-text')?.textContent?.includes('All data sources failed') === true,
    );
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.close();
  });

  it("has none on the 502 that carries the number's facts: facts card, NPV badge, problem and failures together", async () => {
    for (const viewport of [
      { width: 1200, height: 1000 },
      { width: 375, height: 740 },
    ]) {
      const page = await openAxePage(viewport);
      await page.goto(`${server.baseUrl}/?number=${DEAD_NPV_NUMBER}`);
      await problemShown(page, 'error');
      expect(await page.locator('#npv-badge').isVisible()).toBe(true);
      expect(await page.locator('#failures').isVisible()).toBe(true);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.close();
    }
  });

  it('has none on the 429 message', async () => {
    // A server of its own with a limit of one lookup, so the 429 does not depend on the order of tests.
    const limited = await startTestServer({
      env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_S: '60' },
      overrides: { sources: pageSources() },
    });
    try {
      const page = await openAxePage();
      await page.goto(`${limited.baseUrl}/?number=0612345678`);
      await reportShown(page);
      await page.goto(`${limited.baseUrl}/?number=0698765432`);
      await problemShown(page, 'warn');
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.close();
    } finally {
      await limited.close();
    }
  });
});

describe('the lookup page holds still', () => {
  /**
   * Sums every layout shift the page records – including those right after a click, which the
   * CLS metric forgives – from load until the report has been painted.
   */
  async function layoutShiftWhileLoading(page: Page, load: () => Promise<void>): Promise<number> {
    await page.addInitScript(() => {
      const state = { total: 0, observer: undefined as PerformanceObserver | undefined };
      (window as unknown as { __layoutShift: typeof state }).__layoutShift = state;
      const add = (entries: PerformanceEntryList) => {
        for (const entry of entries) state.total += (entry as PerformanceEntry & { value: number }).value;
      };
      state.observer = new PerformanceObserver((list) => add(list.getEntries()));
      state.observer.observe({ type: 'layout-shift', buffered: true });
    });
    await load();
    await reportShown(page);
    return page.evaluate(async () => {
      // Two frames: the report's first layout is done and its shift entries are queued.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      const state = (window as unknown as { __layoutShift: { total: number; observer?: PerformanceObserver } })
        .__layoutShift;
      for (const entry of state.observer?.takeRecords() ?? [])
        state.total += (entry as PerformanceEntry & { value: number }).value;
      return state.total;
    });
  }

  it('shifts its layout by less than 0.1 when a report arrives, opened by link or typed, on a phone and a desktop', async () => {
    for (const viewport of [
      { width: 375, height: 740 },
      { width: 1200, height: 800 },
    ]) {
      const linked = await openPage(viewport);
      const shiftByLink = await layoutShiftWhileLoading(linked, async () => {
        await linked.goto(`${server.baseUrl}/?number=0612345678`);
      });
      expect(shiftByLink).toBeLessThan(0.1);
      await linked.close();

      const typed = await openPage(viewport);
      const shiftTyped = await layoutShiftWhileLoading(typed, async () => {
        await typed.goto(`${server.baseUrl}/`);
        await typed.fill('#number-input', '0612345678');
        await typed.click('#lookup-button');
      });
      expect(shiftTyped).toBeLessThan(0.1);
      await typed.close();
    }
  });
});

// --- In French and in English -----------------------------------------------------------------

/** A text made only of digits, signs and separators: a number, a score, a percentage, a dash. */
const NUMERIC_TEXT = /^[\d\s+\-–—.,:;%/()]+$/;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every text a page in `language` may show: each catalogue value, where a `{placeholder}` stands
 * for a number or for another value of the same catalogue (a reason inside a status, a risk
 * inside the gauge's label).
 */
function catalogueMatcher(language: Language): (text: string) => boolean {
  const values = Object.values(CATALOGUES[language]);
  const plain = values.filter((value) => !value.includes('{')).sort((a, b) => b.length - a.length);
  const filler = `(?:[\\d\\s+.,%]+|${plain.map(escapeRegExp).join('|')})`;
  const patterns = values.map((value) => new RegExp(`^${escapeRegExp(value).replace(/\\\{\w+\\\}/g, filler)}$`));
  return (text) => NUMERIC_TEXT.test(text) || patterns.some((pattern) => pattern.test(text));
}

/**
 * The visible text nodes of the page, whitespace collapsed, outside elements marked
 * `data-upstream` (what a source or the numbering data wrote, shown as it came).
 */
async function visibleTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const texts: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const text = (node.textContent ?? '').replace(/\s+/g, ' ').trim();
      const parent = node.parentElement;
      if (text === '' || parent === null) continue;
      if (parent.closest('script, style, [data-upstream]') !== null) continue;
      if (!parent.checkVisibility({ visibilityProperty: true, opacityProperty: false })) continue;
      texts.push(text);
    }
    return texts;
  });
}

/** The texts of the page that are in none of `language`'s words. */
async function textsOutsideCatalogue(page: Page, language: Language): Promise<string[]> {
  const inCatalogue = catalogueMatcher(language);
  return (await visibleTexts(page)).filter((text) => !inCatalogue(text));
}

const OTHER: Readonly<Record<Language, Language>> = { fr: 'en', en: 'fr' };

interface LanguageCase {
  name: string;
  number: string;
  /** The advice keys shown, in order. */
  advice: Array<
    | 'advice.suspicious'
    | 'advice.trustworthy'
    | 'advice.neutral'
    | 'advice.unknown'
    | 'advice.notChecked'
    | 'advice.npv'
  >;
  npv: boolean;
  /** The confidence sentence: sources answered of those asked. */
  answered: number;
  /** Every source failed: a 502 with the number's facts, no verdict. */
  failed?: true;
}

const LANGUAGE_CASES: readonly LanguageCase[] = [
  { name: 'a suspicious number', number: SUSPICIOUS_NUMBER, advice: ['advice.suspicious'], npv: false, answered: 3 },
  { name: 'a trustworthy number', number: TRUSTWORTHY_NUMBER, advice: ['advice.trustworthy'], npv: false, answered: 3 },
  {
    name: 'an NPV number',
    number: FULL_NPV_NUMBER,
    advice: ['advice.suspicious', 'advice.npv'],
    npv: true,
    answered: 3,
  },
  {
    name: 'a partial report (the primary source failed)',
    number: PARTIAL_NUMBER,
    advice: ['advice.neutral'],
    npv: false,
    answered: 2,
  },
  {
    name: 'a number whose every source failed',
    number: DEAD_NUMBER,
    advice: ['advice.notChecked'],
    npv: false,
    answered: 0,
    failed: true,
  },
];

function confidenceWords(language: Language, answered: number): string {
  if (answered === 0) return CATALOGUES[language]['advice.answeredNone'].replace('{total}', '3');
  return countWords(language, 'advice.answered', answered, { total: 3 });
}

async function resultShown(page: Page, failedCase: boolean): Promise<void> {
  if (failedCase) await problemShown(page, 'error');
  else await reportShown(page);
  await page.locator('#advice').waitFor({ state: 'visible' });
}

describe('the lookup page in the language of the browser', () => {
  for (const language of ['fr', 'en'] as const) {
    const words = CATALOGUES[language];
    for (const testCase of LANGUAGE_CASES) {
      it(`shows ${testCase.name} in ${language}, with what to do, the NPV row, and no word outside the ${language} catalogue`, async () => {
        const page = await openPage({ width: 1200, height: 1000 }, language);
        await page.goto(`${server.baseUrl}/?number=${testCase.number}`);
        await resultShown(page, testCase.failed === true);

        expect(await page.getAttribute('html', 'lang')).toBe(language);
        expect(await page.title()).toBe(words['page.titleNumber'].replace('{number}', testCase.number));
        // The advice for its verdict, the NPV sentence exactly when the number is in an NPV
        // range, how many sources answered, and the two reporting channels as plain links.
        const adviceShown = [await page.textContent('#advice-text')];
        if (await page.locator('#advice-npv').isVisible()) adviceShown.push(await page.textContent('#advice-npv'));
        expect(adviceShown).toEqual(testCase.advice.map((key) => words[key]));
        expect(await page.textContent('#advice-confidence')).toBe(confidenceWords(language, testCase.answered));
        expect(await page.locator('#advice a[href="https://www.33700.fr/"]').textContent()).toBe(
          words['advice.report33700'],
        );
        expect(await page.locator('#advice a[href="https://signal.conso.gouv.fr/"]').textContent()).toBe(
          words['advice.reportSignalConso'],
        );
        // The number's two facts: the NPV row, yes or no, and the line type in words.
        expect(await page.locator('#fact-npv').isVisible()).toBe(true);
        expect(await page.textContent('#fact-npv')).toBe(testCase.npv ? words['facts.yes'] : words['facts.no']);
        expect(await page.textContent('#fact-type')).toBe(
          testCase.number.startsWith('06') ? words['line.mobile'] : words['line.fixed_line'],
        );
        expect(await page.textContent('#fact-region')).toBe(words['region.France']);
        if (testCase.failed) {
          expect(await page.textContent('#problem-text')).toBe(words['error.allFailedText']);
          expect(await page.locator('#failure-list li').count()).toBe(3);
        } else {
          expect(await page.textContent('#risk-label')).toBe(
            words[`risk.${testCase.advice[0]?.slice('advice.'.length) ?? ''}` as keyof typeof words],
          );
          // Upstream content is shown as the source wrote it, its dates said in the page's language.
          const dates = page.locator('#sources time.comment-date');
          if ((await dates.count()) > 0) {
            expect(await dates.first().textContent()).toMatch(
              language === 'fr'
                ? /^il y a \d+ (ans|mois|jours)$|^il y a 1 (an|mois)$/
                : /^\d+ (years|months|days) ago$|^1 (year|month) ago$/,
            );
            expect(await dates.first().getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          }
        }
        if (testCase.number === PARTIAL_NUMBER) {
          expect(await page.textContent('[data-slot="primary"] .badge')).toBe(
            words['status.errorReason'].replace('{reason}', words['reason.timeout']),
          );
          expect(await page.textContent('#failure-list')).toBe(
            `${words['slot.primary']} ${words['status.errorReason'].replace('{reason}', words['reason.timeout'])}`,
          );
        }

        // Word by word: every visible text is the page's language (or a number, or marked upstream).
        const texts = await visibleTexts(page);
        expect(texts.length).toBeGreaterThan(25);
        expect(await textsOutsideCatalogue(page, language)).toEqual([]);
        // The check can fail: read against the other language, the page's own words stand out.
        expect((await textsOutsideCatalogue(page, OTHER[language])).length).toBeGreaterThan(10);
        expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual(
          [],
        );
        if (testCase.number === SUSPICIOUS_NUMBER)
          await page.screenshot({ path: new URL(`lookup-page-${language}.png`, ARTIFACTS).pathname, fullPage: true });
        await page.close();
      });
    }
  }

  it('says the line type and the region in words, and shows a foreign country as the numbering data names it', async () => {
    const cases = [
      { number: '0912345678', type: 'line.nonGeographic', region: 'region.France' },
      { number: '0937123456', type: 'line.technicalPlatform', region: 'region.France' },
      { number: '0262123456', type: 'line.fixed_line', region: 'region.La Réunion' },
      { number: '0145678901', type: 'line.fixed_line', region: 'region.Île-de-France' },
      { number: '%2B32470123456', type: 'line.mobile', region: undefined },
    ] as const;
    for (const language of ['fr', 'en'] as const) {
      const words = CATALOGUES[language];
      const page = await openPage({ width: 1200, height: 1000 }, language);
      for (const { number, type, region } of cases) {
        await page.goto(`${server.baseUrl}/?number=${number}`);
        await reportShown(page);
        expect(await page.textContent('#fact-type'), number).toBe(words[type]);
        if (region === undefined) {
          // The API names a foreign country in French; the page shows it as given, marked as such.
          expect(await page.textContent('#fact-region [data-upstream]')).toBe('Belgique');
        } else {
          expect(await page.textContent('#fact-region'), number).toBe(words[region]);
        }
        expect(await page.textContent('#fact-npv')).toBe(words['facts.no']);
        expect(await page.locator('#platform-badge').isVisible(), number).toBe(type === 'line.technicalPlatform');
        expect(await textsOutsideCatalogue(page, language), number).toEqual([]);
      }
      await page.close();
    }
  });

  it('says why there is no score: a number no source covers (foreign), and one no source could answer, in both languages', async () => {
    const expected = {
      fr: {
        notCovered: [
          'Non couvert',
          'Aucune source ne couvre ce numéro : aucune n’a été interrogée.',
          /^Aucune des sources lues ici ne couvre ce numéro/,
        ],
        notChecked: [
          'Non vérifié',
          'Aucune source n’a pu répondre : ce numéro n’a pas été vérifié.',
          /^Ce numéro n’a pas pu être vérifié/,
        ],
      },
      en: {
        notCovered: [
          'Not covered',
          'No source covers this number: none was asked.',
          /^None of the sources read here covers this number/,
        ],
        notChecked: [
          'Not checked',
          'No source could answer: this number was not checked.',
          /^This number could not be checked/,
        ],
      },
    } as const;
    // The server's real answer with its slots set as the API documents them (this server's fake
    // sources answer any number; test/http/not-covered.test.ts has the real skip).
    const withSlots = (page: Page, sources: Record<string, unknown>) =>
      page.route('**/api/phone/**', async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as {
          data: { sources: Record<string, unknown> };
          meta: Record<string, unknown>;
        };
        body.data.sources = {
          primary: { score: null, searches: 0, commentsCount: 0, commentList: [] },
          community: {
            dangerPercent: null,
            visits: null,
            commentsCount: 0,
            topCategory: '',
            lastCommentDate: '',
            commentList: [],
          },
          signals: { spamScore: null, reportsCount: null, callerType: '', commentList: [] },
        };
        body.meta.score = null;
        body.meta.risk = 'unknown';
        body.meta.scoreSource = null;
        body.meta.sources = sources;
        await route.fulfill({ response, json: body });
      });
    const skipped = { status: 'skipped', reason: 'not_covered' };
    for (const language of ['fr', 'en'] as const) {
      const page = await openPage({ width: 1200, height: 1000 }, language);
      // A Belgian mobile that no source covers: none is asked, a 200 without a score.
      await withSlots(page, { primary: skipped, community: skipped, signals: skipped });
      await page.goto(`${server.baseUrl}/?number=%2B32470123456`);
      await reportShown(page);
      const [risk, source, advice] = expected[language].notCovered;
      expect(await page.textContent('#risk-label')).toBe(risk);
      expect(await page.textContent('#score-source')).toBe(source);
      expect(await page.textContent('#advice-text')).toMatch(advice);
      expect(await page.textContent('#score-source')).not.toBe(CATALOGUES[language]['verdict.noRating']);
      expect(await textsOutsideCatalogue(page, language)).toEqual([]);

      await page.close();

      // Every source asked is still on its way (or failed), on a 200: the answer left before them.
      const waiting = await openPage({ width: 1200, height: 1000 }, language);
      await withSlots(waiting, { primary: { status: 'pending' }, community: skipped, signals: { status: 'pending' } });
      await waiting.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
      await reportShown(waiting);
      const [riskNotChecked, sourceNotChecked, adviceNotChecked] = expected[language].notChecked;
      expect(await waiting.textContent('#risk-label')).toBe(riskNotChecked);
      expect(await waiting.textContent('#score-source')).toBe(sourceNotChecked);
      expect(await waiting.textContent('#advice-text')).toMatch(adviceNotChecked);
      expect(await textsOutsideCatalogue(waiting, language)).toEqual([]);
      await waiting.close();
    }
  });

  it("offers SpamBlocker's config in its setup section: a QR code that decodes to the served config's address, and a link to it", async () => {
    const configUrl = `${server.baseUrl}/integrations/spamblocker/query.json`;
    // The section's words in each language (the image and the link are the same in both).
    for (const language of ['fr', 'en'] as const) {
      const page = await openPage({ width: 1200, height: 1000 }, language);
      await page.goto(`${server.baseUrl}/`);
      await page.locator('#setup summary').click();
      await page.locator('#setup-link').waitFor({ state: 'visible' });
      expect(await page.textContent('#setup summary')).toBe(CATALOGUES[language]['setup.title']);
      expect(await page.getAttribute('#setup-qr', 'alt')).toBe(CATALOGUES[language]['setup.qrAlt']);
      expect(await page.textContent('#setup-link')).toBe(CATALOGUES[language]['setup.link']);
      expect(await textsOutsideCatalogue(page, language)).toEqual([]);
      if (language === 'fr') {
        await page.close();
        continue;
      }
      // The image as the browser drew it, read back as pixels and decoded by a QR reader (jsQR).
      await page.waitForFunction(() => {
        const image = document.getElementById('setup-qr') as HTMLImageElement | null;
        return image !== null && image.complete && image.naturalWidth > 0;
      });
      const size = 400;
      const pixels = await page.evaluate((side) => {
        const image = document.getElementById('setup-qr') as HTMLImageElement;
        const canvas = document.createElement('canvas');
        canvas.width = side;
        canvas.height = side;
        const context = canvas.getContext('2d');
        if (context === null) throw new Error('no 2d context');
        context.fillStyle = '#fff';
        context.fillRect(0, 0, side, side);
        context.drawImage(image, 0, 0, side, side);
        return Array.from(context.getImageData(0, 0, side, side).data);
      }, size);
      expect(jsQR(Uint8ClampedArray.from(pixels), size, size)?.data).toBe(configUrl);
      // The link a phone can open is the same address, and it serves the config.
      expect(new URL((await page.getAttribute('#setup-link', 'href')) ?? '', server.baseUrl).href).toBe(configUrl);
      const config = (await (await fetch(configUrl)).json()) as { actions: Array<{ type: string; url?: string }> };
      expect(config.actions.find((action) => action.type === 'HttpDownload')?.url).toMatch(
        new RegExp(`^${escapeRegExp(server.baseUrl)}/api/phone/`),
      );
      expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual(
        [],
      );
      await page.close();
    }
  });

  it("says how long ago a comment was written, in the page's language, with the date itself kept", async () => {
    const expected = {
      fr: { days: 'il y a 3 jours', month: 'il y a 1 mois', last: 'il y a 4 jours' },
      en: { days: '3 days ago', month: '1 month ago', last: '4 days ago' },
    } as const;
    for (const language of ['fr', 'en'] as const) {
      const page = await openPage({ width: 1200, height: 1000 }, language);
      // The sample comments are dated 12/03/2024 and 02/02/2024, the community's last one 11/03/2024.
      await page.clock.setFixedTime(new Date(2024, 2, 15, 10, 0, 0));
      await page.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
      await reportShown(page);
      const dates = page.locator('[data-slot="primary"] time.comment-date');
      expect(await dates.allTextContents()).toEqual([expected[language].days, expected[language].month]);
      expect(await dates.first().getAttribute('datetime')).toBe('2024-03-12');
      expect(await page.locator('[data-slot="community"] .figure time').textContent()).toBe(expected[language].last);
      await page.close();
    }
  });

  it('writes each count with the plural of its number, in both languages: 1 commentaire, 1 comment, 2 comments', async () => {
    const expected = {
      fr: {
        primary: ['8', 'note', '1234', 'recherches', '2', 'commentaires'],
        community: ['84 %', 'danger', '2535', 'visites', '1', 'commentaire'],
      },
      en: {
        primary: ['8', 'score', '1234', 'searches', '2', 'comments'],
        community: ['84%', 'danger', '2535', 'visits', '1', 'comment'],
      },
    } as const;
    for (const language of ['fr', 'en'] as const) {
      const page = await openPage({ width: 1200, height: 1000 }, language);
      await page.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
      await reportShown(page);
      for (const slot of ['primary', 'community'] as const) {
        const figures = page.locator(`[data-slot="${slot}"] .figure`);
        const texts = (
          await figures.evaluateAll((nodes) =>
            nodes.flatMap((node) => Array.from(node.children, (child) => (child.textContent ?? '').trim())),
          )
        ).slice(0, 6);
        expect(texts).toEqual(expected[language][slot]);
      }
      await page.close();
    }
  });

  it('renders one card per slot of the slot display table, titled and with its figures in order', async () => {
    const page = await openPage({ width: 1200, height: 1000 }, 'en');
    await page.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
    await reportShown(page);
    expect(
      await page
        .locator('#sources [data-slot]')
        .evaluateAll((cards) => cards.map((card) => card.getAttribute('data-slot'))),
    ).toEqual([...SOURCE_SLOTS]);
    for (const slot of SOURCE_SLOTS) {
      expect(await page.textContent(`[data-slot="${slot}"] h2`)).toBe(CATALOGUES.en[SLOT_DISPLAY[slot].title]);
      expect(await page.locator(`[data-slot="${slot}"] .figure`).count()).toBe(SLOT_DISPLAY[slot].figures.length);
    }
    await page.close();
  });

  it('shows the score, risk and score source the server put in meta, and computes none of its own', async () => {
    // The server's meta is changed on the way: the page must follow it, not the sources' figures.
    const page = await openPage({ width: 1200, height: 1000 }, 'en');
    await page.route('**/api/phone/**', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { meta: Record<string, unknown> };
      body.meta.score = 3;
      body.meta.risk = 'trustworthy';
      body.meta.scoreSource = 'derived';
      await route.fulfill({ response, json: body });
    });
    await page.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
    await reportShown(page);
    expect(await page.textContent('#score-value')).toBe('3');
    expect(await page.textContent('#risk-label')).toBe(CATALOGUES.en['risk.trustworthy']);
    expect(await page.textContent('#score-source')).toBe(CATALOGUES.en['verdict.derived']);
    expect(await page.locator('.gauge-cell.active').getAttribute('data-step')).toBe('3');
    await page.close();
  });

  it('says which source was not asked (skipped: not_covered) and which is still on its way (pending), in both languages', async () => {
    // The engine of this branch cannot give these statuses yet (they come with the `skipped`
    // and `?wait` work), so the server's real answer is taken and two of its slots are set as
    // the API documents them: a skipped slot and a pending one hold their empty fields.
    for (const language of ['fr', 'en'] as const) {
      const words = CATALOGUES[language];
      const page = await openPage({ width: 1200, height: 1000 }, language);
      await page.route('**/api/phone/**', async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as {
          data: { sources: Record<string, unknown> };
          meta: { sources: Record<string, unknown> };
        };
        body.data.sources.community = {
          dangerPercent: null,
          visits: null,
          commentsCount: 0,
          topCategory: '',
          lastCommentDate: '',
          commentList: [],
        };
        body.data.sources.signals = { spamScore: null, reportsCount: null, callerType: '', commentList: [] };
        body.meta.sources.community = { status: 'pending' };
        body.meta.sources.signals = { status: 'skipped', reason: 'not_covered' };
        await route.fulfill({ response, json: body });
      });
      await page.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
      await reportShown(page);
      expect(await page.textContent('[data-slot="community"] .badge')).toBe(words['status.pending']);
      expect(await page.textContent('[data-slot="signals"] .badge')).toBe(
        words['status.skippedReason'].replace('{reason}', words['reason.not_covered']),
      );
      // Neither is a failure; the confidence counts the sources asked.
      expect(await page.locator('#failures').isVisible()).toBe(false);
      expect(await page.textContent('#advice-confidence')).toBe(
        countWords(language, 'advice.answered', 1, { total: 2 }),
      );
      expect(await textsOutsideCatalogue(page, language)).toEqual([]);
      await page.close();
    }
  });

  it('is in French before its script runs: <html lang>, <title>, the form and the switch come from the server', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, locale: LOCALES.fr });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      const page = await context.newPage();
      await page.goto(`${server.baseUrl}/`);
      expect(await page.getAttribute('html', 'lang')).toBe('fr');
      expect(await page.title()).toBe(CATALOGUES.fr['page.title']);
      expect(await page.textContent('#lookup-button')).toBe(CATALOGUES.fr['form.button']);
      expect(await page.getAttribute('#number-input', 'placeholder')).toBe(CATALOGUES.fr['form.placeholder']);
      expect(await page.getAttribute('.language-switch a[data-lang="fr"]', 'aria-current')).toBe('true');
      expect(await textsOutsideCatalogue(page, 'fr')).toEqual([]);
      // Without script, the switch is still a link that works, for that view.
      await page.click('.language-switch a[data-lang="en"]');
      await page.waitForURL(/\?lang=en$/);
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      expect(await page.title()).toBe(CATALOGUES.en['page.title']);
    } finally {
      await context.close();
    }
  });

  it('remembers EN chosen on a French browser across a reload and a new visit, and lets ?lang= win over both', async () => {
    const page = await openPage({ width: 1200, height: 1000 }, 'fr');
    await page.goto(`${server.baseUrl}/?number=${SUSPICIOUS_NUMBER}`);
    await reportShown(page);
    expect(await page.textContent('#risk-label')).toBe(CATALOGUES.fr['risk.suspicious']);

    // The switch reloads the page without `?lang=`, keeping the number.
    await Promise.all([
      page.waitForResponse(
        (response) => response.request().isNavigationRequest() && new URL(response.url()).pathname === '/',
      ),
      page.click('.language-switch a[data-lang="en"]'),
    ]);
    expect(new URL(page.url()).search).toBe(`?number=${SUSPICIOUS_NUMBER}`);
    await page.waitForFunction(
      () => document.documentElement.lang === 'en' && document.querySelector('#risk-label')?.textContent !== '',
    );
    await reportShown(page);
    expect(await page.textContent('#risk-label')).toBe(CATALOGUES.en['risk.suspicious']);
    expect(await page.getAttribute('.language-switch a[data-lang="en"]', 'aria-current')).toBe('true');

    await page.reload();
    await reportShown(page);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.title()).toBe(CATALOGUES.en['page.titleNumber'].replace('{number}', SUSPICIOUS_NUMBER));
    expect(await textsOutsideCatalogue(page, 'en')).toEqual([]);

    await page.goto(`${server.baseUrl}/`);
    expect(await page.getAttribute('html', 'lang')).toBe('en');

    // A shared link in French wins over the remembered choice, and does not change it.
    await page.goto(`${server.baseUrl}/?lang=fr&number=${SUSPICIOUS_NUMBER}`);
    await reportShown(page);
    expect(await page.getAttribute('html', 'lang')).toBe('fr');
    expect(await page.textContent('#risk-label')).toBe(CATALOGUES.fr['risk.suspicious']);
    // A search from that page keeps the language in the address.
    await page.fill('#number-input', TRUSTWORTHY_NUMBER);
    await page.click('#lookup-button');
    await page.waitForFunction(
      (risk) => document.querySelector('#risk-label')?.textContent === risk,
      CATALOGUES.fr['risk.trustworthy'],
    );
    expect(new URL(page.url()).searchParams.get('lang')).toBe('fr');
    await page.goto(`${server.baseUrl}/`);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await page.close();

    // And over Accept-Language: an English browser opening the French link.
    const english = await openPage({ width: 1200, height: 1000 }, 'en');
    await english.goto(`${server.baseUrl}/?lang=fr`);
    expect(await english.getAttribute('html', 'lang')).toBe('fr');
    expect(await english.title()).toBe(CATALOGUES.fr['page.title']);
    await english.goto(`${server.baseUrl}/`);
    expect(await english.getAttribute('html', 'lang')).toBe('en');
    await english.close();
  });
});

describe('the lookup page for everyone, in both languages (axe-core, WCAG 2.1 AA)', () => {
  for (const language of ['fr', 'en'] as const) {
    for (const testCase of LANGUAGE_CASES) {
      it(`has no serious or critical violation on ${testCase.name} in ${language}`, async () => {
        const page = await openAxePage({ width: 1200, height: 1000 }, language);
        await page.goto(`${server.baseUrl}/?number=${testCase.number}`);
        await resultShown(page, testCase.failed === true);
        expect(await page.getAttribute('html', 'lang')).toBe(language);
        expect(await seriousAxeViolations(page)).toEqual([]);
        await page.close();
      });
    }
  }
});
