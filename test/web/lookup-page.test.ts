// The lookup page end to end in real headless Chromium (the system's /usr/bin/chromium, never a
// downloaded browser): type a number and read the verdict and the comments, open a deep link,
// see the polite 400/429/502 messages, and check that hostile scraped comments stay text and
// run nothing under the page's Content-Security-Policy. Saves screenshots to test-artifacts/.
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import { failed, notFound, ok } from '../../src/sources/source.js';
import { SAMPLE_DATA, fakeSource, type FakeSources } from '../support/fake-sources.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);

const SCRIPT_PAYLOAD = '<script>window.__pwned = "script"</script>';
const IMG_PAYLOAD = `<img src=x onerror="window.__pwned = 'img'">`;
/** Every source fails for this number: the 502 path. */
const DEAD_NUMBER = '0699999999';

/** Sample data, with two hostile comments in the community slot; signals times out. */
function pageSources(): FakeSources {
  const failForDead = (number: ParsedPhoneNumber) => number.number === DEAD_NUMBER;
  return {
    primary: fakeSource('primary', (number) => (failForDead(number) ? failed('timeout') : ok(structuredClone(SAMPLE_DATA.primary)))),
    community: fakeSource('community', (number) => {
      if (failForDead(number)) return failed('http_5xx');
      const data = structuredClone(SAMPLE_DATA.community);
      data.commentList.push({ text: SCRIPT_PAYLOAD, date: '10/03/2024', category: 'Arnaque' }, { text: IMG_PAYLOAD, date: '09/03/2024', category: 'Arnaque' });
      data.commentsCount = data.commentList.length;
      return ok(data);
    }),
    signals: fakeSource('signals', (number) => (failForDead(number) ? failed('connection') : number.number === '0698765432' ? notFound() : failed('timeout'))),
  };
}

let browser: Browser;
let server: TestServer;
let limitedServer: TestServer;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does this); this test never downloads a browser.`);
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
  // Records any CSP violation the page causes (the init script runs outside the page's CSP).
  await page.addInitScript(() => {
    const record: string[] = [];
    (window as unknown as { __cspViolations: string[] }).__cspViolations = record;
    document.addEventListener('securitypolicyviolation', (event) => record.push(event.violatedDirective));
  });
  return page;
}

async function reportShown(page: Page): Promise<void> {
  await page.locator('#report').waitFor({ state: 'visible', timeout: 10_000 });
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
    await page.locator('#status.status-error').waitFor({ timeout: 10_000 });
    expect(await page.textContent('#status')).toContain('Invalid phone number format');
    expect(await page.locator('#report').isVisible()).toBe(false);

    await page.fill('#number-input', DEAD_NUMBER);
    await page.click('#lookup-button');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('All data sources failed') === true, undefined, { timeout: 10_000 });
    await page.close();
  });

  it('shows the 429 message with the Retry-After delay', async () => {
    const page = await openPage();
    await page.goto(`${limitedServer.baseUrl}/?number=0612345678`);
    await reportShown(page);
    await page.fill('#number-input', '0698765432');
    await page.click('#lookup-button');
    await page.locator('#status.status-warn').waitFor({ timeout: 10_000 });
    expect(await page.textContent('#status')).toMatch(/^Too many requests — retry in \d+ s\.$/);
    await page.close();
  });
});
