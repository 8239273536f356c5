// A deadline the caller chooses, through the real service (real adapters, real fetchers,
// coalescer and cache as composed for production) against upstream sites on loopback that
// answer slower than the wait (issue 21). The engine is called the way the phone routes call it
// with `?wait` (`lookup(number, undefined, hash, { waitMs })`); the follow-up is a real HTTP
// request to the in-process app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createServiceDependencies, type ServiceDependencies } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import { buildReport } from '../../src/domain/report-builder.js';
import { SOURCE_SLOTS } from '../../src/domain/report.js';
import { waitFor } from '../../harness/lookup.js';
import { testNumberingPlan } from '../../harness/servers.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

// Every site answers after UPSTREAM_DELAY_MS (telguarder's search and page: twice that), well
// within SOURCE_TIMEOUT_MS; the caller waits WAIT_MS.
const UPSTREAM_DELAY_MS = 1500;
const WAIT_MS = 200;

describe('a lookup with waitMs against upstreams slower than the wait', () => {
  let sites: FakeUpstreamSites;
  let deps: ServiceDependencies;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let baseUrl: string;
  let number: ParsedPhoneNumber;

  beforeAll(async () => {
    sites = await startFakeUpstreamSites({ scenarios: { '0612345678': KNOWN_NUMBER }, delayMs: UPSTREAM_DELAY_MS });
    const config = loadConfig({
      HASH_SECRET: 'test-secret-0123456789',
      ...sites.env(),
      RATE_LIMIT_MAX: '0',
      SOURCE_TIMEOUT_MS: '6000',
      LOOKUP_TIMEOUT_MS: '7000',
    });
    deps = await createServiceDependencies(config, undefined, { numberingPlan: testNumberingPlan() });
    app = await buildApp({ ...deps.app });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no address');
    baseUrl = `http://127.0.0.1:${address.port}`;
    const parsed = deps.app.parsePhoneNumber('0612345678');
    if (!parsed.ok) throw new Error(parsed.reason);
    number = parsed.value;
  });
  afterAll(async () => {
    await app.close();
    await deps.close();
    await sites.close();
  });

  it('answers a burst by the deadline with every slot pending, asks each site once, and the next request is served from the cache it filled', async () => {
    const { lookupService } = deps.app;
    const startedAt = performance.now();
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => lookupService.lookup(number, { waitMs: WAIT_MS })),
    );
    const elapsedMs = performance.now() - startedAt;
    // The deadline is the behaviour under test: answered long before any site could answer
    // (UPSTREAM_DELAY_MS), with a second of slack over the wait for a loaded machine.
    expect(elapsedMs).toBeLessThan(WAIT_MS + 1000);
    for (const result of burst) {
      for (const slot of SOURCE_SLOTS) expect(result[slot]).toEqual({ status: 'pending', data: null });
      const built = buildReport(number, result);
      expect(built.allSourcesFailed).toBe(false);
      expect(built.meta.sources.primary).toEqual({ status: 'pending' });
    }

    // The fetches went on in the background: the cache holds every slot once they end.
    await waitFor(() => lookupService.peekFresh?.(number) !== undefined, 15_000);
    const response = await fetch(`${baseUrl}/api/phone/0612345678/score`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { score: number | null };
      meta: { sources: Record<string, { status: string; cache?: string }> };
    };
    expect(body.data.score).toBe(8);
    for (const slot of SOURCE_SLOTS) expect(body.meta.sources[slot]).toMatchObject({ status: 'ok', cache: 'hit' });
    expect(response.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    // One upstream request per site for the whole burst and the follow-up: coalescing kept.
    expect([sites.count('tellowsWeb'), sites.count('numeroinconnu'), sites.count('telguarder')]).toEqual([1, 1, 1]);
    // Callers that stopped waiting cancelled nothing, and no breaker counted a failure.
    const readiness = await deps.readiness.evaluate();
    expect(Object.keys(readiness.dependencies.upstreams)).toHaveLength(3);
    for (const upstream of Object.values(readiness.dependencies.upstreams)) {
      expect(upstream.circuit).toBe('closed');
      expect(upstream.lastOutcome).toMatchObject({ status: 'ok' });
    }
  });
});
