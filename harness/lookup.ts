// The pieces of a lookup, built by hand for the domain's, the engine's and the HTTP layer's
// tests (and the benchmarks): the numbers asked about, sources that answer from memory or from
// a loopback upstream, the SlotResults the engine makes of their answers, and the engine itself
// over three fake upstreams with a controllable clock.
import {
  createLookupService,
  type EngineLookupService,
  type LookupTimings,
  type LookupServiceOptions,
  type SourceOutcomeEvent,
} from '../src/domain/lookup/lookup-service.js';
import type {
  AnsweredSlot,
  CacheState,
  LookupResult,
  PendingSlot,
  SkippedSlot,
  SlotResult,
} from '../src/domain/lookup/types.js';
import type { ParsedPhoneNumber } from '../src/domain/phone-number.js';
import type { CachedSourceResult, SourceResultCache } from '../src/domain/ports/source-cache.js';
import {
  blocked,
  failed,
  notFound,
  ok,
  type BlockedReason,
  type ErrorReason,
  type Source,
  type SourceOutcome,
  type SourcesBySlot,
} from '../src/domain/ports/source.js';
import type { CommunityData, PrimaryData, SignalsData, SourceDataBySlot, SourceSlot } from '../src/domain/report.js';
import { createMemorySourceCache } from '../src/infra/cache/memory-cache.js';
import { createKeyedHasher } from '../src/infra/hash.js';
import { startFakeUpstream, type FakeUpstream } from './loopback.js';

// Hand-built ParsedPhoneNumber values (the numbering module is not needed to test what an
// adapter or the engine does with a number it is given).
const phoneInfo = {
  national: '',
  e164: '',
  type: 'mobile',
  rangeLabel: '',
  originalCarrier: '',
  region: '',
  isNPV: false,
};

/** A French-plan number from its 10 national digits ("0600000001"). */
export function frenchNumber(digits: string): ParsedPhoneNumber {
  const e164 = `+33${digits.slice(1)}`;
  return {
    number: digits,
    e164,
    regionCode: 'FR',
    isFrenchPlan: true,
    frenchNationalDigits: digits,
    phoneInfo: { ...phoneInfo, e164 },
  };
}

/** A Belgian mobile number: outside the French plan. */
export function belgianNumber(): ParsedPhoneNumber {
  const e164 = '+32470000000';
  return {
    number: e164,
    e164,
    regionCode: 'BE',
    isFrenchPlan: false,
    frenchNationalDigits: null,
    phoneInfo: { ...phoneInfo, e164 },
  };
}

/** A French mobile number 06 12 34 56 NN, distinct per `n` (0–99). */
export function frenchMobile(n: number): ParsedPhoneNumber {
  const suffix = String(n % 100).padStart(2, '0');
  const number = frenchNumber(`06123456${suffix}`);
  return { ...number, phoneInfo: { ...number.phoneInfo, national: `06 12 34 56 ${suffix}`, region: 'France' } };
}

/** Distinct numbers beyond 100: +33 7 NN NN NN NN. */
export function distinctNumber(n: number): ParsedPhoneNumber {
  const national = `07${String(n).padStart(8, '0').slice(-8)}`;
  const number = frenchNumber(national);
  return { ...number, phoneInfo: { ...number.phoneInfo, national, region: 'France' } };
}

// Sources that answer from memory, for contract tests that exercise the HTTP layer and the
// engine without any upstream. They implement the same Source interface as the adapters.
export const SAMPLE_DATA: SourceDataBySlot = {
  primary: {
    score: 8,
    searches: 1234,
    commentsCount: 2,
    commentList: [
      {
        author: 'Camille',
        text: 'Appel insistant pour une isolation à 1 euro.',
        date: '12/03/2024',
        callerType: 'Démarchage',
      },
      { author: 'Anonyme', text: 'Raccroche dès que je réponds.', date: '02/02/2024', callerType: 'Démarchage' },
    ],
  },
  community: {
    dangerPercent: 84,
    visits: 2535,
    commentsCount: 1,
    topCategory: 'Gênant',
    lastCommentDate: '11/03/2024',
    commentList: [{ text: 'Toujours le même message enregistré.', date: '11/03/2024', category: 'Gênant' }],
  },
  signals: {
    spamScore: 50,
    reportsCount: 17,
    callerType: 'Vendeur par téléphone',
    commentList: [],
  },
};

export type Responder<S extends SourceSlot> = (
  number: ParsedPhoneNumber,
  signal: AbortSignal,
) => SourceOutcome<SourceDataBySlot[S]> | Promise<SourceOutcome<SourceDataBySlot[S]>>;

export interface FakeSource<S extends SourceSlot> extends Source<S> {
  calls: number;
  respond: Responder<S>;
}

export function fakeSource<S extends SourceSlot>(slot: S, respond: Responder<S>): FakeSource<S> {
  const source: FakeSource<S> = {
    slot,
    name: `fake-${slot}`,
    calls: 0,
    respond,
    async lookup(number, signal) {
      source.calls += 1;
      return source.respond(number, signal);
    },
  };
  return source;
}

export type FakeSources = { [S in SourceSlot]: FakeSource<S> } & SourcesBySlot;

