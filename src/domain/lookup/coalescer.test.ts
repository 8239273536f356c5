import { describe, expect, it } from 'vitest';
import { createInProcessCoalescer } from './coalescer.js';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('in-process coalescer', () => {
  it('runs the work once for concurrent callers of one key and gives each the same result', async () => {
    const coalescer = createInProcessCoalescer();
    const gate = deferred<string>();
    let runs = 0;
    const work = async (): Promise<string> => {
      runs += 1;
      return gate.promise;
    };
    const callers = Array.from({ length: 50 }, () => coalescer.run('k', work));
    gate.resolve('value');
    expect(await Promise.all(callers)).toEqual(Array.from({ length: 50 }, () => 'value'));
    expect(runs).toBe(1);
    expect(coalescer.inFlightCount()).toBe(0);
  });

  it('runs different keys separately, and runs a key again once the previous run settled', async () => {
    const coalescer = createInProcessCoalescer();
    let runs = 0;
    const work = async (): Promise<number> => ++runs;
    const [a, b] = await Promise.all([coalescer.run('a', work), coalescer.run('b', work)]);
    expect(new Set([a, b])).toEqual(new Set([1, 2]));
    expect(await coalescer.run('a', work)).toBe(3);
  });

  it('shares a rejection with every caller and forgets the key', async () => {
    const coalescer = createInProcessCoalescer();
    const work = async (): Promise<never> => {
      throw new Error('boom');
    };
    const results = await Promise.allSettled([coalescer.run('k', work), coalescer.run('k', work)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(coalescer.inFlightCount()).toBe(0);
  });

  it('releases a caller that gives up at once, without aborting the work others still wait for', async () => {
    const coalescer = createInProcessCoalescer();
    const gate = deferred<string>();
    let workSignal: AbortSignal | undefined;
    const work = async (signal: AbortSignal): Promise<string> => {
      workSignal = signal;
      return gate.promise;
    };
    const impatient = new AbortController();
    const patient = new AbortController();
    const first = coalescer.run('k', work, { signal: impatient.signal });
    const second = coalescer.run('k', work, { signal: patient.signal });
    impatient.abort(new Error('deadline'));
    await expect(first).rejects.toThrow('deadline');
    expect(workSignal?.aborted).toBe(false);
    gate.resolve('value');
    expect(await second).toBe('value');
  });

  it('lets the work run on when every waiting caller has given up: callers detach, they never cancel', async () => {
    const coalescer = createInProcessCoalescer();
    const gate = deferred<string>();
    let workSignal: AbortSignal | undefined;
    let finished: string | undefined;
    const work = async (signal: AbortSignal): Promise<string> => {
      workSignal = signal;
      finished = await gate.promise;
      return finished;
    };
    const one = new AbortController();
    const two = new AbortController();
    const first = coalescer.run('k', work, { signal: one.signal });
    const second = coalescer.run('k', work, { signal: two.signal });
    await Promise.resolve();
    one.abort(new Error('one left'));
    two.abort(new Error('two left'));
    await expect(first).rejects.toThrow('one left');
    await expect(second).rejects.toThrow('two left');
    expect(workSignal?.aborted).toBe(false);
    expect(coalescer.inFlightCount()).toBe(1);
    // A caller arriving now joins the run still in flight rather than starting another.
    const late = coalescer.run('k', work);
    gate.resolve('value');
    expect(await late).toBe('value');
    expect(finished).toBe('value');
    expect(coalescer.inFlightCount()).toBe(0);
  });

  it('ends the work only through the run signal its starter gave (shutdown)', async () => {
    const coalescer = createInProcessCoalescer();
    const shutdown = new AbortController();
    const work = (signal: AbortSignal): Promise<string> =>
      new Promise((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(new Error('work aborted')), { once: true }),
      );
    const caller = coalescer.run('k', work, { runSignal: shutdown.signal });
    await Promise.resolve();
    shutdown.abort();
    await expect(caller).rejects.toThrow('work aborted');
    expect(coalescer.inFlightCount()).toBe(0);
  });

  it('keeps the work alive while a caller without a signal waits', async () => {
    const coalescer = createInProcessCoalescer();
    const gate = deferred<string>();
    let workSignal: AbortSignal | undefined;
    const work = async (signal: AbortSignal): Promise<string> => {
      workSignal = signal;
      return gate.promise;
    };
    const leaving = new AbortController();
    const first = coalescer.run('k', work, { signal: leaving.signal });
    const holder = coalescer.run('k', work);
    leaving.abort(new Error('left'));
    await expect(first).rejects.toThrow('left');
    expect(workSignal?.aborted).toBe(false);
    gate.resolve('value');
    expect(await holder).toBe('value');
  });

  it('rejects a caller whose signal is already aborted without starting work', async () => {
    const coalescer = createInProcessCoalescer();
    let runs = 0;
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    await expect(coalescer.run('k', async () => ++runs, { signal: controller.signal })).rejects.toThrow('too late');
    expect(runs).toBe(0);
  });
});
