// The lookup page says what people of this deployment reported (meta.reports), in French and in
// English, in real headless Chromium (/usr/bin/chromium): how many reported the number as unwanted
// and what most of them said, and that its calls are refused; how many vouched for a number;
// nothing for a number nobody reported; the same on a 502, after the operator's rule. The reports
// are an in-memory CallerReports (harness/caller-reports.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countWords, words } from '../../src/domain/wording/catalogue.js';
import { failed } from '../../src/domain/ports/source.js';
import { fakeSource, healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { evidenceOf, InMemoryCallerReports } from '../../harness/caller-reports.js';

const STEP_TIMEOUT_MS = 10_000;
let browser: Browser;
let server: TestServer;
/** Every source fails: each lookup is a 502. */
let failingServer: TestServer;

const reports = new InMemoryCallerReports({
  '+33612345601': evidenceOf('spam', { fraud: 2, advertising: 1, legitimate: 1 }),
  '+33612345603': evidenceOf('legitimate', { legitimate: 1 }),
  '+33478123456': evidenceOf('spam', { poll: 2 }),
  '+33478123457': evidenceOf('suspect', { ping: 1 }),
});

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-reports-page-')), 'lists.csv');
  writeFileSync(file, 'rule,list,label,note,expiresAt,createdAt\n+33478123456,allow,,,,2026-01-01T00:00:00.000Z\n');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  server = await startTestServer({
    env: { MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: { sources: healthyFakeSources(), callerReports: reports },
  });
  failingServer = await startTestServer({
    env: { LISTS_FILE: file, MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: {
      sources: {
        primary: fakeSource('primary', () => failed('timeout')),
        community: fakeSource('community', () => failed('http_5xx')),
        signals: fakeSource('signals', () => failed('connection')),
      },
      callerReports: reports,
    },
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await failingServer?.close();
});

describe('the lookup page and the deployment’s reports', () => {
  it.each(['fr', 'en'] as const)('says who reported the number, and how many, in %s', async (language) => {
    const context = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB' });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      await page.goto(`${server.baseUrl}/?number=0612345601&lang=${language}`);
      await page.locator('#caller-reports').waitFor({ state: 'visible' });
      const spam = await page.textContent('#caller-reports');
      expect(spam).toBe(
        `${countWords(language, 'reports.spam', 3, { category: words(language, 'report.fraud') })} ${words(language, 'reports.blocked')}`,
      );
      expect(spam).toMatch(
        language === 'fr'
          ? /^3 personnes de ce service ont signalé ce numéro comme indésirable \(Arnaque\)\. Les appels de ce numéro sont refusés\.$/
          : /^3 people of this service reported this number as unwanted \(Fraud\)\. Calls from this number are refused\.$/,
      );
      expect(await page.locator('#operator-list').isHidden()).toBe(true);

      await page.goto(`${server.baseUrl}/?number=0612345603&lang=${language}`);
      await page.locator('#fact-e164').filter({ hasText: '+33612345603' }).waitFor();
      expect(await page.textContent('#caller-reports')).toBe(countWords(language, 'reports.legitimate', 1));
      expect(await page.textContent('#caller-reports')).toMatch(
        language === 'fr'
          ? /^1 personne de ce service a signalé ce numéro comme fiable\.$/
          : /^1 person of this service/,
      );

      await page.goto(`${server.baseUrl}/?number=0612345678&lang=${language}`);
      await page.locator('#fact-e164').filter({ hasText: '+33612345678' }).waitFor();
      expect(await page.locator('#caller-reports').isHidden()).toBe(true);
      expect(await page.locator('#decisions').isHidden()).toBe(true);
    } finally {
      await context.close();
    }
  });

  it.each(['fr', 'en'] as const)(
    'says it on a 502 too, after the operator’s rule, which decides the call (%s)',
    async (language) => {
      const context = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB' });
      const page = await context.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      try {
        await page.goto(`${failingServer.baseUrl}/?number=0478123456&lang=${language}`);
        await page.locator('#problem').waitFor({ state: 'visible' });
        await page.locator('#caller-reports').waitFor({ state: 'visible' });
        // The rule decides: the reports are said, not what becomes of the call.
        expect(await page.textContent('#caller-reports')).toBe(
          countWords(language, 'reports.spam', 2, { category: words(language, 'report.poll') }),
        );
        expect(await page.locator('#operator-list').isVisible()).toBe(true);

        await page.fill('#number-input', '0478123457');
        await page.click('#lookup-button');
        await page.locator('#fact-e164').filter({ hasText: '+33478123457' }).waitFor();
        expect(await page.textContent('#caller-reports')).toBe(
          `${countWords(language, 'reports.spam', 1, { category: words(language, 'report.ping') })} ${words(language, 'reports.warned')}`,
        );
        expect(await page.locator('#operator-list').isHidden()).toBe(true);
      } finally {
        await context.close();
      }
    },
  );
});
