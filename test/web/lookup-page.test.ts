// The lookup page end to end in real headless Chromium (the system's /usr/bin/chromium, never a
// downloaded browser): type a number and read the verdict and the comments, open a deep link,
// see the polite 400/429/502 messages, and check that hostile scraped comments stay text and
// run nothing under the page's Content-Security-Policy. Then accessibility: axe-core's WCAG 2.1
// A/AA rules in every state, and the layout shift a report causes when it arrives.
// The page, its assets, /docs and /openapi.json arrive compressed (br, as Chromium asks).
// Saves screenshots to test-artifacts/.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import { blocked, failed, notFound, ok } from '../../src/domain/ports/source.js';
import { SAMPLE_DATA, fakeSource, type FakeSources } from '../support/lookup.js';
import { startTestServer, type TestServer } from '../support/servers.js';

const CHROMIUM = '/usr/bin/chromium';
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

/** Sample data, with two hostile comments in the community slot; signals times out. */
function pageSources(): FakeSources {
  const failForDead = (number: ParsedPhoneNumber) => number.number === DEAD_NUMBER || number.number === DEAD_NPV_NUMBER;
  return {
    primary: fakeSource('primary', (number) => (failForDead(number) ? failed('timeout') : ok(structuredClone(SAMPLE_DATA.primary)))),
    community: fakeSource('community', (number) => {
      if (failForDead(number)) return failed('http_5xx');
      if (number.number === BLOCKED_NUMBER) return blocked('http_429', 60_000);
      const data = structuredClone(SAMPLE_DATA.community);
      data.commentList.push({ text: SCRIPT_PAYLOAD, date: '10/03/2024', category: 'Arnaque' }, { text: IMG_PAYLOAD, date: '09/03/2024', category: 'Arnaque' });
      data.commentsCount = data.commentList.length;
      return ok(data);
    }),
    signals: fakeSource('signals', (number) => {
      if (failForDead(number)) return failed('connection');
      if (number.number === FULL_NPV_NUMBER) return ok(structuredClone(SAMPLE_DATA.signals));
      return number.number === '0698765432' ? notFound() : failed('timeout');
    }),
  };
}

