import { describe, expect, it } from 'vitest';
import { blocked, failed, notFound, ok, type SourceOutcome } from '../../sources/source.js';
import { createUpstreamPolicy, type ResilienceOptions } from './resilience.js';

const FAST: ResilienceOptions = { retryInitialDelayMs: 1, retryMaxDelayMs: 2, retryMinRemainingMs: 10 };

/** An attempt function answering the given outcomes in order (the last one repeats), counting calls. */
function scripted(...outcomes: SourceOutcome<string>[]): { attempt: () => Promise<SourceOutcome<string>>; calls: () => number } {
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
  it.each([['connection'], ['http_5xx']])('retries %s once, no more, and returns the last outcome', async (reason) => {
    const policy = createUpstreamPolicy(FAST);
    const source = scripted(failed(reason));
    expect(await policy.execute(source.attempt, context())).toEqual(failed(reason));
    expect(source.calls()).toBe(2);
  });

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
    const policy = createUpstreamPolicy(BREAKER);
    const source = scripted(failed('timeout'), failed('timeout'), ok('data'));
    await policy.execute(source.attempt, context());
    await policy.execute(source.attempt, context());
    expect(policy.breakerState()).toBe('open');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await policy.execute(source.attempt, context())).toEqual(ok('data'));
    expect(policy.breakerState()).toBe('closed');
  });

  it('opens again when the probe fails', async () => {
    const policy = createUpstreamPolicy(BREAKER);
    const source = scripted(failed('timeout'));
    await policy.execute(source.attempt, context());
    await policy.execute(source.attempt, context());
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await policy.execute(source.attempt, context())).toEqual(failed('timeout'));
    expect(source.calls()).toBe(3);
    expect(policy.breakerState()).toBe('open');
    expect(await policy.execute(source.attempt, context())).toEqual(failed('circuit_open'));
  });
});
