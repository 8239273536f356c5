import { describe, expect, it } from 'vitest';
import { createMemoryPolitenessStore, type PolitenessStore } from './politeness-store.js';
import type { HttpClient, HttpRequest, HttpResult } from './types.js';
import { createUpstreamFetcher, parseRetryAfterMs } from './upstream-fetcher.js';

function respond(status: number, headers: Record<string, string> = {}, body = ''): HttpResult {
  return { kind: 'response', response: { status, headers, body, url: 'http://127.0.0.1/x' } };
}

/** A client answering from a script, counting calls. */
function scriptedClient(answer: (call: number, request: HttpRequest) => HttpResult | Promise<HttpResult>) {
  const calls: HttpRequest[] = [];
  const client: HttpClient = {
    request: async (request) => {
      calls.push(request);
      return answer(calls.length, request);
    },
  };
  return { client, calls };
}

function fakeClock(startMs = Date.UTC(2026, 0, 1)) {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms: number) => void (nowMs += ms) };
}

/** A memory politeness store that tells when it refuses a budget slot: a request is then waiting for one. */
function watchRefusals() {
  const store = createMemoryPolitenessStore();
  let onRefusal: (() => void) | undefined;
  const politeness: PolitenessStore = {
    ...store,
    takeBudgetSlot: async (upstream, requestsPerMinute, nowMs) => {
      const decision = await store.takeBudgetSlot(upstream, requestsPerMinute, nowMs);
      if (!decision.granted) onRefusal?.();
      return decision;
    },
  };
  return { politeness, refused: () => new Promise<void>((resolve) => (onRefusal = resolve)) };
}

const request = (signal: AbortSignal = AbortSignal.timeout(2_000)): HttpRequest => ({
  url: 'http://127.0.0.1/x',
  signal,
});

describe('upstream fetcher: classification', () => {
  it('hands 2xx and 404 responses to the adapter', async () => {
    const { client } = scriptedClient((call) => respond(call === 1 ? 200 : 404));
    const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 60, maxConcurrency: 2 });
    expect(await fetcher.fetch(request())).toMatchObject({ kind: 'response', response: { status: 200 } });
    expect(await fetcher.fetch(request())).toMatchObject({ kind: 'response', response: { status: 404 } });
  });

  it('turns 5xx into error(http_5xx) without pausing', async () => {
    const { client } = scriptedClient(() => respond(503));
    const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 60, maxConcurrency: 2 });
    const failure = { kind: 'error', reason: 'http_5xx', cause: 'http_503' };
    expect(await fetcher.fetch(request())).toEqual({ kind: 'failure', failure });
    expect(fetcher.pausedUntil()).toBe(0);
  });

  it('turns transport failures into error with the client reason', async () => {
    for (const reason of ['timeout', 'connection', 'too_large', 'redirect', 'decoding', 'aborted'] as const) {
      const { client } = scriptedClient(() => ({ kind: 'failure', reason }));
      const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 60, maxConcurrency: 2 });
      expect(await fetcher.fetch(request())).toEqual({ kind: 'failure', failure: { kind: 'error', reason } });
    }
  });
});

