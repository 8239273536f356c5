// Issue 47's "done when", end to end with every part real: a family's two phones report a caller
// from SpamBlocker (the served report.json, filled and sent as the app does: test/support/spamblocker.ts)
// to one instance; the PBX asks another instance, which shares the same Redis. From the first
// report the PBX's answer warns; from the second reporter on it refuses the caller, within a
// second, with no website asked, and nothing of the number, the tokens or the comment is logged.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSource, SAMPLE_DATA, type FakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { SPAMBLOCKER_REPORT_PATH, SPAMBLOCKER_TOKEN_PLACEHOLDER } from '../../src/http/routes/spamblocker-report.js';
import { capturingLogger } from '../support/loggers.js';
import { TEST_REDIS_URL, useRedisTestClients, waitFor } from '../support/redis.js';
import { buildReportRequest, type ReportApiConfig } from '../support/spamblocker.js';

const PUBLIC_URL = 'http://placeholder.invalid';
/** The caller as SpamBlocker's call screening hands it over (national spelling), and in E.164. */
const CALLER_RAW = '0612345678';
const CALLER = '+33612345678';
const COMMENT = 'a dit "banque"\nraccroché';

/** Sources that score the caller low (the websites alone would let it through) and count what they are asked. */
function lowScoreSources(): FakeSources {
  const primary = structuredClone(SAMPLE_DATA.primary);
  primary.score = 2;
  return {
    primary: fakeSource('primary', () => ({ status: 'ok', data: structuredClone(primary) })),
    community: fakeSource('community', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.community) })),
    signals: fakeSource('signals', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.signals) })),
  };
}

const askedOf = (sources: FakeSources): number =>
  sources.primary.calls + sources.community.calls + sources.signals.calls;

describe('a family reports a caller from SpamBlocker; the PBX refuses it from the second reporter on', () => {
  const { prefix } = useRedisTestClients('reports-done-when');
  const phonesLog = capturingLogger();
  const pbxLog = capturingLogger();
  let phones: TestServer;
  let pbx: TestServer;
  const pbxSources = lowScoreSources();
  const secrets: string[] = [];

  beforeAll(async () => {
    const env = {
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_MAX: '0',
      PUBLIC_URL,
      LISTS_FILE: join(mkdtempSync(join(tmpdir(), 'phone-rep-done-when-')), 'lists.csv'),
    };
    phones = await startTestServer({ env, overrides: { sources: lowScoreSources() }, logger: phonesLog.logger });
    pbx = await startTestServer({ env, overrides: { sources: pbxSources }, logger: pbxLog.logger });
    for (const label of ['Phone of Anne', 'Phone of Paul'])
      secrets.push((await phones.deps.tokens.create({ label })).secret);
    // Tokens made on one instance are accepted on the other (the store is Redis).
    await waitFor(() => pbx.deps.tokens.anyInForce(), 1000);
  });
  afterAll(async () => {
    await phones?.close();
    await pbx?.close();
  });

  async function reportFrom(secret: string): Promise<number> {
    const served = (await (await fetch(`${phones.baseUrl}${SPAMBLOCKER_REPORT_PATH}`)).json()) as ReportApiConfig;
    const api = JSON.parse(JSON.stringify(served).replace(SPAMBLOCKER_TOKEN_PLACEHOLDER, secret)) as ReportApiConfig;
    const sent = buildReportRequest(api, CALLER_RAW, '{fraud}', COMMENT);
    const answer = await fetch(sent.url.replace(PUBLIC_URL, phones.baseUrl), {
      method: 'POST',
      headers: sent.headers,
      body: sent.body,
    });
    return answer.status;
  }

  const verdictAtPbx = async (): Promise<string> =>
    (await (await fetch(`${pbx.baseUrl}/api/phone/${CALLER}/verdict`)).text()).trim();

  it('lets the caller through on the websites alone (score 2)', async () => {
    expect(await verdictAtPbx()).toBe('allow');
  });

  it('warns from the first report, seen on the PBX instance within a second', async () => {
    expect(await reportFrom(secrets[0] ?? '')).toBe(200);
    await waitFor(() => pbx.deps.reports.evidence(CALLER)?.reporters === 1, 1000);
    expect(pbx.deps.reports.evidence(CALLER)?.verdict).toBe('suspect');
    expect(await verdictAtPbx()).toBe('warn');
  });

  it('refuses from the second reporter on, with no website asked', async () => {
    expect(await reportFrom(secrets[1] ?? '')).toBe(200);
    await waitFor(() => pbx.deps.reports.evidence(CALLER)?.verdict === 'spam', 1000);
    const asked = askedOf(pbxSources);
    expect(await verdictAtPbx()).toBe('block');
    const cid = await (await fetch(`${pbx.baseUrl}/api/phone/${CALLER}/cid`)).text();
    expect(cid).toContain('SIGNALÉ 2×');
    expect(askedOf(pbxSources)).toBe(asked);
    const json = (await (await fetch(`${pbx.baseUrl}/api/phone/${CALLER}`)).json()) as {
      meta: { reports: { reporters: number; verdict: string; categories: Record<string, number> } | null };
    };
    expect(json.meta.reports).toMatchObject({ reporters: 2, verdict: 'spam', categories: { fraud: 2 } });
  });

  it('keeps one vote per phone: reporting again changes nothing of the count', async () => {
    expect(await reportFrom(secrets[1] ?? '')).toBe(200);
    expect(phones.deps.reports.evidence(CALLER)?.reporters).toBe(2);
  });

  it('logs nothing of the number, the tokens or the comment', () => {
    const written = [...phonesLog.raw, ...pbxLog.raw].join('\n');
    expect(written.length).toBeGreaterThan(0);
    for (const secret of [CALLER, CALLER.slice(1), CALLER_RAW, '12345678', ...secrets, 'banque'])
      expect(written).not.toContain(secret);
  });
});
