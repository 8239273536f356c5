// The lookup page shows the operator's decision (meta.list) in French and in English, in real
// headless Chromium (/usr/bin/chromium): a blocked prefix with its rule, an allowed number with
// its label, and nothing for a number no rule matches. The decision comes first, on a report and
// on a 502 alike: with every source failing, the allowed doctor is still "allowed", above the
// problem, and the page does not tell to let the caller leave a message.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUES } from '../../src/domain/wording/catalogue.js';
import { failed } from '../../src/domain/ports/source.js';
import { fakeSource, healthyFakeSources, type FakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const STEP_TIMEOUT_MS = 10_000;
let browser: Browser;
let server: TestServer;
/** The same lists; every source fails, whatever the number: each lookup is a 502. */
let failingServer: TestServer;

function failingSources(): FakeSources {
  return {
    primary: fakeSource('primary', () => failed('timeout')),
    community: fakeSource('community', () => failed('http_5xx')),
    signals: fakeSource('signals', () => failed('connection')),
  };
}

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-page-')), 'lists.csv');
  writeFileSync(
    file,
    'rule,list,label,note,expiresAt,createdAt,labelPublic\n+33162*,block,,,,2026-01-01T00:00:00.000Z,\n+33162001234,allow,Ma banque,,,2026-01-01T00:00:00.000Z,true\n+33478123456,allow,Dr Martin,,,2026-01-01T00:00:00.000Z,true\n',
  );
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  server = await startTestServer({
    env: { LISTS_FILE: file, MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: { sources: healthyFakeSources() },
  });
  failingServer = await startTestServer({
    env: { LISTS_FILE: file, MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000' },
    overrides: { sources: failingSources() },
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await failingServer?.close();
});

async function topOf(page: Page, selector: string): Promise<number> {
  const box = await page.locator(selector).boundingBox();
  if (box === null) throw new Error(`${selector} is not laid out`);
  return box.y;
}

/** Whether the first element comes before the second in the document. */
function precedes(page: Page, first: string, second: string): Promise<boolean> {
  return page.evaluate(
    ([a, b]) => {
      const nodeA = document.querySelector(a ?? '');
      const nodeB = document.querySelector(b ?? '');
      return (
        nodeA !== null &&
        nodeB !== null &&
        (nodeA.compareDocumentPosition(nodeB) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0
      );
    },
    [first, second],
  );
}

const fill = (text: string, values: Record<string, string>): string =>
  text.replace(/\{(\w+)\}/g, (_whole, name: string) => values[name] ?? '');

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
      // Who decided, in words a household reads right: this service's administrator, not an "opérateur" (Orange, SFR…).
      expect(await page.textContent('#operator-list')).toMatch(
        language === 'fr'
          ? /^Bloqué par l’administrateur de ce service \(règle/
          : /^Blocked by this service’s administrator \(rule/,
      );

      await page.goto(`${server.baseUrl}/?number=0162001234&lang=${language}`);
      await page.locator('#operator-list').waitFor({ state: 'visible' });
      expect(await page.textContent('#operator-list')).toBe(
        `${fill(words['list.allow'], { rule: '+33162001234' })} ${fill(words['list.label'], { label: 'Ma banque' })}`,
      );
      expect(await page.textContent('#operator-list')).toMatch(
        language === 'fr' ? /^Autorisé par l’administrateur de ce service/ : /^Allowed by this service’s administrator/,
      );

      await page.goto(`${server.baseUrl}/?number=0612345678&lang=${language}`);
      await page.locator('#fact-e164').filter({ hasText: '+33612345678' }).waitFor();
      expect(await page.locator('#operator-list').isHidden()).toBe(true);
    } finally {
      await context.close();
    }
  });
});

describe('the operator’s decision when every source fails (a 502)', () => {
  for (const language of ['fr', 'en'] as const) {
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1280, height: 900 },
    ]) {
      it(`shows "allowed: Dr Martin" first, above the problem, and no "leave a message", in ${language} at ${viewport.width} px`, async () => {
        const context = await browser.newContext({ locale: language === 'fr' ? 'fr-FR' : 'en-GB', viewport });
        const page = await context.newPage();
        page.setDefaultTimeout(STEP_TIMEOUT_MS);
        const words = CATALOGUES[language];
        try {
          await page.goto(`${failingServer.baseUrl}/?number=0478123456&lang=${language}`);
          await page.locator('#problem').waitFor({ state: 'visible' });
          expect(await page.textContent('#problem-title')).toBe(words['error.allFailedTitle']);
          await page.locator('#operator-list').waitFor({ state: 'visible' });
          expect(await page.textContent('#operator-list')).toBe(
            `${fill(words['list.allow'], { rule: '+33478123456' })} ${fill(words['list.label'], { label: 'Dr Martin' })}`,
          );
          // First: in the document (what a screen reader reads first) and on screen.
          for (const after of ['#facts-card', '#problem', '#failures']) {
            expect(await precedes(page, '#operator-list', after), after).toBe(true);
            expect(await topOf(page, '#operator-list'), after).toBeLessThan(await topOf(page, after));
          }
          // The rule decides what becomes of the call: no advice of an unknown number.
          expect(await page.locator('#advice').isVisible()).toBe(false);
          expect(await page.textContent('body')).not.toContain(words['advice.notChecked']);

          // A number no rule matches: the 502 as before, with the advice for a number that could not be checked, and no rule.
          await page.fill('#number-input', '0478123457');
          await page.click('#lookup-button');
          await page.locator('#fact-e164').filter({ hasText: '+33478123457' }).waitFor();
          await page.locator('#advice').waitFor({ state: 'visible' });
          expect(await page.locator('#operator-list').isHidden()).toBe(true);
          expect(await page.textContent('#advice-text')).toBe(words['advice.notChecked']);
        } finally {
          await context.close();
        }
      });
    }
  }

  it('shows the rule first on a report too, above the verdict', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      await page.goto(`${server.baseUrl}/?number=0478123456`);
      await page.locator('#verdict-card').waitFor({ state: 'visible' });
      await page.locator('#operator-list').waitFor({ state: 'visible' });
      for (const after of ['#verdict-card', '#facts-card', '#advice']) {
        expect(await topOf(page, '#operator-list'), after).toBeLessThan(await topOf(page, after));
      }
    } finally {
      await context.close();
    }
  });
});

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

