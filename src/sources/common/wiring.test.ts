import { afterEach, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { startLoopbackServer, type LoopbackServer } from '../../../harness/loopback.js';
import { testNumberingPlan } from '../../../harness/servers.js';
import { loadConfig } from '../../config/config.js';
import { createServiceDependencies, type ServiceDependencies } from '../../composition.js';
import { UPSTREAMS, UPSTREAMS_BY_SLOT } from '../upstreams.js';
import { buildSource, concurrencyOf, createUpstreamFetchers } from './wiring.js';
import { belgianNumber, frenchNumber } from '../../../harness/lookup.js';
import { createHttpClient } from '../../infra/http/http-client.js';

/**
 * A site that holds every request until told to answer, and records how many were open at once.
 * `whenOpen(n)` resolves as soon as n requests are held at the same time.
 */
async function startHoldingSite() {
  let open = 0;
  let maxOpen = 0;
  let answering = false;
  const held: ServerResponse[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const answer = (response: ServerResponse) => {
    open -= 1;
    response.writeHead(404).end();
  };
  const server = await startLoopbackServer((_request, response) => {
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    if (answering) {
      answer(response);
      return;
    }
    held.push(response);
    for (const waiter of waiters.filter((w) => open >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  return {
    server,
    maxOpen: () => maxOpen,
    whenOpen: (count: number) =>
      new Promise<void>((resolve) => {
        if (open >= count) resolve();
        else waiters.push({ count, resolve });
      }),
    /** Answers every held request (404: not found) and every later one at once. */
    releaseAll() {
      answering = true;
      for (const response of held.splice(0)) answer(response);
    },
  };
}

const servers: LoopbackServer[] = [];
let deps: ServiceDependencies | undefined;

afterEach(async () => {
  await deps?.close();
  deps = undefined;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('coverage: each description’s covers(number, config)', () => {
  const overseas = { ...frenchNumber('0692123456'), regionCode: 'RE' };
  it.each([
    ['tellows, no key', UPSTREAMS_BY_SLOT.primary, {}, [true, true, false]],
    ['tellows, with a partner key', UPSTREAMS_BY_SLOT.primary, { TELLOWS_API_KEY: 'k' }, [true, true, true]],
    ['numeroinconnu', UPSTREAMS_BY_SLOT.community, { TELLOWS_API_KEY: 'k' }, [true, true, false]],
    ['telguarder', UPSTREAMS_BY_SLOT.signals, { TELLOWS_API_KEY: 'k' }, [true, true, false]],
  ] as const)('%s covers French, overseas French and foreign numbers: %j', (_name, description, config, expected) => {
    expect(
      [frenchNumber('0612345678'), overseas, belgianNumber()].map((number) => description.covers(number, config)),
    ).toEqual(expected);
  });

  it('answers for the default config (no key) when none is given', () => {
    expect(UPSTREAMS.map((description) => description.covers(belgianNumber()))).toEqual([false, false, false]);
  });

  it('reaches the engine through the built source, under the config it was built with', async () => {
    const client = createHttpClient();
    try {
      for (const [config, expected] of [
        [loadConfig({ HASH_SECRET: 'test-secret-0123456789' }), false],
        [loadConfig({ HASH_SECRET: 'test-secret-0123456789', TELLOWS_API_KEY: 'k' }), true],
      ] as const) {
        const description = UPSTREAMS_BY_SLOT.primary;
        const source = buildSource(description, config, createUpstreamFetchers(description, config, { client }), {});
        expect(source.covers?.(belgianNumber())).toBe(expected);
        expect(source.covers?.(frenchNumber('0612345678'))).toBe(true);
        expect([source.slot, source.name]).toEqual(['primary', 'tellows']);
      }
    } finally {
      await client.close();
    }
  });
});

describe('upstream descriptions', () => {
  it('describe the three upstreams in slot order, each in its own slot', () => {
    expect(UPSTREAMS.map((upstream) => [upstream.slot, upstream.name])).toEqual([
      ['primary', 'tellows'],
      ['community', 'numeroinconnu'],
      ['signals', 'telguarder'],
    ]);
  });

  it('cap the community sites at two requests in flight and leave tellows at UPSTREAM_CONCURRENCY', () => {
    const config = loadConfig({ UPSTREAM_CONCURRENCY: '8' });
    expect(concurrencyOf(UPSTREAMS_BY_SLOT.community, config)).toBe(2);
    expect(concurrencyOf(UPSTREAMS_BY_SLOT.signals, config)).toBe(2);
    expect(concurrencyOf(UPSTREAMS_BY_SLOT.primary, config)).toBe(8);
    expect(concurrencyOf(UPSTREAMS_BY_SLOT.signals, loadConfig({ UPSTREAM_CONCURRENCY: '1' }))).toBe(1);
  });
});

describe('the service built by createServiceDependencies (the production path)', () => {
  it('never has more than two requests in flight to numeroinconnu or telguarder while many numbers are looked up at once', async () => {
    const tellows = await startHoldingSite();
    const numeroinconnu = await startHoldingSite();
    const telguarder = await startHoldingSite();
    servers.push(tellows.server, numeroinconnu.server, telguarder.server);
    const config = loadConfig({
      HASH_SECRET: 'test-secret-0123456789',
      TELLOWS_WEB_URL: tellows.server.url,
      NUMEROINCONNU_URL: numeroinconnu.server.url,
      TELGUARDER_URL: telguarder.server.url,
      UPSTREAM_CONCURRENCY: '8',
      TELLOWS_RPM: '1000',
      NUMEROINCONNU_RPM: '1000',
      TELGUARDER_RPM: '1000',
      SOURCE_TIMEOUT_MS: '30000',
      LOOKUP_TIMEOUT_MS: '30000',
      METRICS_ENABLED: 'false',
    });
    deps = await createServiceDependencies(config, undefined, { numberingPlan: testNumberingPlan() });
    const { parsePhoneNumber, lookupService } = deps.app;
    const numbers = Array.from({ length: 8 }, (_, index) => {
      const parsed = parsePhoneNumber(`0612345${String(index).padStart(3, '0')}`);
      if (!parsed.ok) throw new Error(parsed.reason);
      return parsed.value;
    });

    const lookups = Promise.all(numbers.map((number) => lookupService.lookup(number)));
    // Every lookup has reached the upstreams once tellows (capped at 8) holds all eight
    // requests; the two community sites must by then hold their two each and no more.
    await Promise.all([tellows.whenOpen(8), numeroinconnu.whenOpen(2), telguarder.whenOpen(2)]);
    expect(numeroinconnu.server.received).toHaveLength(2);
    expect(telguarder.server.received).toHaveLength(2);
    for (const site of [tellows, numeroinconnu, telguarder]) site.releaseAll();

    const results = await lookups;
    expect(results.map((result) => [result.community.status, result.signals.status])).toEqual(
      numbers.map(() => ['not_found', 'not_found']),
    );
    expect(tellows.maxOpen()).toBe(8);
    expect(numeroinconnu.maxOpen()).toBe(2);
    expect(telguarder.maxOpen()).toBe(2);
    expect(numeroinconnu.server.received).toHaveLength(8);
    expect(telguarder.server.received.map((request) => `${request.method} ${request.url}`)).toEqual(
      numbers.map(() => 'POST /fr/search'),
    );
  });
});
