import { describe, expect, it } from 'vitest';
import { useRedisTestClients, waitFor } from '../../../test/support/redis.js';
import { heldBy } from '../../../test/support/signals.js';
import { createRedisFetchCoalescer, DEFAULT_LOCK_LEASE_MS } from './redis-fetch-coalescer.js';

const { prefix, admin, readyClient } = useRedisTestClients('coalesce');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise the test resolves itself: work held open until the test has seen what it waits for. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** `read`, which also opens `waiting` on its first call: another instance is polling, so it found the lock held. */
function observed<T>(read: () => Promise<T | undefined>, waiting: { open: () => void }): () => Promise<T | undefined> {
  return () => {
    waiting.open();
    return read();
  };
}

/** A stand-in for the shared cache the engine writes and `readSettled` reads. */
function sharedStore() {
  const values = new Map<string, string>();
  return {
    values,
    read: (key: string) => async () => values.get(key),
  };
}

describe('Redis fetch coalescer', () => {
  it('leaves nothing on the run signal, which lives as long as the engine (AbortSignal.any() left a WeakRef per run)', async () => {
    const coalescer = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const engineLifetime = new AbortController();
    for (let index = 0; index < 50; index += 1) {
      expect(await coalescer.run(`lifetime-${index}`, async () => index, { runSignal: engineLifetime.signal })).toBe(
        index,
      );
    }
    expect(heldBy(engineLifetime.signal)).toBe(0);
  });

  it('concurrent runs of one key on two instances cause one execution; the others read its result', async () => {
    const store = sharedStore();
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    let executions = 0;
    // The holder finishes only once the other instance is seen waiting on its lock.
    const otherWaits = gate();
    const work = async () => {
      executions += 1;
      await otherWaits.opened;
      store.values.set('k1', 'fetched');
      return 'fetched';
    };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? first : second).run('k1', work, {
          signal: AbortSignal.timeout(3000),
          readSettled: observed(store.read('k1'), otherWaits),
        }),
      ),
    );
    expect(executions).toBe(1);
    expect(results.every((result) => result === 'fetched')).toBe(true);
    expect(await admin.exists(`${prefix}lock:k1`)).toBe(0);
  });

  it('when the holder fails without a result, a waiter on the other instance takes the lock and fetches', async () => {
    const store = sharedStore();
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const secondWaits = gate();
    const failing = first.run('k2', async () => {
      await secondWaits.opened;
      throw new Error('upstream failed');
    });
    await waitFor(async () => (await admin.exists(`${prefix}lock:k2`)) === 1);
    const recovered = second.run('k2', async () => 'second', {
      signal: AbortSignal.timeout(2000),
      readSettled: observed(store.read('k2'), secondWaits),
    });
    await expect(failing).rejects.toThrow('upstream failed');
    await expect(recovered).resolves.toBe('second');
  });

  it('a waiter that gives up detaches: its flight goes on and takes the holder’s result when it appears', async () => {
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const store = sharedStore();
    // The holder keeps the lock until the waiter has given up.
    const waiterDone = gate();
    let secondExecuted = false;
    const slow = first.run('k3', async () => {
      await waiterDone.opened;
      store.values.set('k3', 'slow');
      return 'slow';
    });
    await waitFor(async () => (await admin.exists(`${prefix}lock:k3`)) === 1);
    const secondWork = async (): Promise<string> => {
      secondExecuted = true;
      return 'never';
    };
    const waiting = second.run('k3', secondWork, { signal: AbortSignal.timeout(150), readSettled: store.read('k3') });
    await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError' });
    // Still in flight on the second instance: a later caller joins it rather than starting one.
    expect(second.inFlightCount()).toBe(1);
    const joined = second.run('k3', secondWork, { readSettled: store.read('k3') });
    waiterDone.open();
    await expect(slow).resolves.toBe('slow');
    await expect(joined).resolves.toBe('slow');
    expect(secondExecuted).toBe(false);
  });

  it('bounds a flight’s wait for another instance by maxWaitMs, whoever waits for it', async () => {
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000, maxWaitMs: 200 });
    const held = gate();
    const slow = first.run('k3b', async () => {
      await held.opened;
      return 'slow';
    });
    await waitFor(async () => (await admin.exists(`${prefix}lock:k3b`)) === 1);
    let secondExecuted = false;
    const waiting = second.run(
      'k3b',
      async () => {
        secondExecuted = true;
        return 'never';
      },
      { readSettled: async () => undefined },
    );
    // The bound is the behaviour under test: with no caller deadline, it alone ends the wait.
    await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(second.inFlightCount()).toBe(0);
    held.open();
    await expect(slow).resolves.toBe('slow');
    expect(secondExecuted).toBe(false);
  });

  it('falls back to in-process coalescing when Redis is unreachable', async () => {
    const coalescer = createRedisFetchCoalescer({ client: await readyClient('redis://127.0.0.1:1'), lockTtlMs: 2000 });
    let executions = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        // All twenty calls are made in one turn, before the shared work's first step runs.
        coalescer.run('k4', async () => {
          executions += 1;
          return executions;
        }),
      ),
    );
    expect(executions).toBe(1);
    expect(new Set(results)).toEqual(new Set([1]));
  });

  it('a holder working longer than its lease keeps the lock by renewing it: the other instance never fetches', async () => {
    const store = sharedStore();
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 600 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 600 });
    let executions = 0;
    const holder = first.run('k5', async () => {
      executions += 1;
      // Working for 2.5 leases is the behaviour under test: only renewals keep the lock that long.
      await sleep(1_500);
      store.values.set('k5', 'held');
      return 'held';
    });
    await waitFor(async () => (await admin.exists(`${prefix}lock:k5`)) === 1);
    const waiter = second.run(
      'k5',
      async () => {
        executions += 1;
        return 'second';
      },
      { signal: AbortSignal.timeout(5_000), readSettled: store.read('k5') },
    );
    await expect(holder).resolves.toBe('held');
    await expect(waiter).resolves.toBe('held');
    expect(executions).toBe(1);
  });

  it('a holder that dies mid-fetch stalls the other instance for about one lease, after which it fetches itself', async () => {
    const holderClient = await readyClient();
    const holder = createRedisFetchCoalescer({ client: holderClient });
    const other = createRedisFetchCoalescer({ client: await readyClient() });
    const stuck = new AbortController();
    // The holder's work never ends on its own: only its death frees the lock.
    const holding = holder.run(
      'k6',
      (signal) =>
        new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))),
      {
        signal: stuck.signal,
        runSignal: stuck.signal,
      },
    );
    holding.catch(() => undefined);
    await waitFor(async () => (await admin.exists(`${prefix}lock:k6`)) === 1);
    // The holder's process dies: its connection is gone, nothing renews or releases the lock.
    holderClient.redis.disconnect();
    const startedAt = performance.now();
    const result = await other.run('k6', async () => 'taken over', {
      signal: AbortSignal.timeout(10_000),
      readSettled: async () => undefined,
    });
    const stalledMs = performance.now() - startedAt;
    expect(result).toBe('taken over');
    // The lease is the deadline under test; one extra second of slack for a loaded machine.
    expect(stalledMs).toBeLessThan(DEFAULT_LOCK_LEASE_MS + 1_000);
    stuck.abort();
  });
});
