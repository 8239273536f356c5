// Builds a lookup service over three fake upstreams on loopback, with a controllable clock, for
// the engine's tests. Every test gets fresh servers, a fresh cache and fresh breakers.
import { createLookupService, type EngineLookupService, type LookupTimings, type LookupServiceOptions, type SourceOutcomeEvent } from '../../src/domain/lookup/lookup-service.js';
import type { CommunityData, PrimaryData, SignalsData, SourceSlot } from '../../src/domain/report.js';
import { createMemorySourceCache } from '../../src/infra/cache/memory-cache.js';
import type { CachedSourceResult, SourceResultCache } from '../../src/domain/ports/source-cache.js';
import { createKeyedHasher } from '../../src/infra/hash.js';
import { startFakeUpstream, type FakeUpstream } from './loopback.js';
import { createLoopbackSource, type LoopbackSource } from './loopback-source.js';

export const PRIMARY_DATA: PrimaryData = {
  score: 7,
  searches: 120,
  commentsCount: 1,
  commentList: [{ author: 'anon', text: 'Démarchage insistant', date: '01/02/2026', callerType: 'Télémarketing' }],
};
export const COMMUNITY_DATA: CommunityData = {
  dangerPercent: 80,
  visits: 300,
  commentsCount: 1,
  topCategory: 'Démarchage',
  lastCommentDate: '02/02/2026',
  commentList: [{ text: 'Appelle tous les jours', date: '02/02/2026', category: 'Démarchage' }],
};
export const SIGNALS_DATA: SignalsData = {
  spamScore: 90,
  reportsCount: 14,
  callerType: 'Spam',
  commentList: [{ text: 'Robot', date: '03/02/2026', callerType: 'Spam' }],
};

export const TEST_CONFIG: LookupTimings = {
  sourceTimeoutMs: 300,
  lookupTimeoutMs: 500,
  cacheTtlSeconds: 600,
  notFoundTtlSeconds: 60,
  staleSeconds: 3600,
};

export const START_TIME_MS = Date.parse('2026-03-01T12:00:00.000Z');

/** A cache that remembers every key written, to check keys never hold a number. */
export interface RecordingCache extends SourceResultCache {
  readonly keysWritten: string[];
}

function createRecordingCache(): RecordingCache {
  const inner = createMemorySourceCache({ maxEntries: 10_000 });
  const keysWritten: string[] = [];
  return {
    keysWritten,
    get: (key) => inner.get(key),
    set: (key: string, value: CachedSourceResult, ttlSeconds: number) => {
      keysWritten.push(key);
      return inner.set(key, value, ttlSeconds);
    },
  };
}

export interface EngineHarness {
  upstreams: Record<SourceSlot, FakeUpstream>;
  sources: { primary: LoopbackSource<'primary'>; community: LoopbackSource<'community'>; signals: LoopbackSource<'signals'> };
  service: EngineLookupService;
  cache: RecordingCache;
  events: SourceOutcomeEvent[];
  clock: { nowMs: number };
  advanceSeconds(seconds: number): void;
  /** Requests received by each upstream. */
  counts(): Record<SourceSlot, number>;
  close(): Promise<void>;
}

let fetchWarmedUp: Promise<void> | undefined;

/**
 * The first global fetch of a process loads and compiles undici, which on a loaded machine can
 * take longer than the tests' 300 ms source deadline; pay it once before any deadline runs.
 */
function warmUpFetch(url: string): Promise<void> {
  fetchWarmedUp ??= fetch(`${url}/warm-up`).then(
    (response) => response.text().then(() => undefined),
    () => undefined,
  );
  return fetchWarmedUp;
}

export async function startEngineHarness(
  overrides: Partial<Pick<LookupServiceOptions, 'resilience' | 'timings' | 'coalescer' | 'random'>> = {},
): Promise<EngineHarness> {
  const upstreams = {
    primary: await startFakeUpstream({ status: 200, body: PRIMARY_DATA }),
    community: await startFakeUpstream({ status: 200, body: COMMUNITY_DATA }),
    signals: await startFakeUpstream({ status: 200, body: SIGNALS_DATA }),
  };
  await warmUpFetch(upstreams.primary.url);
  upstreams.primary.resetCounts();
  const sources = {
    primary: createLoopbackSource({ slot: 'primary', name: 'tellows', baseUrl: upstreams.primary.url }),
    community: createLoopbackSource({ slot: 'community', name: 'numeroinconnu', baseUrl: upstreams.community.url }),
    signals: createLoopbackSource({ slot: 'signals', name: 'telguarder', baseUrl: upstreams.signals.url }),
  };
  const clock = { nowMs: START_TIME_MS };
  const cache = createRecordingCache();
  const events: SourceOutcomeEvent[] = [];
  const service = createLookupService({
    sources,
    cache,
    hashKey: createKeyedHasher('engine-test-secret-0123456789'),
    timings: overrides.timings ?? TEST_CONFIG,
    now: () => clock.nowMs,
    random: overrides.random ?? (() => 0.5), // 0.5 = no jitter unless a test asks for it
    resilience: overrides.resilience ?? { retryInitialDelayMs: 10, retryMaxDelayMs: 20, retryMinRemainingMs: 50 },
    onSourceOutcome: (event) => events.push(event),
    ...(overrides.coalescer === undefined ? {} : { coalescer: overrides.coalescer }),
  });
  return {
    upstreams,
    sources,
    service,
    cache,
    events,
    clock,
    advanceSeconds(seconds) {
      clock.nowMs += seconds * 1000;
    },
    counts: () => ({
      primary: upstreams.primary.requestCount(),
      community: upstreams.community.requestCount(),
      signals: upstreams.signals.requestCount(),
    }),
    async close() {
      service.close();
      await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
    },
  };
}

/** Resolves once `condition` holds, polling every few ms; rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('waitFor: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
