import { describe, expect, it } from 'vitest';
import { blocked, failed, notFound, ok, type ErrorReason, type SourceOutcome } from '../ports/source.js';
import { createUpstreamPolicy, type ResilienceOptions } from './resilience.js';

const FAST: ResilienceOptions = { retryInitialDelayMs: 1, retryMaxDelayMs: 2, retryMinRemainingMs: 10 };

/** An attempt function answering the given outcomes in order (the last one repeats), counting calls. */
function scripted(...outcomes: SourceOutcome<string>[]): {
  attempt: () => Promise<SourceOutcome<string>>;
  calls: () => number;
} {
  let calls = 0;
  return {
    attempt: async () => {
      const outcome = outcomes[Math.min(calls, outcomes.length - 1)] ?? failed('parse');
      calls += 1;
      return outcome;
    },
    calls: () => calls,
  };
}

function context(remainingMs = 1000): { signal: AbortSignal; deadlineAt: number } {
  return { signal: new AbortController().signal, deadlineAt: Date.now() + remainingMs };
}

describe('upstream policy: retry', () => {
  it.each<[ErrorReason]>([['connection'], ['http_5xx']])(
    'retries %s once, no more, and returns the last outcome',
    async (reason) => {
      const policy = createUpstreamPolicy(FAST);
      const source = scripted(failed(reason));
      expect(await policy.execute(source.attempt, context())).toEqual(failed(reason));
      expect(source.calls()).toBe(2);
    },
  );

  it('returns the retry’s success', async () => {
    const policy = createUpstreamPolicy(FAST);
    const source = scripted(failed('http_5xx'), ok('data'));
    expect(await policy.execute(source.attempt, context())).toEqual(ok('data'));
    expect(source.calls()).toBe(2);
  });

  it.each([
    ['ok', ok('data')],
    ['not_found', notFound<string>()],
    ['blocked 429', blocked<string>('http_429', 1000)],
    ['blocked budget', blocked<string>('budget')],
    ['timeout', failed<string>('timeout')],
    ['parse', failed<string>('parse')],
    ['too_large', failed<string>('too_large')],
  ])('does not retry %s', async (_name, outcome) => {
    const policy = createUpstreamPolicy(FAST);
    const source = scripted(outcome);
    expect(await policy.execute(source.attempt, context())).toEqual(outcome);
    expect(source.calls()).toBe(1);
  });

  it('does not retry when the deadline leaves too little time', async () => {
    const policy = createUpstreamPolicy({ ...FAST, retryMinRemainingMs: 500 });
    const source = scripted(failed('connection'), ok('data'));
    expect(await policy.execute(source.attempt, context(300))).toEqual(failed('connection'));
    expect(source.calls()).toBe(1);
  });
});

describe('upstream policy: circuit breaker', () => {
  const BREAKER: ResilienceOptions = { ...FAST, breakerThreshold: 2, breakerHalfOpenAfterMs: 60 };

  it('opens after consecutive failed fetches and answers circuit_open without calling the upstream', async () => {
    const policy = createUpstreamPolicy(BREAKER);
    const source = scripted(failed('timeout'));
    await policy.execute(source.attempt, context());
    expect(policy.breakerState()).toBe('closed');
    await policy.execute(source.attempt, context());
    expect(policy.breakerState()).toBe('open');
    expect(await policy.execute(source.attempt, context())).toEqual(failed('circuit_open'));
    expect(source.calls()).toBe(2);
  });

  it('counts a fetch and its retry as one failure', async () => {
    const policy = createUpstreamPolicy({ ...BREAKER, breakerThreshold: 2 });
    const source = scripted(failed('http_5xx'));
    await policy.execute(source.attempt, context());
    expect(source.calls()).toBe(2);
    expect(policy.breakerState()).toBe('closed');
  });

  it('is reset by a success', async () => {
    const policy = createUpstreamPolicy(BREAKER);
    const source = scripted(failed('parse'), ok('data'), failed('parse'));
    for (let i = 0; i < 3; i += 1) await policy.execute(source.attempt, context());
    expect(policy.breakerState()).toBe('closed');
  });

  it('neither opens nor resets on blocked, not_found or our own abort', async () => {
    const policy = createUpstreamPolicy(BREAKER);
    const neutral = scripted(blocked('budget'), blocked('paused'), notFound(), failed('aborted'));
    for (let i = 0; i < 4; i += 1) await policy.execute(neutral.attempt, context());
    expect(policy.breakerState()).toBe('closed');
    // failure, blocked, failure: the blocked answer in between does not reset the count.
    const mixed = scripted(failed('timeout'), blocked('paused'), failed('timeout'));
    for (let i = 0; i < 3; i += 1) await policy.execute(mixed.attempt, context());
    expect(policy.breakerState()).toBe('open');
  });

  it('lets one probe through after the open period and closes when it succeeds', async () => {
    let nowMs = 1_000_000;
    const policy = createUpstreamPolicy({ ...BREAKER, now: () => nowMs });
    const source = scripted(failed('timeout'), failed('timeout'), ok('data'));
    await policy.execute(source.attempt, context());
    await policy.execute(source.attempt, context());
    expect(policy.breakerState()).toBe('open');
    nowMs += 59;
    expect(await policy.execute(source.attempt, context())).toEqual(failed('circuit_open'));
    nowMs += 1;
    expect(await policy.execute(source.attempt, context())).toEqual(ok('data'));
    expect(policy.breakerState()).toBe('closed');
  });

  it('opens again when the probe fails', async () => {
    let nowMs = 1_000_000;
    const policy = createUpstreamPolicy({ ...BREAKER, now: () => nowMs });
    const source = scripted(failed('timeout'));
    await policy.execute(source.attempt, context());
    await policy.execute(source.attempt, context());
    nowMs += 60;
    expect(await policy.execute(source.attempt, context())).toEqual(failed('timeout'));
    expect(source.calls()).toBe(3);
    expect(policy.breakerState()).toBe('open');
    expect(await policy.execute(source.attempt, context())).toEqual(failed('circuit_open'));
  });
});