/** Three sources that all answer the sample data. */
export function healthyFakeSources(): FakeSources {
  return {
    primary: fakeSource('primary', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.primary) })),
    community: fakeSource('community', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.community) })),
    signals: fakeSource('signals', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.signals) })),
  };
}

// A minimal Source for engine tests and benchmarks: fetches `<baseUrl>/<e164>` on loopback with
// the global fetch and maps the answer the way real adapters do (200 JSON → ok, 404 →
// not_found, 403/429 → blocked with a politeness pause for the whole upstream, 5xx → error
// http_5xx, refused → error connection, deadline → error timeout). It stands in for the real
// adapters, which are built elsewhere against the same interface.
export interface LoopbackSourceOptions<S extends SourceSlot> {
  slot: S;
  name: string;
  baseUrl: string;
  /** Pause after 403/429 when the answer has no Retry-After. Default 60 000 ms. */
  defaultPauseMs?: number;
}

export interface LoopbackSource<S extends SourceSlot> extends Source<S> {
  /** Times lookup() was called (including answers given from the pause without a request). */
  readonly calls: number;
  /** Epoch ms until which the upstream is paused, or 0. */
  pausedUntil(): number;
}

export function upstreamPath(number: ParsedPhoneNumber): string {
  return `/${encodeURIComponent(number.e164)}`;
}

export function createLoopbackSource<S extends SourceSlot>(options: LoopbackSourceOptions<S>): LoopbackSource<S> {
  let pausedUntil = 0;
  let calls = 0;
  const defaultPauseMs = options.defaultPauseMs ?? 60_000;

  async function fetchOutcome(
    number: ParsedPhoneNumber,
    signal: AbortSignal,
  ): Promise<SourceOutcome<SourceDataBySlot[S]>> {
    if (Date.now() < pausedUntil) return blocked('paused', pausedUntil - Date.now());
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${options.baseUrl}${upstreamPath(number)}`, { signal });
      text = await response.text();
    } catch {
      return failed(signal.aborted ? 'timeout' : 'connection');
    }
    if (response.status === 200) {
      try {
        return ok(JSON.parse(text) as SourceDataBySlot[S]);
      } catch {
        return failed('invalid_json');
      }
    }
    if (response.status === 404) return notFound();
    if (response.status === 403 || response.status === 429) {
      const retryAfterS = Number(response.headers.get('retry-after'));
      const pauseMs = Number.isFinite(retryAfterS) && retryAfterS > 0 ? retryAfterS * 1000 : defaultPauseMs;
      pausedUntil = Date.now() + pauseMs;
      return blocked(`http_${response.status}`, pauseMs);
    }
    if (response.status >= 500) return failed('http_5xx');
    return failed('http_status');
  }

  return {
    slot: options.slot,
    name: options.name,
    get calls() {
      return calls;
    },
    pausedUntil: () => pausedUntil,
    lookup(number, signal) {
      calls += 1;
      return fetchOutcome(number, signal);
    },
  };
}

// SlotResult builders for pure tests of the report builder and the score rule.
export const FETCHED_AT = '2026-03-01T12:00:00.000Z';

export function okSlot<S extends SourceSlot>(data: SourceDataBySlot[S], cache: CacheState = 'miss'): AnsweredSlot<S> {
  return { status: 'ok', fetchedAt: FETCHED_AT, cache, data };
}

export function notFoundSlot<S extends SourceSlot>(): AnsweredSlot<S> {
  return { status: 'not_found', fetchedAt: FETCHED_AT, cache: 'miss', data: null };
}

export function errorSlot<S extends SourceSlot>(reason: ErrorReason): AnsweredSlot<S> {
  return { status: 'error', reason, fetchedAt: FETCHED_AT, cache: 'miss', data: null };
}

export function blockedSlot<S extends SourceSlot>(reason: BlockedReason): AnsweredSlot<S> {
  return { status: 'blocked', reason, fetchedAt: FETCHED_AT, cache: 'miss', data: null };
}

/** The slot of a source that does not cover the number. */
export function skippedSlot(): SkippedSlot {
  return { status: 'skipped', reason: 'not_covered', data: null };
}

/** The slot of a fetch still running when the caller's wait ended. */
export function pendingSlot(): PendingSlot {
  return { status: 'pending', data: null };
}

/** The slot as settled by an upstream or the cache: fails the test if it was skipped or pending. */
export function answered<S extends SourceSlot>(slot: SlotResult<S>): AnsweredSlot<S> {
  if (slot.status === 'skipped' || slot.status === 'pending')
    throw new Error(`expected an answered slot, got ${slot.status}`);
  return slot;
}

export function lookupResult(
  primary: SlotResult<'primary'>,
  community: SlotResult<'community'>,
  signals: SlotResult<'signals'>,
): LookupResult {
  return { primary, community, signals };
}

// A lookup service over three fake upstreams on loopback, with a controllable clock, for the
// engine's tests. Every test gets fresh servers, a fresh cache and fresh breakers.
/** What the engine's fake upstreams answer per slot (the report builder's and score's tests use it too). */
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

/** The engine clock's start: the instant FETCHED_AT names. */
export const START_TIME_MS = Date.parse(FETCHED_AT);

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
  sources: {
    primary: LoopbackSource<'primary'>;
    community: LoopbackSource<'community'>;
    signals: LoopbackSource<'signals'>;
  };
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
