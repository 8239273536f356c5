// The screenshots of the console's dashboard in docs/ (docs/console-fr.png, docs/console-en.png):
// the service in process with fake sources and calls spread over the last day, signed in, in
// real Chromium (/usr/bin/chromium). Run after `npm run build` (the console's files are the
// build's): `npx tsx scripts/console-screenshots.ts [out-dir]`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { healthyFakeSources } from '../harness/lookup.js';
import { startTestServer } from '../harness/servers.js';

const ADMIN = 'a-screenshot-admin-token-of-32-characters';
const HOUR_MS = 3_600_000;
const out = process.argv[2] ?? fileURLToPath(new URL('../docs/', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'phone-rep-console-shots-'));
writeFileSync(
  join(dir, 'lists.csv'),
  'rule,list,label,note,expiresAt,createdAt,labelPublic\n+33162*,block,Démarchage,,,2026-01-01T00:00:00.000Z,\n+33478123456,allow,Dr Martin,,,2026-01-01T00:00:00.000Z,\n',
);
let shiftMs = 0;
const server = await startTestServer({
  env: { LISTS_FILE: join(dir, 'lists.csv'), ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0' },
  overrides: { sources: healthyFakeSources(), now: () => Date.now() + shiftMs },
});
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
try {
  // Calls over the last 24 hours: a few an hour, more in the day, some blocked by a rule.
  for (let hour = 23; hour >= 0; hour -= 1) {
    shiftMs = -hour * HOUR_MS;
    const calls = 2 + ((hour * 7) % 5);
    for (let call = 0; call < calls; call += 1) {
      const number = [
        `+3316200${String(hour * 10 + call).padStart(4, '0')}`,
        `+3361234${String(5000 + hour * 10 + call)}`,
        '+33478123456',
      ][call % 3];
      await (await fetch(`${server.baseUrl}/api/phone/${encodeURIComponent(number ?? '')}/verdict`)).text();
    }
    await server.deps.screening.flush();
  }
  shiftMs = 0;
  for (const language of ['fr', 'en'] as const) {
    const context = await browser.newContext({
      locale: language === 'fr' ? 'fr-FR' : 'en-GB',
      viewport: { width: 1280, height: 900 },
    });
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/admin/?lang=${language}`);
    await page.fill('#token', ADMIN);
    await page.click('#sign-in button[type=submit]');
    await page.locator('#view-dashboard[aria-busy="false"]').waitFor();
    await page.screenshot({ path: join(out, `console-${language}.png`), fullPage: true });
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
