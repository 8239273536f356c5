// The lookup page shows the operator's decision (meta.list) in French and in English, in real
// headless Chromium (/usr/bin/chromium): a blocked prefix with its rule, an allowed number with
// its label, and nothing for a number no rule matches.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUES } from '../../src/domain/wording/catalogue.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const STEP_TIMEOUT_MS = 10_000;
let browser: Browser;
let server: TestServer;

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-page-')), 'lists.csv');
  writeFileSync(file, 'rule,list,label,note,expiresAt,createdAt,labelPublic\n+33162*,block,,,,2026-01-01T00:00:00.000Z,\n+33162001234,allow,Ma banque,,,2026-01-01T00:00:00.000Z,true\n');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  server = await startTestServer({ env: { LISTS_FILE: file, MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' }, overrides: { sources: healthyFakeSources() } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const fill = (text: string, values: Record<string, string>): string => text.replace(/\{(\w+)\}/g, (_whole, name: string) => values[name] ?? '');

describe('the lookup page and the operator’s lists', () => {
  it.each(['fr', 'en'] as const)('shows the decision in %s', async (language) => {
    const context = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB' });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const words = CATALOGUES[language];
    try {
      await page.goto(`${server.baseUrl}/?number=0162001235&lang=${language}`);
      await page.locator('#operator-list').waitFor({ state: 'visible' });
      expect(await page.textContent('#operator-list')).toBe(fill(words['list.block'], { rule: '+33162*' }));

      await page.goto(`${server.baseUrl}/?number=0162001234&lang=${language}`);
      await page.locator('#operator-list').waitFor({ state: 'visible' });
      expect(await page.textContent('#operator-list')).toBe(`${fill(words['list.allow'], { rule: '+33162001234' })} ${fill(words['list.label'], { label: 'Ma banque' })}`);

      await page.goto(`${server.baseUrl}/?number=0612345678&lang=${language}`);
      await page.locator('#fact-e164').filter({ hasText: '+33612345678' }).waitFor();
      expect(await page.locator('#operator-list').isHidden()).toBe(true);
    } finally {
      await context.close();
    }
  });
});
