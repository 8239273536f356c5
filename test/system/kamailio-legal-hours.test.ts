// The legal calling hours (docs/legal-hours.md) with real SIP software: Debian's Kamailio running
// the shipped examples/kamailio/kamailio.cfg against the real application on loopback (in
// process, so its clock is injected: harness/servers.ts overrides.now, the engine's and the
// routes' one clock), fake upstream sites that know nothing of the callers, and SIPp callers. A
// caller in a call-centre operator's block is put through with the `warn` tag at a legal hour
// (VERDICT_CALL_CENTRE=warn) and refused outside the hours (VERDICT_OUTSIDE_HOURS=block), as is
// an NPV caller on a Sunday. The clock is the server's, not the machine's: deterministic whatever
// day the test runs (faketime is not needed, the server runs in this process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import {
  placeCalls,
  sipSoftwareInstalled,
  startCallee,
  startKamailio,
  type Callee,
  type Kamailio,
} from '../../harness/sip.js';

const WAIT_MS = 2000;
const CALL_CENTRE = '0189712345'; // an Aircall fixed block; the sites know nothing of it
const NPV = '0162123456';
const MOBILE = '0612345675'; // the control: no range rule, no score: `unknown` at any hour

describe('Kamailio with the shipped config and the legal calling hours', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  let callee: Callee;
  let kamailio: Kamailio;
  const clock = { nowMs: 0 };
  beforeAll(async () => {
    if (!sipSoftwareInstalled()) {
      throw new Error(
        'Kamailio (with kamailio-utils-modules) and SIPp (sip-tester) are not installed: `npm test` installs them (scripts/test-prerequisites.sh), or apt-get install kamailio kamailio-utils-modules sip-tester',
      );
    }
    sites = await startFakeUpstreamSites({});
    server = await startTestServer({
      env: {
        ...sites.env(),
        TELLOWS_API_KEY: 'test-partner-key',
        HASH_SECRET: 'sip-legal-hours-secret-0123456789',
        RATE_LIMIT_MAX: '0',
        SOURCE_TIMEOUT_MS: '3000',
        LOOKUP_TIMEOUT_MS: '4000',
      },
      overrides: { now: () => clock.nowMs },
    });
    callee = await startCallee();
    kamailio = await startKamailio({
      serviceUrl: server.baseUrl,
      nextHopPort: callee.port,
      waitMs: WAIT_MS,
      httpTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await kamailio?.stop();
    await callee?.stop();
    await server?.close();
    await sites?.close();
  });

  function explain(outcome: { output: string }): string {
    return `SIPp:\n${outcome.output.slice(-1500)}\nKamailio:\n${kamailio.output().slice(-1500)}`;
  }

  it('puts a call-centre caller through with the warn tag at a legal hour (Monday 15:00 in Paris)', async () => {
    clock.nowMs = Date.parse('2026-11-30T14:00:00Z');
    const outcome = await placeCalls(kamailio.port, CALL_CENTRE, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    // The config relays the call with `X-Reputation-Verdict: <this word>`.
    expect(kamailio.verdicts().at(-1)).toBe('warn');
    const control = await placeCalls(kamailio.port, MOBILE, 'answered');
    expect(control.exitCode, explain(control)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('unknown');
  });

  it('refuses the same caller at 21:30 with 603 Decline, and an NPV caller on a Sunday', async () => {
    clock.nowMs = Date.parse('2026-11-30T20:30:00Z');
    const outcome = await placeCalls(kamailio.port, CALL_CENTRE, 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('block');
    // The control is not a range the hours concern: still put through.
    const control = await placeCalls(kamailio.port, MOBILE, 'answered');
    expect(control.exitCode, explain(control)).toBe(0);

    clock.nowMs = Date.parse('2026-11-29T10:00:00Z'); // Sunday 11:00 in Paris
    const npv = await placeCalls(kamailio.port, NPV, 'declined');
    expect(npv.exitCode, explain(npv)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('block');
  });
});