describe('upstream fetcher: pause after 403/429', () => {
  it('honours Retry-After seconds: blocked at once, without calling, until it has passed', async () => {
    const clock = fakeClock();
    const { client, calls } = scriptedClient((call) =>
      call === 1 ? respond(429, { 'retry-after': '120' }) : respond(200),
    );
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 60,
      maxConcurrency: 2,
      now: clock.now,
    });
    expect(await fetcher.fetch(request())).toEqual({
      kind: 'failure',
      failure: { kind: 'blocked', reason: 'http_429', retryAfterMs: 120_000 },
    });
    expect(fetcher.pausedUntil()).toBe(clock.now() + 120_000);
    clock.advance(119_000);
    expect(await fetcher.fetch(request())).toEqual({
      kind: 'failure',
      failure: { kind: 'blocked', reason: 'paused', retryAfterMs: 1_000 },
      notSent: true,
    });
    expect(calls).toHaveLength(1);
    clock.advance(1_000);
    expect(await fetcher.fetch(request())).toMatchObject({ kind: 'response', response: { status: 200 } });
    expect(calls).toHaveLength(2);
    expect(fetcher.pausedUntil()).toBe(0);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const clock = fakeClock();
    const at = new Date(clock.now() + 600_000).toUTCString();
    const { client } = scriptedClient(() => respond(429, { 'retry-after': at }));
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 60,
      maxConcurrency: 2,
      now: clock.now,
    });
    expect(await fetcher.fetch(request())).toMatchObject({ failure: { reason: 'http_429', retryAfterMs: 600_000 } });
  });

  it('backs off exponentially from 5 minutes on repeated 403s, capped at an hour, and resets after a success', async () => {
    const clock = fakeClock();
    let status = 403;
    const { client } = scriptedClient(() => respond(status));
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 1000,
      maxConcurrency: 2,
      now: clock.now,
    });
    const pauses: Array<number | undefined> = [];
    for (let index = 0; index < 8; index += 1) {
      const result = await fetcher.fetch(request());
      if (result.kind !== 'failure' || result.failure.kind !== 'blocked') throw new Error('expected blocked');
      expect(result.failure.reason).toBe('http_403');
      pauses.push(result.failure.retryAfterMs);
      clock.advance(3_600_000);
    }
    expect(pauses).toEqual([300_000, 450_000, 675_000, 1_012_500, 1_518_750, 2_278_125, 3_417_188, 3_600_000]);
    status = 200;
    await fetcher.fetch(request());
    status = 403;
    expect(await fetcher.fetch(request())).toMatchObject({ failure: { retryAfterMs: 300_000 } });
  });

  it('caps an absurd Retry-After at 24 hours', async () => {
    const clock = fakeClock();
    const { client } = scriptedClient(() => respond(429, { 'retry-after': '99999999' }));
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 60,
      maxConcurrency: 2,
      now: clock.now,
    });
    expect(await fetcher.fetch(request())).toMatchObject({ failure: { retryAfterMs: 86_400_000 } });
  });

  it('shares the pause through the politeness store with another fetcher of the same upstream', async () => {
    const clock = fakeClock();
    const politeness = createMemoryPolitenessStore();
    const first = scriptedClient(() => respond(429, { 'retry-after': '60' }));
    const second = scriptedClient(() => respond(200));
    const a = createUpstreamFetcher({
      upstream: 't',
      client: first.client,
      requestsPerMinute: 60,
      maxConcurrency: 2,
      now: clock.now,
      politeness,
    });
    const b = createUpstreamFetcher({
      upstream: 't',
      client: second.client,
      requestsPerMinute: 60,
      maxConcurrency: 2,
      now: clock.now,
      politeness,
    });
    await a.fetch(request());
    expect(await b.fetch(request())).toMatchObject({ failure: { kind: 'blocked', reason: 'paused' } });
    expect(second.calls).toHaveLength(0);
  });
});

