// The front cache of finished answers, HTTP caching and API compression, through the real app
// (inject) over the real engine with an injected clock and the real memory cache. Sources are
// in-process stand-ins whose answer each test chooses; nothing here measures time.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { verdictRuleOf } from '../../src/composition.js';
import { createLookupService, type EngineLookupService } from '../../src/domain/lookup/lookup-service.js';
import type { LookupResult } from '../../src/domain/lookup/types.js';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import type { SourceSlot } from '../../src/domain/report.js';
import { buildReport, buildScoreResult } from '../../src/domain/report-builder.js';
import { COMPRESSION_THRESHOLD_BYTES, createFrontCache, type FrontCache } from '../../src/http/front-cache.js';
import { createMemorySourceCache } from '../../src/infra/cache/memory-cache.js';
import { createKeyedHasher } from '../../src/infra/hash.js';
import { createMemoryRateLimitStore } from '../../src/infra/rate-limit/rate-limit-store.js';
import { failed, notFound, ok, type SourcesBySlot } from '../../src/domain/ports/source.js';
import { COMMUNITY_DATA, PRIMARY_DATA, SIGNALS_DATA, START_TIME_MS, TEST_CONFIG } from '../../harness/lookup.js';
import { startTestServer, testNumberingPlan } from '../../harness/servers.js';

type Mode = 'ok' | 'not_found' | 'fail';
const NUMBER = '0612345678';

// Long enough comments that a full report is over the compression threshold.
const LONG_PRIMARY = {
  ...PRIMARY_DATA,
  commentList: Array.from({ length: 6 }, (_, i) => ({
    ...PRIMARY_DATA.commentList[0],
    text: `Démarchage insistant, rappelle sans cesse (${i})`,
    author: 'anon',
    date: '01/02/2026',
    callerType: 'Télémarketing',
  })),
};

interface Rig {
  app: FastifyInstance;
  engine: EngineLookupService;
  front: FrontCache;
  clock: { nowMs: number };
  modes: Record<SourceSlot, Mode>;
  parsed: ParsedPhoneNumber;
  numberHash: string;
  /** Resolves at the next write of any slot. */
  nextWrite(): Promise<void>;
}

let rig: Rig | undefined;
afterEach(async () => {
  rig?.engine.close();
  await rig?.app.close();
  rig = undefined;
});