describe('the operator’s decision for everyone (axe-core, WCAG 2.1 AA)', () => {
  it.each([
    ['the 502 of an allowed number', () => failingServer, '0478123456', '#problem'],
    ['the 502 of a blocked number', () => failingServer, '0162001235', '#problem'],
    ['the report of an allowed number', () => server, '0478123456', '#verdict-card'],
  ] as const)('has no serious or critical violation on %s', async (_name, serverOf, number, shown) => {
    // axe is injected as an inline script, which the page's CSP rightly refuses: this context bypasses it.
    const context = await browser.newContext({
      bypassCSP: true,
      locale: 'en-GB',
      viewport: { width: 1200, height: 1000 },
    });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      await page.goto(`${serverOf().baseUrl}/?number=${number}`);
      await page.locator(shown).waitFor({ state: 'visible' });
      await page.locator('#operator-list').waitFor({ state: 'visible' });
      await page.addScriptTag({ content: AXE_SOURCE });
      const results = await page.evaluate(async () => {
        const axe = (
          window as unknown as {
            axe: {
              run(
                context: Document,
                options: object,
              ): Promise<{ violations: Array<{ id: string; impact?: string | null }>; passes: Array<{ id: string }> }>;
            };
          }
        ).axe;
        return axe.run(document, {
          runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
          resultTypes: ['violations', 'passes'],
        });
      });
      expect(results.passes.map((rule) => rule.id)).toContain('color-contrast');
      expect(
        results.violations
          .filter((rule) => rule.impact === 'serious' || rule.impact === 'critical')
          .map((rule) => rule.id),
      ).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
