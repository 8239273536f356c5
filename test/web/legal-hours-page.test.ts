// The lookup page explains `call_centre_operator` and `outside_legal_hours` (meta.hints) in
// French and English, says what to do and links the source list, and explains the 2026 masking
// of calls from abroad and VERDICT_WITHHELD; in real headless Chromium (/usr/bin/chromium). The
// server's clock is injected (harness/servers.ts overrides.now): Monday 30 November 2026, 20:30
// in Paris, outside the legal hours, or 15:00, inside.
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { words } from '../../src/domain/wording/catalogue.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const STEP_TIMEOUT_MS = 10_000;
const CALL_CENTRE = '0189712345'; // an Aircall fixed block
const MOBILE = '0612345678';
const clock = { nowMs: Date.parse('2026-11-30T19:30:00Z') };
let browser: Browser;
let server: TestServer;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  server = await startTestServer({
    env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: { sources: healthyFakeSources(), now: () => clock.nowMs },
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the lookup page, call-centre ranges and the legal hours', () => {
  it.each(['fr', 'en'] as const)(
    'explains both hints, what to do and where the list comes from, in %s',
    async (language) => {
      const context = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB' });
      const contexts = [context];
      let page = await context.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      try {
        clock.nowMs = Date.parse('2026-11-30T19:30:00Z');
        await page.goto(`${server.baseUrl}/?number=${CALL_CENTRE}&lang=${language}`);
        await page.locator('#advice-call-centre').waitFor({ state: 'visible' });
        const advice = (await page.textContent('#advice-call-centre')) ?? '';
        expect(advice).toContain(words(language, 'advice.callCentre'));
        expect(advice).toMatch(language === 'fr' ? /liste d’autorisation/ : /allow list/);
        expect(await page.getAttribute('#call-centre-source', 'href')).toMatch(
          /^https:\/\/github\.com\/cbouvat\/saracroche-ios\/blob\/[0-9a-f]+\/saracroche\/blocked-patterns\.json$/,
        );
        expect(await page.textContent('#advice-outside-hours')).toBe(words(language, 'advice.outsideHours'));
        expect(await page.locator('#advice-outside-hours').isVisible()).toBe(true);
        expect(await page.textContent('#call-centre-badge')).toBe(words(language, 'hint.call_centre_operator'));
        expect(await page.locator('#outside-hours-badge').isVisible()).toBe(true);

        // Inside the hours: the call-centre paragraph stays, the hours' goes. The server's clock
        // went back, the browser's did not: a fresh context, so the answer it cached is not reused.
        clock.nowMs = Date.parse('2026-11-30T14:00:00Z');
        const inside = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB' });
        page = await inside.newPage();
        page.setDefaultTimeout(STEP_TIMEOUT_MS);
        contexts.push(inside);
        await page.goto(`${server.baseUrl}/?number=${CALL_CENTRE}&lang=${language}`);
        await page.locator('#advice-call-centre').waitFor({ state: 'visible' });
        expect(await page.locator('#advice-outside-hours').isHidden()).toBe(true);
        expect(await page.locator('#outside-hours-badge').isHidden()).toBe(true);

        // Neither for a mobile number.
        await page.goto(`${server.baseUrl}/?number=${MOBILE}&lang=${language}`);
        await page.locator('#advice').waitFor({ state: 'visible' });
        expect(await page.locator('#advice-call-centre').isHidden()).toBe(true);
        expect(await page.locator('#call-centre-badge').isHidden()).toBe(true);
      } finally {
        for (const opened of contexts) await opened.close();
      }
    },
  );

  it.each(['fr', 'en'] as const)('explains the 2026 masking and VERDICT_WITHHELD, in %s', async (language) => {
    const context = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB' });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      await page.goto(`${server.baseUrl}/?lang=${language}`);
      await page.click('#withheld summary');
      const text = (await page.textContent('#withheld p')) ?? '';
      expect(text).toBe(words(language, 'withheld.text'));
      expect(text).toMatch(language === 'fr' ? /1er janvier 2026/ : /1 January 2026/);
      expect(text).toContain('VERDICT_WITHHELD');
      expect(await page.locator('#withheld p').isVisible()).toBe(true);
    } finally {
      await context.close();
    }
  });
});