describe('upstream policy: failures of one number are not failures of the upstream', () => {
  const withKey = (numberKey: string) => ({ ...context(), numberKey });

  it('never opens on one number failing, however often it is asked, and asks the upstream once per memory period', async () => {
    let nowMs = 1_000_000;
    const policy = createUpstreamPolicy({
      ...FAST,
      breakerThreshold: 3,
      numberFailureMemoryMs: 10_000,
      now: () => nowMs,
    });
    const poisoned = scripted(failed('parse'));
    for (let i = 0; i < 50; i += 1) {
      expect(await policy.execute(poisoned.attempt, withKey('poisoned'))).toEqual(failed('parse'));
      nowMs += 1_000;
    }
    expect(policy.breakerState()).toBe('closed');
    // 50 s of asking with a 10 s memory: one real attempt per 10 s.
    expect(poisoned.calls()).toBe(5);
    const fresh = scripted(ok('data'));
    expect(await policy.execute(fresh.attempt, withKey('fresh'))).toEqual(ok('data'));
  });

  it('answers a remembered failure without calling the upstream, and asks again once the memory has passed', async () => {
    let nowMs = 0;
    const policy = createUpstreamPolicy({ ...FAST, numberFailureMemoryMs: 5_000, now: () => nowMs });
    const source = scripted(failed('timeout'), ok('data'));
    expect(await policy.execute(source.attempt, withKey('n'))).toEqual(failed('timeout'));
    nowMs = 4_999;
    expect(await policy.execute(source.attempt, withKey('n'))).toEqual(failed('timeout'));
    expect(source.calls()).toBe(1);
    nowMs = 5_000;
    expect(await policy.execute(source.attempt, withKey('n'))).toEqual(ok('data'));
    expect(source.calls()).toBe(2);
  });

  it('opens when failures were seen for the threshold of distinct numbers within the window', async () => {
    const policy = createUpstreamPolicy({ ...FAST, breakerThreshold: 3 });
    const source = scripted(failed('http_5xx'));
    for (const key of ['a', 'b']) await policy.execute(source.attempt, withKey(key));
    expect(policy.breakerState()).toBe('closed');
    await policy.execute(source.attempt, withKey('c'));
    expect(policy.breakerState()).toBe('open');
    const other = scripted(ok('data'));
    expect(await policy.execute(other.attempt, withKey('d'))).toEqual(failed('circuit_open'));
    expect(other.calls()).toBe(0);
  });

  it('forgets failures older than the window, so slow scattered failures never add up to opening', async () => {
    let nowMs = 0;
    const policy = createUpstreamPolicy({ ...FAST, breakerThreshold: 3, breakerWindowMs: 60_000, now: () => nowMs });
    const source = scripted(failed('timeout'));
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      await policy.execute(source.attempt, withKey(key));
      nowMs += 31_000;
    }
    expect(policy.breakerState()).toBe('closed');
  });

  it('keeps a bounded memory of failing numbers', async () => {
    const policy = createUpstreamPolicy({ ...FAST, breakerThreshold: 1_000, numberFailureMemoryMax: 2 });
    const source = scripted(failed('parse'));
    for (const key of ['a', 'b', 'c']) await policy.execute(source.attempt, withKey(key));
    expect(source.calls()).toBe(3);
    // 'a' was forgotten to keep the memory at two numbers: it is asked again; 'c' is not.
    await policy.execute(source.attempt, withKey('a'));
    await policy.execute(source.attempt, withKey('c'));
    expect(source.calls()).toBe(4);
  });
});
