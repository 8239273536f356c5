import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer, type ReceivedRequest } from '../../harness/loopback.js';
import { testNumberingPlan } from '../../harness/servers.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../config/config.js';
import { createServiceDependencies, type ServiceDependencies } from '../composition.js';
import { createHttpClient, type ClosableHttpClient } from '../infra/http/http-client.js';
import { createScheduledCanary, type CanaryTimers } from './canary.js';
import { createUpstreamFetchers } from './common/wiring.js';
import { telguarderUpstream } from './telguarder/telguarder-upstream.js';

const fixture = (path: string): Buffer => readFileSync(new URL(`./${path}`, import.meta.url));

function serveHtml(response: ServerResponse, body: Buffer): void {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(body);
}

const servers: LoopbackServer[] = [];
let deps: ServiceDependencies | undefined;
let client: ClosableHttpClient | undefined;

afterEach(async () => {
  await deps?.close();
  deps = undefined;
  await client?.close();
  client = undefined;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Stand-ins for the three sites; telguarder's answer is switchable (its page, a challenge, a 429). */
async function startSites() {
  let telguarderAnswer: 'page' | 'challenge' | 'too_many' = 'page';
  const tellows = await startLoopbackServer((_request, response) =>
    serveHtml(response, fixture('tellows/fixtures/page-unknown.html')),
  );
  const numeroinconnu = await startLoopbackServer((_request, response) =>
    serveHtml(response, fixture('numeroinconnu/fixtures/unknown.html')),
  );
  const telguarder = await startLoopbackServer((request: ReceivedRequest, response) => {
    if (telguarderAnswer === 'too_many') {
      response.writeHead(429, { 'retry-after': '600' }).end();
      return;
    }
    if (request.method === 'POST') {
      response.writeHead(303, { location: '/fr/numero/page' }).end();
      return;
    }
    serveHtml(
      response,
      fixture(`telguarder/fixtures/${telguarderAnswer === 'page' ? 'normal.html' : 'challenge.html'}`),
    );
  });
  servers.push(tellows, numeroinconnu, telguarder);
  return {
    env: { TELLOWS_WEB_URL: tellows.url, NUMEROINCONNU_URL: numeroinconnu.url, TELGUARDER_URL: telguarder.url },
    telguarder,
    answer(next: typeof telguarderAnswer) {
      telguarderAnswer = next;
    },
  };
}

async function startService(env: Record<string, string>, canaryNumbers: string | null = '0612345678') {
  const numbers = canaryNumbers === null ? {} : { CANARY_NUMBERS: canaryNumbers };
  const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', CANARY_INTERVAL_S: '3600', ...numbers, ...env });
  deps = await createServiceDependencies(config, undefined, { numberingPlan: testNumberingPlan() });
  const app = await buildApp({ ...deps.app });
  const canary = deps.canary;
  if (canary === undefined) throw new Error('CANARY_INTERVAL_S > 0 must start the scheduled canary');
  return {
    canary,
    metricsText: async () => (await deps?.metrics?.registry.metrics()) ?? '',
    ready: async () => {
      const response = await app.inject({ method: 'GET', url: '/health/ready' });
      return response.json<{
        status: string;
        dependencies: { upstreams: Record<string, { status: string; reason?: string }> };
      }>();
    },
  };
}

const PANEL = 'phone_rep_canary_marker_missing{upstream="telguarder",marker="div.ai-number-stats-panel"}';

describe('the scheduled canary inside the service (CANARY_INTERVAL_S)', () => {
  it('is off by default', async () => {
    const sites = await startSites();
    deps = await createServiceDependencies(
      loadConfig({ HASH_SECRET: 'test-secret-0123456789', ...sites.env }),
      undefined,
      {
        numberingPlan: testNumberingPlan(),
      },
    );
    expect(deps.canary).toBeUndefined();
    expect(await deps.metrics?.registry.metrics()).not.toContain('phone_rep_canary_marker_missing{');
  });

  it('flips the marker gauge to 1 and readiness to degraded "layout changed" when a required marker goes missing, and back when it returns', async () => {
    const sites = await startSites();
    const service = await startService(sites.env);

    await service.canary.runRound();
    expect(await service.metricsText()).toContain(`${PANEL} 0`);
    expect(await service.metricsText()).toMatch(
      /phone_rep_canary_last_run_timestamp_seconds\{upstream="telguarder"\} \d+/,
    );
    expect((await service.ready()).dependencies.upstreams.telguarder).toMatchObject({ status: 'ok' });
    expect((await service.ready()).dependencies.upstreams.telguarder?.reason).toBeUndefined();

    sites.answer('challenge');
    await service.canary.runRound();
    expect(await service.metricsText()).toContain(`${PANEL} 1`);
    const degraded = await service.ready();
    expect(degraded.dependencies.upstreams.telguarder).toEqual(
      expect.objectContaining({ status: 'degraded', reason: 'layout changed' }),
    );
    expect(degraded.status).toBe('degraded');
    expect(degraded.dependencies.upstreams.numeroinconnu?.status).toBe('ok');

    sites.answer('page');
    await service.canary.runRound();
    expect(await service.metricsText()).toContain(`${PANEL} 0`);
    expect((await service.ready()).dependencies.upstreams.telguarder).toMatchObject({ status: 'ok' });
  });

  it('checks the two default fiction numbers when CANARY_NUMBERS is unset', async () => {
    const sites = await startSites();
    const service = await startService(sites.env, null);
    await service.canary.runRound();
    expect(
      sites.telguarder.received.filter((request) => request.method === 'POST').map((request) => request.body),
    ).toEqual(['q=0639980000', 'q=0199000000']);
    expect(await service.metricsText()).toContain(`${PANEL} 0`);
  });

  it('is stopped as soon as shutdown begins: a round asked for afterwards calls no site, while lookups still can', async () => {
    const sites = await startSites();
    const service = await startService(sites.env);
    deps?.beginShutdown();
    await service.canary.runRound();
    expect(sites.telguarder.received).toHaveLength(0);
    const parsed = deps?.app.parsePhoneNumber('0612345679');
    if (parsed?.ok !== true) throw new Error('test number must parse');
    expect((await deps?.app.lookupService.lookup(parsed.value))?.signals.status).toBe('ok');
    expect(sites.telguarder.received).toHaveLength(2);
  });

  it('never shows the canary numbers in its metrics', async () => {
    const sites = await startSites();
    const service = await startService(sites.env);
    await service.canary.runRound();
    expect(await service.metricsText()).not.toMatch(/612345678/);
  });

  it("spends the lookups' budget and honours their pause: after a 429 it does not call the site", async () => {
    const sites = await startSites();
    const service = await startService(sites.env);
    await service.canary.runRound();
    const before = sites.telguarder.received.length;

    sites.answer('too_many');
    const parsed = deps?.app.parsePhoneNumber('0612345679');
    if (parsed?.ok !== true) throw new Error('test number must parse');
    expect((await deps?.app.lookupService.lookup(parsed.value))?.signals).toMatchObject({ status: 'blocked' });
    const afterLookup = sites.telguarder.received.length;
    expect(afterLookup).toBe(before + 1);

    await service.canary.runRound();
    // Paused by the lookup's 429: the canary's own request never left, and a round that
    // judged no page leaves the marker verdict as it was.
    expect(sites.telguarder.received.length).toBe(afterLookup);
    expect(await service.metricsText()).toContain(`${PANEL} 0`);
  });
});

describe('the canary schedule', () => {
  /** Timers under the test's hand: `fire()` runs the armed callback. */
  function manualTimers() {
    const armed: Array<{ callback: () => void; ms: number; unrefCalled: boolean; cleared: boolean }> = [];
    const timers: CanaryTimers = {
      setTimeout(callback, ms) {
        const entry = { callback, ms, unrefCalled: false, cleared: false };
        armed.push(entry);
        const handle = {
          unref: () => {
            entry.unrefCalled = true;
          },
          entry,
        };
        return handle;
      },
      clearTimeout(handle) {
        const entry = armed.find((candidate) => (handle as { entry?: unknown }).entry === candidate);
        if (entry) entry.cleared = true;
      },
    };
    return { timers, armed };
  }

  /** A telguarder stand-in that holds each search until the test releases it. */
  async function startHeldSite() {
    const held: ServerResponse[] = [];
    let arrived: (() => void) | undefined;
    const server = await startLoopbackServer((request, response) => {
      if (request.method !== 'POST') {
        serveHtml(response, fixture('telguarder/fixtures/normal.html'));
        return;
      }
      held.push(response);
      arrived?.();
    });
    servers.push(server);
    return {
      server,
      nextArrival: () =>
        new Promise<void>((resolve) => {
          arrived = resolve;
        }),
      release() {
        for (const response of held.splice(0)) response.writeHead(303, { location: '/fr/numero/page' }).end();
      },
    };
  }

  async function scheduleOn(site: { server: LoopbackServer }) {
    client = createHttpClient();
    const config = loadConfig({ TELGUARDER_URL: site.server.url, CANARY_NUMBERS: '0612345678' });
    const fetchers = createUpstreamFetchers(telguarderUpstream, config, { client });
    const { timers, armed } = manualTimers();
    const canary = createScheduledCanary({
      config,
      upstreams: [telguarderUpstream],
      fetchersByUpstream: new Map([[telguarderUpstream.name, fetchers]]),
      intervalMs: 60_000,
      timers,
    });
    return { canary, armed };
  }

  it("arms an unref'd timer of the interval, and the next one only once the round has ended", async () => {
    const site = await startHeldSite();
    const { canary, armed } = await scheduleOn(site);
    canary.start();
    expect(armed).toHaveLength(1);
    expect(armed[0]).toMatchObject({ ms: 60_000, unrefCalled: true });

    const arrival = site.nextArrival();
    armed[0]?.callback();
    await arrival;
    // The round is in flight: no second timer yet, and a direct trigger joins the same round.
    expect(armed).toHaveLength(1);
    const joined = canary.runRound();
    site.release();
    await joined;
    expect(site.server.received.filter((request) => request.method === 'POST')).toHaveLength(1);
    // The timer's own continuation (registered before ours) has armed the next round.
    expect(armed).toHaveLength(2);
    expect(armed[1]).toMatchObject({ ms: 60_000, unrefCalled: true });
    await canary.stop();
    expect(armed[1]?.cleared).toBe(true);
  });

  it('on stop, cancels the running round and arms no further timer', async () => {
    const site = await startHeldSite();
    const { canary, armed } = await scheduleOn(site);
    canary.start();
    const arrival = site.nextArrival();
    armed[0]?.callback();
    await arrival;
    await canary.stop();
    expect(armed).toHaveLength(1);
    expect(canary.layoutChanged('telguarder')).toBe(false);
    // Without the cancellation, stop() would wait for the canary's 15 s deadline: this test's
    // own limit is shorter than that on purpose.
  }, 10_000);
});
