// A deadline the caller chooses (`waitMs`), and callers that stop waiting detach rather than
// cancel (issue 21). The sources are held open by gates the test opens, and the deadlines run
// on timers the test fires, so nothing here depends on how fast the machine is.
import { describe, expect, it } from 'vitest';
import {
  COMMUNITY_DATA,
  fakeSource,
  frenchMobile,
  PRIMARY_DATA,
  SIGNALS_DATA,
  START_TIME_MS,
  TEST_CONFIG,
  type FakeSources,
} from '../../../harness/lookup.js';
import { createMemorySourceCache } from '../../infra/cache/memory-cache.js';
import { createKeyedHasher } from '../../infra/hash.js';
import { failed, ok, type SourceOutcome } from '../ports/source.js';
import type { SourceResultCache } from '../ports/source-cache.js';
import { buildReport, buildScoreResult } from '../report-builder.js';
import { emptySourceData, SOURCE_SLOTS, type PrimaryData } from '../report.js';
import { createLookupService, type EngineTimers, type SourceOutcomeEvent } from './lookup-service.js';

// Shorter than the source deadline (300 ms) and the lookup deadline (500 ms) of TEST_CONFIG.
const WAIT_MS = 200;

/** Timers the test fires by hand; each remembers the delay it was set for. */
function manualTimers(): EngineTimers & { fire(ms: number): number } {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  let next = 0;
  return {
    setTimeout(callback, ms) {
      next += 1;
      pending.set(next, { callback, ms });
      return next;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
    /** Fires every timer set for `ms`; how many fired. */
    fire(ms) {
      let fired = 0;
      for (const [handle, timer] of [...pending]) {
        if (timer.ms !== ms) continue;
        pending.delete(handle);
        timer.callback();
        fired += 1;
      }
      return fired;
    },
  };
}

const isPrimaryKey = (key: string): boolean => key.includes(':primary:');

/** A promise the test settles itself. */
function gate<T>(): { promise: Promise<T>; open: (value: T) => void } {
  let open: (value: T) => void = () => undefined;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Resolves at the next value given to the listeners that satisfies `test`. */
function nextEvent<T>(listeners: ((value: T) => void)[], test: (value: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve) => {
    listeners.push((value) => {
      if (test(value)) resolve(value);
    });
  });
}

function engine(sources: FakeSources, options: { breakerThreshold?: number } = {}) {
  const timers = manualTimers();
  /** Told the key of every cache write. */
  const written: ((key: string) => void)[] = [];
  const inner = createMemorySourceCache({ maxEntries: 1000 });
  const cache: SourceResultCache = {
    get: (key) => inner.get(key),
    peek: (key) => inner.peek(key),
    set: async (key, value, ttl) => {
      await inner.set(key, value, ttl);
      written.forEach((listener) => listener(key));
    },
  };
  const outcomes: ((event: SourceOutcomeEvent) => void)[] = [];
  const events: SourceOutcomeEvent[] = [];
  const service = createLookupService({
    sources,
    cache,
    hashKey: createKeyedHasher('caller-wait-secret-0123456789'),
    timings: TEST_CONFIG,
    now: () => START_TIME_MS,
    random: () => 0.5,
    timers,
    resilience: { breakerThreshold: options.breakerThreshold ?? 5, retryMinRemainingMs: 1_000_000 },
    onSourceOutcome: (event) => {
      events.push(event);
      outcomes.forEach((listener) => listener(event));
    },
  });
  return { service, timers, written, outcomes, events };
}

/** Fast community and signals; a primary held open until the test opens `held`, recording what its signal did. */
function slowPrimary() {
  const held = gate<SourceOutcome<PrimaryData>>();
  const asked = gate<undefined>();
  const seen = { abortedWhileHeld: false, signals: [] as AbortSignal[] };
  const sources: FakeSources = {
    primary: fakeSource('primary', async (_number, signal) => {
      seen.signals.push(signal);
      asked.open(undefined);
      const outcome = await held.promise;
      seen.abortedWhileHeld ||= signal.aborted;
      return outcome;
    }),
    community: fakeSource('community', () => ok(COMMUNITY_DATA)),
    signals: fakeSource('signals', () => ok(SIGNALS_DATA)),
  };
  return { sources, held, seen, asked: asked.promise };
}

/** Resolves once the fast community and signals slots have answered this lookup. */
function fastSlotsAnswered(outcomes: ((event: SourceOutcomeEvent) => void)[]): Promise<unknown> {
  return Promise.all([
    nextEvent(outcomes, (event) => event.slot === 'community'),
    nextEvent(outcomes, (event) => event.slot === 'signals'),
  ]);
}

describe('lookup engine: a deadline the caller chooses (waitMs)', () => {
  it('answers a slot still fetching at waitMs as exactly pending; the fetch goes on, fills the cache, and the next lookup is a hit', async () => {
    const { sources, held, seen } = slowPrimary();
    const { service, timers, written, outcomes } = engine(sources);
    const number = frenchMobile(40);
    const fast = fastSlotsAnswered(outcomes);
    const answer = service.lookup(number, { waitMs: WAIT_MS });
    await fast;
    expect(timers.fire(WAIT_MS)).toBe(1);
    const result = await answer;
    expect(result.primary).toEqual({ status: 'pending', data: null });
    expect(result.community).toMatchObject({ status: 'ok', cache: 'miss', data: COMMUNITY_DATA });
    const built = buildReport(number, result);
    expect(built.meta.sources.primary).toEqual({ status: 'pending' });
    expect(built.report.sources.primary).toEqual(emptySourceData().primary);
    expect(built.allSourcesFailed).toBe(false);
    // Not fresh: never held by the front cache with a slot missing.
    expect(service.freshUntilOf(result)).toBeUndefined();

    const filled = nextEvent(written, isPrimaryKey);
    held.open(ok(PRIMARY_DATA));
    await filled;
    expect(seen.abortedWhileHeld).toBe(false);
    const next = await service.lookup(number, { waitMs: WAIT_MS });
    expect(next.primary).toMatchObject({ status: 'ok', cache: 'hit', data: PRIMARY_DATA });
    expect(sources.primary.calls).toBe(1);
    expect(service.freshUntilOf(next)).toBeDefined();
  });

  it('answers every slot pending, with nothing cached, as a 200 with empty fields and no score', async () => {
    const held = gate<SourceOutcome<never>>();
    const sources: FakeSources = {
      primary: fakeSource('primary', () => held.promise),
      community: fakeSource('community', () => held.promise),
      signals: fakeSource('signals', () => held.promise),
    };
    const { service, timers } = engine(sources);
    const number = frenchMobile(41);
    const answer = service.lookup(number, { waitMs: 0 });
    expect(timers.fire(0)).toBe(1);
    const result = await answer;
    for (const slot of SOURCE_SLOTS) expect(result[slot]).toEqual({ status: 'pending', data: null });
    const built = buildReport(number, result);
    expect(built.allSourcesFailed).toBe(false);
    expect(built.report.sources).toEqual(emptySourceData());
    expect(built.meta.sources).toEqual({
      primary: { status: 'pending' },
      community: { status: 'pending' },
      signals: { status: 'pending' },
    });
    const score = buildScoreResult(number, result);
    expect(score.score).toMatchObject({ score: null, risk: 'unknown' });
    expect(score.meta.scoreSource).toBeNull();
    held.open(failed('connection'));
  });

  it('scores from the slots that answered, ignoring a pending one', async () => {
    const { sources, held } = slowPrimary();
    const { service, timers, outcomes } = engine(sources);
    const number = frenchMobile(42);
    const fast = fastSlotsAnswered(outcomes);
    const answer = service.lookup(number, { waitMs: WAIT_MS });
    await fast;
    timers.fire(WAIT_MS);
    const score = buildScoreResult(number, await answer);
    // Without the primary's own score, the mean of community 80 % and signals 90 %.
    expect(score.score.score).toBe(1 + Math.round((85 * 8) / 100));
    expect(score.meta.scoreSource).toBe('derived');
    held.open(ok(PRIMARY_DATA));
  });

  it('shares one upstream request among a burst of waiting callers, each answered pending, and fills the cache once', async () => {
    const { sources, held, asked } = slowPrimary();
    const { service, timers, written } = engine(sources);
    const number = frenchMobile(43);
    const answers = Array.from({ length: 20 }, () => service.lookup(number, { waitMs: WAIT_MS }));
    await asked;
    expect(timers.fire(WAIT_MS)).toBe(20);
    for (const result of await Promise.all(answers)) expect(result.primary.status).toBe('pending');
    expect(sources.primary.calls).toBe(1);
    const filled = nextEvent(written, isPrimaryKey);
    held.open(ok(PRIMARY_DATA));
    await filled;
    const again = await service.lookup(number);
    expect(again.primary).toMatchObject({ status: 'ok', cache: 'hit' });
    expect(sources.primary.calls).toBe(1);
  });

  it('reports a pending slot’s outcome when its fetch ends, not when the caller left', async () => {
    const { sources, held, asked } = slowPrimary();
    const { service, timers, outcomes, events } = engine(sources);
    const answer = service.lookup(frenchMobile(44), { waitMs: WAIT_MS });
    await asked;
    timers.fire(WAIT_MS);
    await answer;
    expect(events.filter((event) => event.slot === 'primary')).toEqual([]);
    const reported = nextEvent(outcomes, (event) => event.slot === 'primary');
    held.open(ok(PRIMARY_DATA));
    expect(await reported).toMatchObject({ slot: 'primary', status: 'ok', cache: 'miss' });
  });

  it('serves a fresh hit at once whatever the wait, even 0', async () => {
    const { sources, held } = slowPrimary();
    held.open(ok(PRIMARY_DATA));
    const { service, timers } = engine(sources);
    const number = frenchMobile(45);
    await service.lookup(number);
    const hit = service.lookup(number, { waitMs: 0 });
    timers.fire(0);
    for (const slot of SOURCE_SLOTS) expect((await hit)[slot]).toMatchObject({ status: 'ok', cache: 'hit' });
  });

  it('without waitMs, keeps answering the lookup deadline as error/timeout, and the fetch still fills the cache', async () => {
    const { sources, held, seen, asked } = slowPrimary();
    const { service, timers, written } = engine(sources);
    const number = frenchMobile(46);
    const answer = service.lookup(number);
    await asked;
    expect(timers.fire(TEST_CONFIG.lookupTimeoutMs)).toBe(1);
    expect((await answer).primary).toMatchObject({ status: 'error', reason: 'timeout', data: null });
    const filled = nextEvent(written, isPrimaryKey);
    held.open(ok(PRIMARY_DATA));
    await filled;
    expect(seen.abortedWhileHeld).toBe(false);
    expect((await service.lookup(number)).primary).toMatchObject({ status: 'ok', cache: 'hit' });
  });
});

describe('lookup engine: a caller that stops waiting detaches, it does not cancel', () => {
  it('neither aborts the fetch nor counts a breaker failure when every caller has left', async () => {
    const { sources, held, seen, asked } = slowPrimary();
    const { service, timers, written } = engine(sources, { breakerThreshold: 1 });
    const client = new AbortController();
    const number = frenchMobile(47);
    const leaving = service.lookup(number, { signal: client.signal });
    const waiting = service.lookup(number, { waitMs: WAIT_MS });
    await asked;
    client.abort();
    timers.fire(WAIT_MS);
    expect((await leaving).primary).toMatchObject({ status: 'error', reason: 'aborted' });
    expect((await waiting).primary).toEqual({ status: 'pending', data: null });
    expect(seen.signals).toHaveLength(1);
    expect(seen.signals[0]?.aborted).toBe(false);
    const filled = nextEvent(written, isPrimaryKey);
    held.open(ok(PRIMARY_DATA));
    await filled;
    expect(seen.abortedWhileHeld).toBe(false);
    expect(service.breakerState('primary')).toBe('closed');
  });

  it('counts the upstream’s own failure of a detached fetch against the breaker, once', async () => {
    const { sources, held, asked } = slowPrimary();
    const { service, timers, outcomes } = engine(sources, { breakerThreshold: 1 });
    const answer = service.lookup(frenchMobile(48), { waitMs: WAIT_MS });
    await asked;
    timers.fire(WAIT_MS);
    expect((await answer).primary.status).toBe('pending');
    expect(service.breakerState('primary')).toBe('closed');
    const reported = nextEvent(outcomes, (event) => event.slot === 'primary');
    held.open(failed('http_5xx'));
    expect(await reported).toMatchObject({ status: 'error', reason: 'http_5xx' });
    expect(service.breakerState('primary')).toBe('open');
    expect(sources.primary.calls).toBe(1);
  });

  it('ends a fetch at its own source deadline (a timeout the breaker counts), never at a caller’s', async () => {
    const { sources, seen, asked } = slowPrimary();
    const { service, timers, outcomes } = engine(sources, { breakerThreshold: 1 });
    const fast = fastSlotsAnswered(outcomes);
    const answer = service.lookup(frenchMobile(49), { waitMs: WAIT_MS });
    await Promise.all([asked, fast]);
    timers.fire(WAIT_MS);
    expect((await answer).primary.status).toBe('pending');
    expect(seen.signals[0]?.aborted).toBe(false);
    const reported = nextEvent(outcomes, (event) => event.slot === 'primary');
    expect(timers.fire(TEST_CONFIG.sourceTimeoutMs)).toBe(1);
    expect(seen.signals[0]?.aborted).toBe(true);
    expect(await reported).toMatchObject({ status: 'error', reason: 'timeout' });
    expect(service.breakerState('primary')).toBe('open');
  });
});
