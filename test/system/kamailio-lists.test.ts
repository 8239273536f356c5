// The operator's allow and block lists (docs/lists.md) with real SIP software: Debian's Kamailio
// running the shipped examples/kamailio/kamailio.cfg, the built server (`node dist/server.js`)
// reading a LISTS_FILE, fake upstream sites on loopback that count the requests they get, and
// SIPp callers. A caller the sources score 8 (a block) is put through when on the allow list; a caller in
// a blocked range is refused although the sources know nothing against it; neither call asks an
// upstream. Each listed call has a control, the same kind of caller off the lists, that gets the
// opposite answer: the lists ignored fails the test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../harness/servers.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import {
  placeCalls,
  sipSoftwareInstalled,
  startCallee,
  startKamailio,
  type Callee,
  type Kamailio,
} from '../../harness/sip.js';

const WAIT_MS = 2000;

// Both get every site's "normal" fixture: tellows scores them 8, a block by the sources.
const ALLOWED_SPAMMER = '0612345699'; // on the allow list
const UNLISTED_SPAMMER = '0612345688'; // the control: off the lists
// The sites' fallback (every site's "unknown number" fixture): no score, put through by the sources.
const IN_BLOCKED_RANGE = '0698001234'; // inside the blocked +33698*
const OUTSIDE_BLOCKED_RANGE = '0699001234'; // the control: off the lists

const LISTS = [
  'rule,list,label,note,expiresAt,createdAt',
  '+33612345699,allow,Fournisseur,,,2026-11-26T00:00:00.000Z',
  '+33698*,block,Robot,,,2026-11-26T00:00:00.000Z',
].join('\n');

describe('Kamailio with the shipped config and the operator’s lists', () => {
  let sites: FakeUpstreamSites;
  let server: ServerProcess;
  let callee: Callee;
  let kamailio: Kamailio;
  let listsDir: string;
  beforeAll(async () => {
    if (!sipSoftwareInstalled()) {
      throw new Error(
        'Kamailio (with kamailio-utils-modules) and SIPp (sip-tester) are not installed: `npm test` installs them (scripts/test-prerequisites.sh), or apt-get install kamailio kamailio-utils-modules sip-tester',
      );
    }
    listsDir = mkdtempSync(join(tmpdir(), 'kamailio-lists-'));
    const listsFile = join(listsDir, 'lists.csv');
    writeFileSync(listsFile, `${LISTS}\n`);
    sites = await startFakeUpstreamSites({
      scenarios: { [ALLOWED_SPAMMER]: KNOWN_NUMBER, [UNLISTED_SPAMMER]: KNOWN_NUMBER },
    });
    server = await spawnServer({
      ...sites.env(),
      LISTS_FILE: listsFile,
      TELLOWS_API_KEY: 'test-partner-key',
      HASH_SECRET: 'sip-lists-secret-0123456789',
      RATE_LIMIT_MAX: '0',
      SOURCE_TIMEOUT_MS: '3000',
      LOOKUP_TIMEOUT_MS: '4000',
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
    server?.child.kill('SIGTERM');
    await server?.exited;
    await sites?.close();
    if (listsDir !== undefined) rmSync(listsDir, { recursive: true, force: true });
  });

  function explain(outcome: { output: string }): string {
    return `SIPp:\n${outcome.output.slice(-1500)}\nKamailio:\n${kamailio.output().slice(-1500)}\nServer:\n${server.output().slice(-1500)}`;
  }

  it('refuses the unlisted caller the sources score 8 (the control), asking the sites', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, UNLISTED_SPAMMER, 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('block');
    expect(sites.total()).toBeGreaterThan(before);
    // The score the sources give (the lookup is held now: no site asked again).
    const check = await fetch(`${server.baseUrl}/api/phone/${UNLISTED_SPAMMER}/verdict`);
    expect(check.headers.get('x-reputation-score')).toBe('8');
    expect(check.headers.get('x-operator-list')).toBeNull();
  });

  it('puts a caller the sources score 8 through to the callee (200) when on the allow list, asking no site', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, ALLOWED_SPAMMER, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('allow');
    expect(sites.total()).toBe(before);
  });

  it('puts a caller the sources know nothing about through (the control)', async () => {
    const outcome = await placeCalls(kamailio.port, OUTSIDE_BLOCKED_RANGE, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('unknown');
  });

  it('refuses a caller inside a blocked prefix with 603 Decline, asking no site', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, IN_BLOCKED_RANGE, 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts().at(-1)).toBe('block');
    expect(sites.total()).toBe(before);
  });

  it('refuses the same blocked caller written as the trunk sends it (+33…)', async () => {
    const before = sites.total();
    const outcome = await placeCalls(kamailio.port, '+33698005678', 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(sites.total()).toBe(before);
  });
});