async function startRig(options: { random?: () => number } = {}): Promise<Rig> {
  const clock = { nowMs: START_TIME_MS };
  const modes: Record<SourceSlot, Mode> = { primary: 'ok', community: 'ok', signals: 'ok' };
  const answer = <T>(slot: SourceSlot, data: T) =>
    modes[slot] === 'ok' ? ok(data) : modes[slot] === 'not_found' ? notFound<T>() : failed<T>('http_5xx');
  const sources = {
    primary: { slot: 'primary', name: 'tellows', lookup: async () => answer('primary', LONG_PRIMARY) },
    community: { slot: 'community', name: 'numeroinconnu', lookup: async () => answer('community', COMMUNITY_DATA) },
    signals: { slot: 'signals', name: 'telguarder', lookup: async () => answer('signals', SIGNALS_DATA) },
  } satisfies SourcesBySlot;
  const hashKey = createKeyedHasher('front-cache-test-secret-0123');
  const front = createFrontCache({ maxBytes: 1024 * 1024 });
  let waiters: (() => void)[] = [];
  const engine = createLookupService({
    sources,
    cache: createMemorySourceCache({ maxEntries: 1000 }),
    hashKey,
    timings: TEST_CONFIG,
    now: () => clock.nowMs,
    random: options.random ?? (() => 0.5),
    // No retries: a failure is final at once (no real backoff waits).
    resilience: { retryMinRemainingMs: 1_000_000 },
    onSlotWritten: (numberHash) => {
      front.invalidate(numberHash);
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
  });
  const config = loadConfig({ HASH_SECRET: 'front-cache-test-secret-0123', RATE_LIMIT_MAX: '0' });
  const parse = createPhoneNumberParser(testNumberingPlan(), 'FR');
  const app = await buildApp({
    config,
    parsePhoneNumber: parse,
    lookupService: engine,
    rateLimitStore: createMemoryRateLimitStore(),
    hashKey,
    verdictRule: verdictRuleOf(config),
    frontCache: front,
    now: () => clock.nowMs,
    webPage: false,
  });
  const parsedResult = parse(NUMBER);
  if (!parsedResult.ok) throw new Error('test number refused');
  rig = {
    app,
    engine,
    front,
    clock,
    modes,
    parsed: parsedResult.value,
    numberHash: hashKey(parsedResult.value.e164),
    nextWrite: () => new Promise((resolve) => waiters.push(resolve)),
  };
  return rig;
}

function get(r: Rig, path: string, headers: Record<string, string> = {}) {
  return r.app.inject({ method: 'GET', url: path, headers });
}

/** What the engine would answer now, rendered as the route renders it (compared as JSON values). */
function expectedBody(route: 'report' | 'score', parsed: ParsedPhoneNumber, result: LookupResult): unknown {
  const built = route === 'report' ? buildReport(parsed, result) : buildScoreResult(parsed, result);
  const data = 'report' in built ? built.report : built.score;
  return JSON.parse(JSON.stringify({ success: true, data, meta: built.meta }));
}

describe('front cache: what it holds', () => {
  it('holds an all-fresh answer and serves it as bytes with a weak ETag and max-age until the first slot goes stale', async () => {
    const r = await startRig();
    const first = await get(r, `/api/phone/${NUMBER}`);
    expect(first.statusCode).toBe(200);
    expect(first.json().meta.sources.primary.cache).toBe('miss');
    // Just fetched: complete and fresh, so cacheable by clients, but not held (its meta says miss).
    expect(first.headers['cache-control']).toBe(`public, max-age=${TEST_CONFIG.cacheTtlSeconds}`);
    expect(first.headers.etag).toBeUndefined();
    expect(r.front.size()).toBe(0);

    r.clock.nowMs += 100_500;
    const second = await get(r, `/api/phone/${NUMBER}`);
    expect(second.json().meta.sources).toMatchObject({
      primary: { cache: 'hit' },
      community: { cache: 'hit' },
      signals: { cache: 'hit' },
    });
    expect(second.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(second.headers['cache-control']).toBe(`public, max-age=${TEST_CONFIG.cacheTtlSeconds - 101}`);
    expect(r.front.size()).toBe(1);
    const third = await get(r, `/api/phone/${NUMBER}`);
    expect(third.body).toBe(second.body);
    expect(third.headers.etag).toBe(second.headers.etag);
  });

  it('never holds a stale answer: no-store, no ETag, nothing kept', async () => {
    const r = await startRig();
    await get(r, `/api/phone/${NUMBER}`);
    r.clock.nowMs += (TEST_CONFIG.cacheTtlSeconds + 1) * 1000;
    r.modes.primary = 'fail';
    r.modes.community = 'fail';
    r.modes.signals = 'fail';
    const stale = await get(r, `/api/phone/${NUMBER}`);
    expect(stale.statusCode).toBe(200);
    expect(stale.json().meta.sources.primary.cache).toBe('stale');
    expect(stale.headers['cache-control']).toBe('no-store');
    expect(stale.headers.etag).toBeUndefined();
    expect(r.front.size()).toBe(0);
  });

  it('never holds a partial answer (one source failed): no-store, no ETag, nothing kept, request after request', async () => {
    const r = await startRig();
    r.modes.signals = 'fail';
    for (let i = 0; i < 3; i += 1) {
      const partial = await get(r, `/api/phone/${NUMBER}/score`);
      expect(partial.statusCode).toBe(200);
      expect(partial.json().meta.sources.signals.status).toBe('error');
      expect(partial.headers['cache-control']).toBe('no-store');
      expect(partial.headers.etag).toBeUndefined();
      expect(r.front.size()).toBe(0);
    }
  });

  it('replaces the entry after a refresh: new fetchedAt, new ETag', async () => {
    // Distinct jitter per slot: primary goes stale first.
    const draws = [0, 1 - 1e-9, 1 - 1e-9];
    let i = 0;
    const r = await startRig({ random: () => draws[i++ % draws.length] ?? 0.5 });
    await get(r, `/api/phone/${NUMBER}`);
    const held = await get(r, `/api/phone/${NUMBER}`);
    const heldEtag = held.headers.etag;
    expect(heldEtag).toBeDefined();
    // Past primary's freshness only: answered stale while one refresh runs.
    r.clock.nowMs += TEST_CONFIG.cacheTtlSeconds * 0.95 * 1000;
    const written = r.nextWrite();
    const stale = await get(r, `/api/phone/${NUMBER}`);
    expect(stale.json().meta.sources.primary.cache).toBe('stale');
    await written;
    expect(r.front.size()).toBe(0);
    const replaced = await get(r, `/api/phone/${NUMBER}`);
    expect(replaced.json().meta.sources.primary).toMatchObject({
      cache: 'hit',
      fetchedAt: new Date(r.clock.nowMs).toISOString(),
    });
    expect(replaced.headers.etag).toBeDefined();
    expect(replaced.headers.etag).not.toBe(heldEtag);
  });

  it('drops the entry when a slot of the number is written', async () => {
    const r = await startRig();
    await get(r, `/api/phone/${NUMBER}`);
    await get(r, `/api/phone/${NUMBER}`);
    expect(r.front.entry(r.numberHash, r.clock.nowMs)).toBeDefined();
    r.front.invalidate(r.numberHash);
    expect(r.front.entry(r.numberHash, r.clock.nowMs)).toBeUndefined();
  });

  it('serves exactly what the engine would build, whatever the freshness states and the clock (property)', async () => {
    // Seeded jitter and a fixed fast-check seed: the same runs every time.
    let seed = 0x2f6b_1e3d;
    const jitter = (): number => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
      return seed / 2 ** 32;
    };
    const r = await startRig({ random: jitter });
    const mode = fc.constantFrom<Mode>('ok', 'ok', 'not_found', 'fail');
    const step = fc.record({
      advanceS: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 0, max: TEST_CONFIG.cacheTtlSeconds * 2 }),
      ),
      modes: fc.record({ primary: mode, community: mode, signals: mode }),
      route: fc.constantFrom<'report' | 'score'>('report', 'score'),
      encoding: fc.constantFrom('', 'br', 'gzip', 'br, gzip'),
    });
    let servedFromFront = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        for (const s of steps) {
          r.clock.nowMs += s.advanceS * 1000;
          Object.assign(r.modes, s.modes);
          const path = s.route === 'report' ? `/api/phone/${NUMBER}` : `/api/phone/${NUMBER}/score`;
          const answer = await get(r, path, s.encoding === '' ? {} : { 'accept-encoding': s.encoding });
          const entry = r.front.entry(r.numberHash, r.clock.nowMs);
          const fresh = r.engine.peekFresh(r.parsed, r.numberHash);
          if (entry !== undefined) {
            // Whatever the front cache holds is what the engine builds now, to the last meta field.
            expect(fresh).toBeDefined();
            if (fresh === undefined) return;
            expect(entry.freshUntilMs).toBe(fresh.freshUntilMs);
            const body = entry[s.route];
            if (body !== undefined)
              expect(JSON.parse(body.identity.toString('utf8'))).toEqual(expectedBody(s.route, r.parsed, fresh.result));
          }
          if (answer.headers.etag !== undefined) {
            servedFromFront += 1;
            const text = decode(answer.rawPayload, answer.headers['content-encoding']);
            const served = JSON.parse(text) as {
              meta: { sources: Record<SourceSlot, { cache: string; status: string }> };
            };
            for (const slot of ['primary', 'community', 'signals'] as const)
              expect(served.meta.sources[slot].cache).toBe('hit');
            if (entry !== undefined && fresh !== undefined)
              expect(served).toEqual(expectedBody(s.route, r.parsed, fresh.result));
          }
        }
      }),
      { numRuns: 40, seed: 20_261_122 },
    );
    // The property was exercised on front-cached answers, not only on built ones.
    expect(servedFromFront).toBeGreaterThan(0);
  });
});

