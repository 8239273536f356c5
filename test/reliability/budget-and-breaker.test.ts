// A spent budget and a poisoned number, through the real service over loopback: the real
// adapters, fetchers, engine and breaker against a loopback stand-in for the three sites.
// A budget wait is never an upstream failure (blocked/budget at once, breaker closed,
// readiness degraded not down, no request counted as sent), and one number the upstream
// cannot answer never opens the breaker for the others.
import { afterEach, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

interface LookupBody {
  meta?: { sources?: Record<string, { status: string; reason?: string }> };
}

interface ReadyBody {
  status: string;
  dependencies: {
    upstreams: Record<
      string,
      { status: string; circuit: string | null; lastOutcome: { status: string; reason?: string } | null }
    >;
  };
}

let sites: FakeUpstreamSites | undefined;
let service: TestServer | undefined;

afterEach(async () => {
  await service?.close();
  await sites?.close();
  service = undefined;
  sites = undefined;
});

async function lookup(
  server: TestServer,
  national: string,
): Promise<{ status: number; body: LookupBody; elapsedMs: number }> {
  const startedAt = performance.now();
  const response = await fetch(`${server.baseUrl}/api/phone/${national}`);
  const body = (await response.json()) as LookupBody;
  return { status: response.status, body, elapsedMs: performance.now() - startedAt };
}

async function text(server: TestServer, path: string): Promise<string> {
  return (await fetch(`${server.baseUrl}${path}`)).text();
}

describe('reliability: a spent upstream budget', () => {
  it('ends further lookups blocked/budget at once, keeps the breaker closed, readiness degraded (budget) and counts no request it did not send', async () => {
    sites = await startFakeUpstreamSites();
    const SOURCE_TIMEOUT_MS = 3000;
    service = await startTestServer({
      // One client: the whole budget is its share here (fair shares: fair-share.test.ts).
      env: {
        ...sites.env(),
        NUMEROINCONNU_RPM: '2',
        UPSTREAM_CLIENT_SHARE_PCT: '100',
        RATE_LIMIT_MAX: '0',
        SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
        LOOKUP_TIMEOUT_MS: '4000',
      },
    });
    const answers = [];
    // Twelve distinct numbers, more than twice the breaker's threshold of five.
    for (let i = 0; i < 12; i += 1) answers.push(await lookup(service, `06123450${String(i).padStart(2, '0')}`));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.slice(0, 2).map((a) => a.body.meta?.sources?.community?.status)).toEqual(['not_found', 'not_found']);
    for (const answer of answers.slice(2)) {
      expect(answer.body.meta?.sources?.community).toMatchObject({ status: 'blocked', reason: 'budget' });
      // The wait for a slot a minute away cannot fit: answered at once, not at the source deadline.
      expect(answer.elapsedMs).toBeLessThan(SOURCE_TIMEOUT_MS / 2);
    }
    expect(sites.count('numeroinconnu')).toBe(2);

    const ready = JSON.parse(await text(service, '/health/ready')) as ReadyBody;
    expect(ready.status).not.toBe('down');
    expect(ready.dependencies.upstreams.numeroinconnu).toMatchObject({
      status: 'degraded',
      circuit: 'closed',
      lastOutcome: { status: 'blocked', reason: 'budget' },
    });

    const metrics = await text(service, '/metrics');
    expect(metrics).toContain('phone_rep_circuit_state{slot="community",upstream="numeroinconnu",state="closed"} 1');
    expect(metrics).not.toMatch(
      /phone_rep_upstream_requests_total\{upstream="numeroinconnu",outcome="blocked",status_code="",reason="budget"\}/,
    );
    const sent =
      /phone_rep_upstream_requests_total\{upstream="numeroinconnu",outcome="response",status_code="200",reason=""\} (\d+)/.exec(
        metrics,
      );
    expect(
      Number(sent?.[1] ?? 0) +
        Number(
          /phone_rep_upstream_requests_total\{upstream="numeroinconnu",outcome="response",status_code="404",reason=""\} (\d+)/.exec(
            metrics,
          )?.[1] ?? 0,
        ),
    ).toBe(2);
  }, 60_000);
});

describe('reliability: a poisoned number', () => {
  it('looked up ten times never opens the breaker: a fresh number is then answered ok', async () => {
    const poisoned = '0611111111';
    sites = await startFakeUpstreamSites({
      scenarios: {
        [poisoned]: {
          tellowsApi: { status: 500 },
          tellowsWeb: { status: 500 },
          numeroinconnu: { status: 500 },
          telguarder: { status: 500 },
        },
      },
      fallback: KNOWN_NUMBER,
    });
    service = await startTestServer({ env: { ...sites.env(), RATE_LIMIT_MAX: '0' } });
    for (let i = 0; i < 10; i += 1) {
      const answer = await lookup(service, poisoned);
      expect(answer.status).toBe(502);
    }
    const metrics = await text(service, '/metrics');
    for (const [slot, upstream] of [
      ['primary', 'tellows'],
      ['community', 'numeroinconnu'],
      ['signals', 'telguarder'],
    ]) {
      expect(metrics).toContain(`phone_rep_circuit_state{slot="${slot}",upstream="${upstream}",state="closed"} 1`);
    }
    const fresh = await lookup(service, '0622222222');
    expect(fresh.status).toBe(200);
    expect(fresh.body.meta?.sources).toMatchObject({
      primary: { status: 'ok' },
      community: { status: 'ok' },
      signals: { status: 'ok' },
    });
  });
});
