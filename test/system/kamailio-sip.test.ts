// Call screening with real SIP software: Debian's Kamailio running the shipped
// examples/kamailio/kamailio.cfg, the built server (`node dist/server.js`), fake upstream sites on
// loopback, and SIPp placing calls to a SIPp callee. What a Kamailio user gets by copying the
// config and pointing it at the service.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../../harness/loopback.js';
import { spawnServer, type ServerProcess } from '../../harness/servers.js';
import {
  KNOWN_NUMBER,
  UNKNOWN_NUMBER,
  startFakeUpstreamSites,
  type FakeUpstreamSites,
} from '../../harness/upstream-sites.js';
import {
  placeCalls,
  sipSoftwareInstalled,
  startCallee,
  startKamailio,
  type Callee,
  type Kamailio,
} from '../../harness/sip.js';

// The service's answer deadline the config asks for (`?wait=`), and the lookup's own, far longer:
// a call that goes through well before LOOKUP_TIMEOUT_MS was cut by the wait.
const WAIT_MS = 600;
const LOOKUP_TIMEOUT_MS = 4000;

const SUSPICIOUS = '0612345678'; // tellows 8
const TRUSTWORTHY = '0612345603'; // tellows 3
const UNREACHABLE = '0612345698'; // no site ever answers

// Missing software is a failure that says how to get it, never a silent skip.
function requireSipSoftware(): void {
  if (!sipSoftwareInstalled()) {
    throw new Error(
      'Kamailio (with kamailio-utils-modules) and SIPp (sip-tester) are not installed: `npm test` installs them (scripts/test-prerequisites.sh), or apt-get install kamailio kamailio-utils-modules sip-tester',
    );
  }
}