function decode(bytes: Buffer, coding: string | string[] | undefined): string {
  if (coding === 'br') return brotliDecompressSync(bytes).toString('utf8');
  if (coding === 'gzip') return gunzipSync(bytes).toString('utf8');
  return bytes.toString('utf8');
}

describe('compression of API answers', () => {
  it('sends br or gzip from the front cache as negotiated, each decompressing to the identity bytes, with Vary', async () => {
    const r = await startRig();
    await get(r, `/api/phone/${NUMBER}`); // fetched: the next answers are all-fresh hits
    const identity = await get(r, `/api/phone/${NUMBER}`);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding, Origin');
    expect(identity.rawPayload.length).toBeGreaterThanOrEqual(COMPRESSION_THRESHOLD_BYTES);
    const br = await get(r, `/api/phone/${NUMBER}`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept-Encoding, Origin');
    expect(brotliDecompressSync(br.rawPayload).equals(identity.rawPayload)).toBe(true);
    const gzip = await get(r, `/api/phone/${NUMBER}`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).equals(identity.rawPayload)).toBe(true);
    const refused = await get(r, `/api/phone/${NUMBER}`, { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.rawPayload.equals(identity.rawPayload)).toBe(true);
  });

  it('compresses an answer the front cache cannot hold (partial) on the fly, decompressing to the identity bytes', async () => {
    const r = await startRig();
    r.modes.community = 'fail';
    await get(r, `/api/phone/${NUMBER}`); // fetched; the failure is then remembered for this number
    const identity = await get(r, `/api/phone/${NUMBER}`);
    const br = await get(r, `/api/phone/${NUMBER}`, { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['cache-control']).toBe('no-store');
    expect(brotliDecompressSync(br.rawPayload).equals(identity.rawPayload)).toBe(true);
    const gzip = await get(r, `/api/phone/${NUMBER}`, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).equals(identity.rawPayload)).toBe(true);
  });

  it('leaves a body under the threshold uncompressed whatever the client accepts', async () => {
    const r = await startRig();
    const info = await get(r, `/api/phone/${NUMBER}/info`, { 'accept-encoding': 'br, gzip' });
    expect(info.rawPayload.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(info.headers['content-encoding']).toBeUndefined();
    expect(info.headers.vary).toBe('Accept-Encoding, Origin');
  });
});

describe('HTTP caching for clients', () => {
  it('answers 304 with no body to If-None-Match naming the held ETag, and 200 to any other', async () => {
    const r = await startRig();
    await get(r, `/api/phone/${NUMBER}/score`);
    const held = await get(r, `/api/phone/${NUMBER}/score`);
    const etag = held.headers.etag;
    if (typeof etag !== 'string') throw new Error('no ETag on a held answer');
    const again = await get(r, `/api/phone/${NUMBER}/score`, { 'if-none-match': `"other", ${etag}` });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers).toMatchObject({
      etag,
      vary: 'Accept-Encoding, Origin',
      'cache-control': held.headers['cache-control'],
    });
    const strongForm = await get(r, `/api/phone/${NUMBER}/score`, { 'if-none-match': etag.slice(2) });
    expect(strongForm.statusCode).toBe(304);
    const other = await get(r, `/api/phone/${NUMBER}/score`, { 'if-none-match': 'W/"something-else"' });
    expect(other.statusCode).toBe(200);
  });

  it('gives /info a day of max-age and an ETag that 304s, without any lookup', async () => {
    const r = await startRig();
    r.modes.primary = 'fail';
    const info = await get(r, `/api/phone/${NUMBER}/info`);
    expect(info.headers['cache-control']).toBe('public, max-age=86400');
    const etag = info.headers.etag;
    if (typeof etag !== 'string') throw new Error('no ETag on /info');
    const again = await get(r, `/api/phone/${NUMBER}/info`, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(r.engine.peekFresh(r.parsed, r.numberHash)).toBeUndefined();
  });

  it('says no-store on errors: an invalid number and all sources failed', async () => {
    const r = await startRig();
    const invalid = await get(r, '/api/phone/12ab');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers['cache-control']).toBe('no-store');
    r.modes.primary = 'fail';
    r.modes.community = 'fail';
    r.modes.signals = 'fail';
    const allFailed = await get(r, `/api/phone/${NUMBER}`, { 'accept-encoding': 'br' });
    expect(allFailed.statusCode).toBe(502);
    expect(allFailed.headers['cache-control']).toBe('no-store');
    expect(allFailed.headers['content-encoding']).toBeUndefined();
    expect(allFailed.headers.etag).toBeUndefined();
  });
});

describe('hooks per request', () => {
  it('runs one onRequest and one onResponse hook on each phone GET route, with rate limit, shedding and CORS all on', async () => {
    const server = await startTestServer({ env: { RATE_LIMIT_MAX: '30' } });
    try {
      const lines = server.app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n');
      // The tree prints the sub-routes under their parent: `/score (GET)`, `/info (GET)`.
      for (const route of ['api/phone/:number (GET)', '/score (GET)', '/info (GET)']) {
        const start = lines.findIndex((line) => line.trimEnd().endsWith(route));
        expect(start).toBeGreaterThanOrEqual(0);
        const hooks: string[] = [];
        for (let i = start + 1; i < lines.length && (lines[i] ?? '').includes('•'); i += 1)
          hooks.push(/\((on\w+)\)/.exec(lines[i] ?? '')?.[1] ?? '?');
        expect(hooks).toEqual(['onRequest', 'onResponse']);
      }
      // The merged hook still does each concern's work: the rate-limit headers and CORS are there.
      const answer = await server.app.inject({
        method: 'GET',
        url: '/api/phone/12ab',
        headers: { origin: 'https://crm.example.org' },
      });
      expect(answer.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
      expect(answer.headers['access-control-allow-origin']).toBe('*');
      expect(answer.headers['x-request-id']).toBeDefined();
    } finally {
      await server.close();
    }
  });
});