describe('upstream fetcher: budget and concurrency', () => {
  it('answers blocked(budget) when no slot of the per-minute budget frees up before the deadline', async () => {
    const { client, calls } = scriptedClient(() => respond(200));
    const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 2, maxConcurrency: 4 });
    await fetcher.fetch(request());
    await fetcher.fetch(request());
    expect(await fetcher.fetch(request(AbortSignal.timeout(300)))).toEqual({
      kind: 'failure',
      failure: { kind: 'blocked', reason: 'budget' },
      notSent: true,
    });
    expect(calls).toHaveLength(2);
  });

  it('lets an over-budget request wait for a slot that frees up within its deadline', async () => {
    const clock = fakeClock();
    const { client, calls } = scriptedClient(() => respond(200));
    const { politeness, refused } = watchRefusals();
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 1,
      maxConcurrency: 4,
      now: clock.now,
      maxBudgetWaitMs: 120_000,
      politeness,
    });
    await fetcher.fetch(request());
    const waiting = fetcher.fetch(request(AbortSignal.timeout(5_000)));
    // Refused a slot: from here on it waits.
    await refused();
    expect(calls).toHaveLength(1);
    clock.advance(60_000);
    expect(await waiting).toMatchObject({ kind: 'response' });
    expect(calls).toHaveLength(2);
  });

  it('answers blocked(budget) at once, without waiting out its deadline, when the next slot is further away than the wait allowed', async () => {
    const { client, calls } = scriptedClient(() => respond(200));
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 1,
      maxConcurrency: 4,
      maxBudgetWaitMs: 2_000,
    });
    await fetcher.fetch(request());
    // The caller's own signal never fires: only the fit check can end this fetch.
    const never = new AbortController();
    expect(await fetcher.fetch(request(never.signal))).toEqual({
      kind: 'failure',
      failure: { kind: 'blocked', reason: 'budget' },
      notSent: true,
    });
    expect(calls).toHaveLength(1);
  });

  it('reports a caller abort while waiting as error(aborted)', async () => {
    const { client } = scriptedClient(() => respond(200));
    const { politeness, refused } = watchRefusals();
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 1,
      maxConcurrency: 4,
      maxBudgetWaitMs: 120_000,
      politeness,
    });
    await fetcher.fetch(request());
    const controller = new AbortController();
    const waiting = fetcher.fetch(request(controller.signal));
    await refused();
    controller.abort(new Error('gone'));
    expect(await waiting).toEqual({ kind: 'failure', failure: { kind: 'error', reason: 'aborted' }, notSent: true });
  });

  it('never runs more requests at once than the concurrency cap, queueing the rest', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const { client, calls } = scriptedClient(async () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight -= 1;
      return respond(200);
    });
    const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 100, maxConcurrency: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, () => fetcher.fetch(request())));
    expect(results.every((result) => result.kind === 'response')).toBe(true);
    expect(calls).toHaveLength(6);
    expect(maxInFlight).toBe(2);
  });

  it('gives up a queued request at its deadline as blocked(queue), sending nothing', async () => {
    // The one slot stays taken until the queued request has been answered: only its deadline can end its wait.
    let freeSlot = (): void => undefined;
    const slotTaken = new Promise<void>((resolve) => {
      freeSlot = resolve;
    });
    const { client, calls } = scriptedClient(async () => {
      await slotTaken;
      return respond(200);
    });
    const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 100, maxConcurrency: 1 });
    const first = fetcher.fetch(request());
    expect(await fetcher.fetch(request(AbortSignal.timeout(100)))).toEqual({
      kind: 'failure',
      failure: { kind: 'blocked', reason: 'queue' },
      notSent: true,
    });
    expect(calls).toHaveLength(1);
    freeSlot();
    expect(await first).toMatchObject({ kind: 'response' });
  });
});