let browser: Browser;
let server: TestServer;
let limitedServer: TestServer;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (npm test does this, through scripts/test-prerequisites.sh); this test never downloads a browser.`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  server = await startTestServer({ env: { MAX_EVENT_LOOP_DELAY_MS: '0' }, overrides: { sources: pageSources() } });
  limitedServer = await startTestServer({ env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_S: '60' }, overrides: { sources: pageSources() } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await limitedServer?.close();
});

async function openPage(viewport = { width: 1200, height: 1000 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
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
  await page.locator(kind === 'warn' ? '#problem.problem-warn' : '#problem:not(.problem-warn)').waitFor({ state: 'visible' });
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
    expect(await page.locator('[data-slot="primary"] .comment-text').first().textContent()).toBe('Appel insistant pour une isolation à 1 euro.');
    expect(await page.locator('[data-slot="community"] .figure-value').first().textContent()).toBe('84 %');
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
      Promise.all(paths.map((path) => page.waitForResponse((response) => new URL(response.url()).pathname === path).then((response) => response.allHeaders())));

    const pagePaths = ['/', '/assets/app.js', '/assets/styles.css'];
    const pageHeaders = headersOf(pagePaths);
    await page.goto(`${server.baseUrl}/`);
    for (const [index, headers] of (await pageHeaders).entries()) {
      expect(headers['content-encoding'], pagePaths[index]).toBe('br');
      expect(headers.vary, pagePaths[index]).toBe('Accept-Encoding');
    }
    expect((await pageHeaders)[0]?.['content-security-policy']).toContain("default-src 'none'");
    await page.locator('#number-input').waitFor({ state: 'visible' });
    expect(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations)).toEqual([]);

    // The docs page itself is under the threshold (Vary only); its bundle, styles and the document are not.
    const docsPaths = ['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js', '/docs/json'];
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
    await page.goto(`${server.baseUrl}/?number=0612345678`);
    await reportShown(page);
    const texts = await page.locator('[data-slot="community"] .comment-text').allTextContents();
    expect(texts).toContain(SCRIPT_PAYLOAD);
    expect(texts).toContain(IMG_PAYLOAD);
    // Nothing was parsed as HTML: no injected element, no handler ran.
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
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
    await page.waitForFunction(() => document.querySelector('#problem-text')?.textContent?.includes('All data sources failed') === true);
    expect(await page.locator('#problem').isVisible()).toBe(true);
    expect(await page.textContent('#status')).toBe('');
    await page.close();
  });

  it('shows the number\'s facts and the NPV badge on a 502 that carries them, with the failure explained below', async () => {
    const page = await openPage();
    await page.goto(`${server.baseUrl}/?number=${DEAD_NPV_NUMBER}`);
    await problemShown(page, 'error');
    expect(await page.textContent('#problem-text')).toContain('All data sources failed');
    expect(await page.locator('#facts-card').isVisible()).toBe(true);
    expect(await page.textContent('#fact-national')).toBe('01 62 00 56 78');
    expect(await page.textContent('#fact-e164')).toBe('+33162005678');
    expect(await page.textContent('#fact-range')).toContain('NPV');
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
    await page.waitForFunction(() => document.querySelector('#problem-text')?.textContent?.includes('Invalid phone number format') === true);
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
async function openAxePage(viewport = { width: 1200, height: 1000 }): Promise<Page> {
  const context = await browser.newContext({ bypassCSP: true, viewport });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  page.once('close', () => void context.close());
  return page;
}

/** axe-core's WCAG 2.0/2.1 A and AA rules on the page as it stands; the serious and critical findings. */
async function seriousAxeViolations(page: Page): Promise<Array<{ rule: string; impact: string; targets: string[] }>> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe;
    return axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations', 'passes'] });
  });
  // The contrast rule must have looked at the page's text, or a clean result proves nothing.
  expect(results.passes.map((rule) => rule.id)).toContain('color-contrast');
  return results.violations
    .filter((rule) => rule.impact === 'serious' || rule.impact === 'critical')
    .map((rule) => ({ rule: rule.id, impact: rule.impact ?? '', targets: rule.nodes.map((node) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`) }));
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
    for (const viewport of [{ width: 1200, height: 1000 }, { width: 375, height: 740 }]) {
      const page = await openAxePage(viewport);
      await page.goto(`${server.baseUrl}/?number=${BLOCKED_NUMBER}`);
      await reportShown(page);
      expect(await page.locator('[data-slot="community"] .badge-blocked').textContent()).toBe('blocked: asked us to slow down (429); paused');
      expect(await page.locator('[data-slot="signals"] .badge-error').textContent()).toBe('error: did not answer in time');
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
    await page.waitForFunction(() => document.querySelector('#problem-text')?.textContent?.includes('All data sources failed') === true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.close();
  });

  it('has none on the 502 that carries the number\'s facts: facts card, NPV badge, problem and failures together', async () => {
    for (const viewport of [{ width: 1200, height: 1000 }, { width: 375, height: 740 }]) {
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
    const limited = await startTestServer({ env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_S: '60' }, overrides: { sources: pageSources() } });
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
      const state = (window as unknown as { __layoutShift: { total: number; observer?: PerformanceObserver } }).__layoutShift;
      for (const entry of state.observer?.takeRecords() ?? []) state.total += (entry as PerformanceEntry & { value: number }).value;
      return state.total;
    });
  }

  it('shifts its layout by less than 0.1 when a report arrives, opened by link or typed, on a phone and a desktop', async () => {
    for (const viewport of [{ width: 375, height: 740 }, { width: 1200, height: 800 }]) {
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
