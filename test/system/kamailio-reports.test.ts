// The deployment's own reports (docs/reports.md, "In the answers") with real SIP software:
// Debian's Kamailio running the shipped examples/kamailio/kamailio.cfg against the real
// application on loopback, fake upstream sites that count the requests they get, and SIPp
// callers. A caller this deployment's reporters confidently reported as spam (evidence verdict
// `spam`) is refused although the sites know nothing against it, and no site is asked; the
// control, the same kind of caller with reports below the bar, is put through after the sites
// were asked. The votes are real ones in the service's own report store (the file beside its lists).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  placeCalls,
  sipSoftwareInstalled,
  startCallee,
  startKamailio,
  type Callee,
  type Kamailio,
} from '../../harness/sip.js';

const WAIT_MS = 2000;

// The sites' fallback (every site's "unknown number" fixture): no score, put through by the sources.
const REPORTED_SPAMMER = '0612345677'; // two reporters said fraud: `spam`
const REPORTED_ONCE = '0612345676'; // the control: one reporter, below the bar (`suspect`, warn)
const UNREPORTED = '0612345675'; // the control: nobody reported it

describe('Kamailio with the shipped config and the deployment’s reports', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  let callee: Callee;
  let kamailio: Kamailio;
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
        HASH_SECRET: 'sip-reports-secret-0123456789',
        RATE_LIMIT_MAX: '0',
        SOURCE_TIMEOUT_MS: '3000',
        LOOKUP_TIMEOUT_MS: '4000',
        LISTS_FILE: join(mkdtempSync(join(tmpdir(), 'phone-rep-sip-reports-')), 'lists.csv'),
      },
    });
    // Real votes in the service's own report store (the file beside the lists): two phones
    // reported the spammer, one the other caller.
    const now = Date.now();
    for (const [e164, tokenId] of [
      ['+33612345677', 'tok_phone00001'],
      ['+33612345677', 'tok_phone00002'],
      ['+33612345676', 'tok_phone00001'],
    ] as const)
      expect((await server.deps.reports.record({ e164, tokenId, rating: 'fraud', at: now }, now)).ok).toBe(true);
    expect(server.deps.reports.evidence('+33612345677')?.verdict).toBe('spam');
    expect(server.deps.reports.evidence('+33612345676')?.verdict).toBe('suspect');
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

  it('puts a caller nobody reported through (the control), asking the sites', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, UNREPORTED, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('unknown');
    expect(sites.total()).toBeGreaterThan(before);
  });

  it('refuses a caller reported as spam by two reporters with 603 Decline, asking no site', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, REPORTED_SPAMMER, 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('block');
    expect(sites.total()).toBe(before);
    // The same caller as the trunk sends it.
    const trunk = await placeCalls(kamailio.port, '+33612345677', 'declined');
    expect(trunk.exitCode, explain(trunk)).toBe(0);
    expect(sites.total()).toBe(before);
  });

  it('warns, not refuses, a caller one reporter reported (below the bar), after asking the sites', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, REPORTED_ONCE, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('warn');
    expect(sites.total()).toBeGreaterThan(before);
  });
});