describe('Kamailio with the shipped config screens calls through the service', () => {
  let sites: FakeUpstreamSites;
  let server: ServerProcess;
  let callee: Callee;
  let kamailio: Kamailio;
  beforeAll(async () => {
    requireSipSoftware();
    sites = await startFakeUpstreamSites({
      scenarios: {
        [SUSPICIOUS]: KNOWN_NUMBER,
        [TRUSTWORTHY]: { ...UNKNOWN_NUMBER, tellowsApi: { fixture: 'api-single-object-lists.json' } },
        [UNREACHABLE]: {
          tellowsApi: { blackHole: true },
          numeroinconnu: { blackHole: true },
          telguarder: { blackHole: true },
        },
      },
    });
    server = await spawnServer({
      ...sites.env(),
      TELLOWS_API_KEY: 'test-partner-key',
      HASH_SECRET: 'sip-test-secret-0123456789',
      RATE_LIMIT_MAX: '0',
      VERDICT_WITHHELD: 'block',
      SOURCE_TIMEOUT_MS: '3000',
      LOOKUP_TIMEOUT_MS: String(LOOKUP_TIMEOUT_MS),
    });
    callee = await startCallee();
    // The HTTP timeout is longer than the lookup's, so only the service's own wait can end it early.
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
  });

  function explain(outcome: { output: string }): string {
    return `SIPp:\n${outcome.output.slice(-1500)}\nKamailio:\n${kamailio.output().slice(-1500)}`;
  }

  it('refuses a caller with a suspicious reputation with 603 Decline', async () => {
    const outcome = await placeCalls(kamailio.port, SUSPICIOUS, 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts()).toContain('block');
  });

  it('refuses the same caller written as the trunk sends it (+33…)', async () => {
    const outcome = await placeCalls(kamailio.port, '+33612345678', 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
  });

  it('puts a trustworthy caller through to the callee, which answers 200', async () => {
    const outcome = await placeCalls(kamailio.port, TRUSTWORTHY, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(kamailio.verdicts()).toContain('allow');
  });

  it('follows VERDICT_WITHHELD for a withheld caller (set to block here)', async () => {
    const outcome = await placeCalls(kamailio.port, 'anonymous', 'declined');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    const check = await fetch(`${server.baseUrl}/api/phone/anonymous/verdict`);
    expect(await check.text()).toBe('block\n');
  });

  it('puts the call through within the configured wait when no upstream answers', async () => {
    const outcome = await placeCalls(kamailio.port, UNREACHABLE, 'answered');
    expect(outcome.exitCode, explain(outcome)).toBe(0);
    expect(outcome.setupMs).toHaveLength(1);
    // The deadline is the behaviour under test: the wait, with generous slack, and well short
    // of the lookup's own deadline.
    expect(outcome.setupMs[0]).toBeLessThan(WAIT_MS + 2000);
    expect(kamailio.verdicts().at(-1)).toBe('unknown');
  });
});

describe('Kamailio with the service down', () => {
  it('puts calls through when the service cannot be reached', async () => {
    requireSipSoftware();
    const callee = await startCallee();
    // A port nothing listens on: the HTTP query fails at once and the call is not held.
    const kamailio = await startKamailio({
      serviceUrl: 'http://127.0.0.1:9',
      nextHopPort: callee.port,
      waitMs: WAIT_MS,
    });
    try {
      const outcome = await placeCalls(kamailio.port, SUSPICIOUS, 'answered');
      expect(outcome.exitCode, outcome.output.slice(-1500)).toBe(0);
      expect(kamailio.verdicts()).toEqual(['unknown']);
    } finally {
      await kamailio.stop();
      await callee.stop();
    }
  });
});

// The service misbehaving, played by a loopback HTTP server that records every request it gets:
// the shipped config must give every call its final answer within HTTP_TIMEOUT_S plus 1 s at 5
// new calls a second, ask once per call (a retransmitted INVITE never asks again), and only ever
// ask /api/phone/<user>/verdict.
const HTTP_TIMEOUT_S = 2;
const CALLS = 10;
const CALLS_PER_SECOND = 5;
const SETUP_BOUND_MS = (HTTP_TIMEOUT_S + 1) * 1000;
const VERDICT_PATH = /^\/api\/phone\/[^/]+\/verdict\?wait=\d+$/;

type Misbehaviour = 'hanging' | 'slow' | 'refusing-429' | 'refusing-503';

/** A stand-in for the service. Every answer it does give says `block`: a call put through shows the config did not take it. */
async function startMisbehavingService(misbehaviour: Misbehaviour): Promise<LoopbackServer> {
  return startLoopbackServer((_request, response) => {
    switch (misbehaviour) {
      case 'hanging':
        return; // accepts the connection and the request, never answers
      case 'slow':
        // Answers, but long after the config's timeout (close() ends the connection first).
        setTimeout(
          () => response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('block\n'),
          (HTTP_TIMEOUT_S + 5) * 1000,
        ).unref();
        return;
      case 'refusing-429':
      case 'refusing-503':
        response
          .writeHead(misbehaviour === 'refusing-429' ? 429 : 503, {
            'content-type': 'text/plain; charset=utf-8',
            'retry-after': '30',
          })
          .end('block\n');
        return;
    }
  });
}

/** A loopback TCP port that nothing listens on any more: connections to it are refused. */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Kamailio with the shipped config when the service hangs, is slow, down or refusing', () => {
  let callee: Callee;
  beforeAll(async () => {
    requireSipSoftware();
    callee = await startCallee();
  });
  afterAll(async () => {
    await callee?.stop();
  });

  async function withKamailio<T>(serviceUrl: string, run: (kamailio: Kamailio) => Promise<T>): Promise<T> {
    const kamailio = await startKamailio({
      serviceUrl,
      nextHopPort: callee.port,
      waitMs: 800,
      httpTimeoutSeconds: HTTP_TIMEOUT_S,
    });
    try {
      return await run(kamailio);
    } finally {
      await kamailio.stop();
    }
  }

  async function expectEveryCallPutThroughInTime(kamailio: Kamailio): Promise<void> {
    const outcome = await placeCalls(kamailio.port, SUSPICIOUS, 'answered', {
      calls: CALLS,
      rate: CALLS_PER_SECOND,
      limit: CALLS,
      timeoutSeconds: 30,
    });
    const explanation = `SIPp:\n${outcome.output.slice(-1500)}\nKamailio:\n${kamailio.output().slice(-1500)}`;
    expect(outcome.exitCode, explanation).toBe(0);
    expect(outcome.setupMs, explanation).toHaveLength(CALLS);
    // The deadline is the behaviour under test.
    for (const setupMs of outcome.setupMs) expect(setupMs, explanation).toBeLessThan(SETUP_BOUND_MS);
    expect(kamailio.verdicts()).toEqual(Array.from({ length: CALLS }, () => 'unknown'));
  }

  for (const misbehaviour of ['hanging', 'slow', 'refusing-429', 'refusing-503'] as const) {
    it(`puts every call through within HTTP_TIMEOUT_S + 1 s at 5 calls a second, the service ${misbehaviour}, asking once per call`, async () => {
      const service = await startMisbehavingService(misbehaviour);
      try {
        await withKamailio(service.url, expectEveryCallPutThroughInTime);
        // One query per call: no INVITE retransmission asked again.
        expect(service.received.map((request) => request.url)).toHaveLength(CALLS);
        for (const request of service.received) expect(request.url).toMatch(VERDICT_PATH);
      } finally {
        await service.close();
      }
    });
  }

  it('puts every call through within HTTP_TIMEOUT_S + 1 s at 5 calls a second, the service down (connection refused)', async () => {
    await withKamailio(`http://127.0.0.1:${await refusedPort()}`, expectEveryCallPutThroughInTime);
  });

  it('asks the service once for a call whose INVITE arrives twice', async () => {
    const service = await startMisbehavingService('hanging');
    try {
      await withKamailio(service.url, async (kamailio) => {
        const outcome = await placeCalls(kamailio.port, SUSPICIOUS, 'retransmitted', { timeoutSeconds: 30 });
        expect(
          outcome.exitCode,
          `SIPp:\n${outcome.output.slice(-1500)}\nKamailio:\n${kamailio.output().slice(-1500)}`,
        ).toBe(0);
        expect(outcome.setupMs[0]).toBeLessThan(SETUP_BOUND_MS);
      });
      expect(service.received).toHaveLength(1);
    } finally {
      await service.close();
    }
  });

  it('only ever asks /api/phone/<user>/verdict, whatever the From user (`.`, `..`)', async () => {
    const service = await startLoopbackServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('allow\n');
    });
    try {
      await withKamailio(service.url, async (kamailio) => {
        for (const caller of ['.', '..', '...', TRUSTWORTHY]) {
          const outcome = await placeCalls(kamailio.port, caller, 'answered');
          expect(outcome.exitCode, outcome.output.slice(-1500)).toBe(0);
        }
      });
      const paths = service.received.map((request) => request.url);
      // The ordinary caller was asked about: the recording works.
      expect(paths).toContain(`/api/phone/${TRUSTWORTHY}/verdict?wait=800`);
      for (const path of paths) expect(path).toMatch(VERDICT_PATH);
    } finally {
      await service.close();
    }
  });
});