describe('upstream fetcher: fair turns, shares and charges', () => {
  it('serves queued clients in turn: a client behind a burst of another waits one turn, not the burst', async () => {
    const releases: Array<() => void> = [];
    const order: string[] = [];
    const { client } = scriptedClient(async (_call, sent) => {
      order.push(sent.url);
      await new Promise<void>((resolve) => releases.push(resolve));
      return respond(200);
    });
    const fetcher = createUpstreamFetcher({ upstream: 't', client, requestsPerMinute: 100, maxConcurrency: 1 });
    const greedy = { key: 'greedy', exempt: false };
    const burst = Array.from({ length: 4 }, (_, i) =>
      fetcher.fetch({ ...request(), url: `http://127.0.0.1/greedy/${i}`, client: greedy }),
    );
    const other = fetcher.fetch({
      ...request(),
      url: 'http://127.0.0.1/other',
      client: { key: 'other', exempt: false },
    });
    // Each answer lets the next queued request through.
    for (let served = 0; served < 5; served += 1) {
      while (releases.length === 0) await new Promise((resolve) => setImmediate(resolve));
      releases.shift()?.();
    }
    await Promise.all([...burst, other]);
    expect(order).toEqual([
      'http://127.0.0.1/greedy/0',
      'http://127.0.0.1/other',
      'http://127.0.0.1/greedy/1',
      'http://127.0.0.1/greedy/2',
      'http://127.0.0.1/greedy/3',
    ]);
  });

  it('holds no concurrency slot while it waits for a budget slot', async () => {
    const clock = fakeClock();
    const { client, calls } = scriptedClient(() => respond(200));
    // A budget of 2, each client's share 1 (50 %): the greedy client's second request waits
    // for its share, and the other client's request passes meanwhile on the one slot.
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 2,
      maxConcurrency: 1,
      clientSharePct: 50,
      now: clock.now,
      maxBudgetWaitMs: 120_000,
    });
    const greedy = { key: 'greedy', exempt: false };
    expect(await fetcher.fetch({ ...request(), client: greedy })).toMatchObject({ kind: 'response' });
    const controller = new AbortController();
    const waiting = fetcher.fetch({ ...request(controller.signal), client: greedy });
    expect(await fetcher.fetch({ ...request(), client: { key: 'other', exempt: false } })).toMatchObject({
      kind: 'response',
    });
    controller.abort(new Error('gone'));
    expect(await waiting).toEqual({ kind: 'failure', failure: { kind: 'error', reason: 'aborted' }, notSent: true });
    expect(calls).toHaveLength(2);
  });

  it('answers blocked(budget) at once to a client past its share, and gives an exempt client its larger share', async () => {
    const { client, calls } = scriptedClient(() => respond(200));
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 10,
      maxConcurrency: 2,
      clientSharePct: 50,
      exemptSharePct: 80,
    });
    const granted = async (fetchClient: { key: string; exempt: boolean }): Promise<number> => {
      let count = 0;
      for (let i = 0; i < 10; i += 1)
        if ((await fetcher.fetch({ ...request(), client: fetchClient })).kind === 'response') count += 1;
      return count;
    };
    expect(await granted({ key: 'pbx', exempt: true })).toBe(8);
    // 2 left in the minute for everyone else.
    expect(await granted({ key: 'web', exempt: false })).toBe(2);
    expect(await fetcher.fetch({ ...request(), client: { key: 'web', exempt: false } })).toEqual({
      kind: 'failure',
      failure: { kind: 'blocked', reason: 'budget' },
      notSent: true,
    });
    expect(calls).toHaveLength(10);
  });

  it('charges every request sent: a fetch expecting a redirect is charged 2, and an unexpected redirect once more', async () => {
    const store = createMemoryPolitenessStore();
    const redirects: Array<boolean | undefined> = [];
    const { client } = scriptedClient(async (_call, sent) => {
      redirects.push(await sent.beforeRedirect?.());
      return respond(200);
    });
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 3,
      maxConcurrency: 1,
      politeness: store,
    });
    expect(await fetcher.fetch({ ...request(), expectedRequests: 2 })).toMatchObject({ kind: 'response' });
    expect(await fetcher.fetch(request())).toMatchObject({ kind: 'response' });
    expect(redirects).toEqual([true, false]);
    // The refused redirect sent nothing more: 3 charged, the budget of the minute.
    expect(await store.takeBudgetSlot('t', 3, Date.now())).toMatchObject({ granted: false });
  });
});

describe('parseRetryAfterMs', () => {
  it('reads seconds and dates, ignores garbage', () => {
    const nowMs = Date.UTC(2026, 0, 1);
    expect(parseRetryAfterMs('30', nowMs)).toBe(30_000);
    expect(parseRetryAfterMs(new Date(nowMs + 90_000).toUTCString(), nowMs)).toBe(90_000);
    expect(parseRetryAfterMs(new Date(nowMs - 90_000).toUTCString(), nowMs)).toBe(0);
    expect(parseRetryAfterMs('soon', nowMs)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, nowMs)).toBeUndefined();
  });
});
