// The spelling attack of issue 20, replayed against the real app over HTTP with the real
// adapters and fake upstream sites on loopback: `+330612000777` (calling code, then the national
// number with its trunk 0) used to be described as a foreign-style number with the same e164,
// the sources were not asked, and `not_found` was cached under that e164 for everyone. Now
// every spelling is read as the national number, so the attacker only ever gets (and caches)
// the truth, and the victim's answer is the one an untouched instance gives: same score, same
// hints, same sources. With one instance, and with two sharing real Redis.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { insideLegalHoursClock } from '../../harness/legal-hours.js';
import { loadConfig } from '../../src/config/config.js';
import { createServiceDependencies, type ServiceDependencies } from '../../src/composition.js';
import type { FrontCache } from '../../src/http/front-cache.js';
import { connectAdmin, deleteKeys, listKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { testNumberingPlan } from '../../harness/servers.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

const VICTIM = '0612000777';
const NPV_VICTIM = '0162005678';

/** What an attacker sends instead of the number: every spelling that names it with its trunk 0. */
function attackerSpellings(national: string): string[] {
  const significant = national.slice(1);
  const spaced = national.replace(/(\d\d)(?=\d)/g, '$1 ');
  return [
    `+33${national}`,
    `%2B33${national}`,
    `%2B33%20${national}`,
    encodeURIComponent(`0033 ${national}`),
    `0033${national}`,
    encodeURIComponent(`+33 ${spaced}`),
    encodeURIComponent(`+33 (0)${significant}`),
    encodeURIComponent(`+33.${national}`),
    `33${national}`,
    `tel:+33${national};npdi`,
    encodeURIComponent(`sip:+33${national}@evil.example;user=phone`),
    `sip:0033${national}@evil.example`,
  ];
}

interface Instance {
  baseUrl: string;
  app: FastifyInstance;
  deps: ServiceDependencies;
  frontCache: FrontCache;
}

interface Answer {
  status: number;
  cacheControl: string | null;
  body: {
    data?: { number?: string; score?: number | null };
    meta?: { sources: Record<string, { status: string; cache: string }>; hints: string[]; scoreSource?: string };
  };
}

const started: Instance[] = [];
const prefix = uniqueKeyPrefix('spelling');
const admin = connectAdmin();
let sites: FakeUpstreamSites;

beforeAll(async () => {
  sites = await startFakeUpstreamSites({ scenarios: { [VICTIM]: KNOWN_NUMBER, [NPV_VICTIM]: KNOWN_NUMBER } });
});

afterAll(async () => {
  for (const instance of started) {
    await instance.app.close();
    await instance.deps.close();
  }
  await sites.close();
  await deleteKeys(admin, prefix);
  admin.disconnect();
});

/** The app with its defaults (no tellows key: the adapters that need none), on loopback. */
async function startInstance(env: Record<string, string> = {}): Promise<Instance> {
  const config = loadConfig({
    HASH_SECRET: 'spelling-test-secret-0123456789',
    RATE_LIMIT_MAX: '0',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...sites.env(),
    ...env,
  });
  const deps = await createServiceDependencies(config, undefined, {
    numberingPlan: testNumberingPlan(),
    now: insideLegalHoursClock(),
  });
  const app = await buildApp({ ...deps.app });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const { frontCache } = deps.app;
  if (frontCache === undefined) throw new Error('the app runs without its front cache');
  const instance = { baseUrl: `http://127.0.0.1:${address.port}`, app, deps, frontCache };
  started.push(instance);
  if (config.REDIS_URL === TEST_REDIS_URL) await waitFor(() => deps.redis?.health() === 'ok');
  return instance;
}

async function get(instance: Instance, path: string): Promise<Answer> {
  const response = await fetch(`${instance.baseUrl}${path}`);
  return {
    status: response.status,
    cacheControl: response.headers.get('cache-control'),
    body: (await response.json()) as Answer['body'],
  };
}

/** What the answer tells about the number: everything but the per-request `fetchedAt` and `cache`. */
function told(answer: Answer): unknown {
  const meta = answer.body.meta;
  return {
    status: answer.status,
    data: answer.body.data,
    hints: meta?.hints,
    scoreSource: meta?.scoreSource,
    sources: Object.fromEntries(Object.entries(meta?.sources ?? {}).map(([slot, outcome]) => [slot, outcome.status])),
  };
}

/** The victims' answers from an instance no attacker has touched. */
async function baselineOf(): Promise<Map<string, Answer>> {
  const control = await startInstance();
  const answers = new Map<string, Answer>();
  for (const national of [VICTIM, NPV_VICTIM]) {
    for (const route of ['', '/score'])
      answers.set(`${national}${route}`, await get(control, `/api/phone/${national}${route}`));
  }
  return answers;
}

describe('the spelling attack of issue 20', () => {
  let baseline: Map<string, Answer>;
  beforeAll(async () => {
    baseline = await baselineOf();
  });

  it('gives the victims real facts in the untouched baseline: a score, and the NPV hint', () => {
    expect(told(baseline.get(VICTIM) as Answer)).toMatchObject({
      status: 200,
      data: { number: VICTIM, sources: { primary: { score: 8 } } },
      sources: { primary: 'ok', community: 'ok', signals: 'ok' },
    });
    expect(told(baseline.get(`${NPV_VICTIM}/score`) as Answer)).toMatchObject({
      status: 200,
      data: { number: NPV_VICTIM, score: 8, risk: 'suspicious' },
      hints: ['npv'],
    });
  });

  it('one instance: the attacker is told the truth, the victim is told what an untouched instance says, and the sources were asked once', async () => {
    const instance = await startInstance();
    for (const national of [VICTIM, NPV_VICTIM]) {
      const before = sites.total();
      for (const spelling of attackerSpellings(national)) {
        for (const route of ['', '/score']) {
          const answer = await get(instance, `/api/phone/${spelling}${route}`);
          expect(told(answer), `${spelling}${route}`).toEqual(told(baseline.get(`${national}${route}`) as Answer));
        }
      }
      // Every spelling shared one cache entry: the sites were asked once, for the national number.
      expect(sites.total() - before).toBe(3);
      for (const route of ['', '/score']) {
        const victim = await get(instance, `/api/phone/${national}${route}`);
        expect(told(victim)).toEqual(told(baseline.get(`${national}${route}`) as Answer));
        expect(victim.cacheControl).toMatch(/^public, max-age=\d+$/);
        expect(Object.values(victim.body.meta?.sources ?? {}).map((slot) => slot.cache)).toEqual(['hit', 'hit', 'hit']);
      }
      expect(sites.total() - before).toBe(3);
    }
  });

  it('one instance: the spelling memo maps every spelling to the one number it names, never to another', async () => {
    const instance = await startInstance();
    for (const national of [VICTIM, NPV_VICTIM]) {
      await get(instance, `/api/phone/${national}/info`);
      for (const spelling of attackerSpellings(national)) await get(instance, `/api/phone/${spelling}/info`);
    }
    const victim = instance.frontCache.numberOf(VICTIM);
    const npv = instance.frontCache.numberOf(NPV_VICTIM);
    expect(victim?.parsed.number).toBe(VICTIM);
    expect(npv?.parsed.phoneInfo.isNPV).toBe(true);
    expect(victim?.numberHash).not.toBe(npv?.numberHash);
    for (const [national, memo] of [
      [VICTIM, victim],
      [NPV_VICTIM, npv],
    ] as const) {
      for (const spelling of attackerSpellings(national)) {
        // The memo is keyed by the segment as the router decoded it.
        const remembered = instance.frontCache.numberOf(decodeURIComponent(spelling));
        // Spellings longer than a number are parsed each time, not remembered.
        if (decodeURIComponent(spelling).length > 32) {
          expect(remembered).toBeUndefined();
          continue;
        }
        expect(remembered?.parsed, spelling).toEqual(memo?.parsed);
        expect(remembered?.numberHash, spelling).toBe(memo?.numberHash);
      }
    }
  });

  describe('two instances sharing real Redis', () => {
    it('an attack on one leaves the victim told the truth on the other, from the cache the attack filled', async () => {
      const first = await startInstance({ REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
      const second = await startInstance({ REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
      for (const national of [VICTIM, NPV_VICTIM]) {
        const cached = (await listKeys(admin, `${prefix}cache:`)).length;
        for (const spelling of attackerSpellings(national)) {
          for (const route of ['', '/score'])
            expect(told(await get(first, `/api/phone/${spelling}${route}`))).toEqual(
              told(baseline.get(`${national}${route}`) as Answer),
            );
        }
        // One entry per source for the number, whatever the spelling.
        await waitFor(async () => (await listKeys(admin, `${prefix}cache:`)).length >= cached + 3);
        const requests = sites.total();
        for (const route of ['', '/score']) {
          const victim = await get(second, `/api/phone/${national}${route}`);
          expect(told(victim)).toEqual(told(baseline.get(`${national}${route}`) as Answer));
          expect(Object.values(victim.body.meta?.sources ?? {}).map((slot) => slot.cache)).toEqual([
            'hit',
            'hit',
            'hit',
          ]);
        }
        expect(sites.total()).toBe(requests);
        expect((await listKeys(admin, `${prefix}cache:`)).length).toBe(cached + 3);
      }
    });

    it('an attack after the victim was answered changes nothing on either instance', async () => {
      const first = await startInstance({ REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
      const second = await startInstance({ REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
      const keys = await listKeys(admin, `${prefix}cache:`);
      for (const national of [VICTIM, NPV_VICTIM]) {
        expect(told(await get(second, `/api/phone/${national}`))).toEqual(told(baseline.get(national) as Answer));
        for (const spelling of attackerSpellings(national)) await get(first, `/api/phone/${spelling}/score`);
        for (const instance of [first, second]) {
          for (const route of ['', '/score'])
            expect(told(await get(instance, `/api/phone/${national}${route}`))).toEqual(
              told(baseline.get(`${national}${route}`) as Answer),
            );
        }
      }
      expect((await listKeys(admin, `${prefix}cache:`)).sort()).toEqual(keys.sort());
    });
  });
});
