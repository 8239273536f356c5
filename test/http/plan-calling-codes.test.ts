// Issue 28 item 3, through the real server: an overseas NPV number written with +33 (the attack's
// spellings) is the NPV number it is. With VERDICT_NPV=block, an automated caller presenting
// `+33 9 47 5…` is refused like one presenting `09 47 5…`, and every route describes one number.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSource, type FakeSources } from '../../harness/lookup.js';
import { insideLegalHoursClock } from '../../harness/legal-hours.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { fetchDocumented } from '../support/contracts.js';

const NATIONAL = '0947538433';
const SPELLINGS = [
  NATIONAL,
  '+33947538433',
  '+330947538433',
  '330947538433',
  'sip:%2B33947538433@pbx',
  '%2B33947538433',
  '+590947538433',
];

/** Sources that know nothing of any number: only the NPV rule can decide the verdict. */
function silentSources(): FakeSources {
  return {
    primary: fakeSource('primary', () => ({ status: 'not_found' })),
    community: fakeSource('community', () => ({ status: 'not_found' })),
    signals: fakeSource('signals', () => ({ status: 'not_found' })),
  };
}

describe('an overseas NPV number under +33 keeps its NPV flag on every route (issue 28)', () => {
  let server: TestServer;
  let sources: FakeSources;
  beforeAll(async () => {
    sources = silentSources();
    server = await startTestServer({
      env: { RATE_LIMIT_MAX: '0', VERDICT_NPV: 'block' },
      // The NPV words, not the legal hours' (which the day the test runs would decide).
      overrides: { sources, now: insideLegalHoursClock() },
    });
  });
  afterAll(async () => server.close());

  it.each(SPELLINGS)('answers %s as the NPV number 09 47 53 84 33', async (spelling) => {
    const verdict = await fetchDocumented(server, `/api/phone/${spelling}/verdict`);
    expect(verdict.text).toBe('block\n');
    const cid = await fetchDocumented(server, `/api/phone/${spelling}/cid?lang=en`);
    expect(cid.text).toBe('Automated call (NPV)');
    const info = JSON.parse((await fetchDocumented(server, `/api/phone/${spelling}/info`)).text) as {
      data: { number: string; phoneInfo: { isNPV: boolean; e164: string } };
    };
    expect(info.data).toMatchObject({ number: NATIONAL, phoneInfo: { isNPV: true, e164: '+590947538433' } });
    const score = JSON.parse((await fetchDocumented(server, `/api/phone/${spelling}/score`)).text) as {
      data: { number: string };
      meta: { hints: string[]; sources: Record<string, { status: string }> };
    };
    expect(score.data.number).toBe(NATIONAL);
    expect(score.meta.hints).toContain('npv');
    // Every source was asked: none was skipped as not covering a foreign-looking number.
    expect(Object.values(score.meta.sources).map((source) => source.status)).toEqual([
      'not_found',
      'not_found',
      'not_found',
    ]);
  });
});
