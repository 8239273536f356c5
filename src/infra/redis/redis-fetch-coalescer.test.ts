import { describe, expect, it } from 'vitest';
import { useRedisTestClients } from '../../../test/support/redis.js';
import { createRedisFetchCoalescer } from './redis-fetch-coalescer.js';

const { prefix, admin, readyClient } = useRedisTestClients('coalesce');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A stand-in for the shared cache the engine writes and `readSettled` reads. */
function sharedStore() {
  const values = new Map<string, string>();
  return {
    values,
    read: (key: string) => async () => values.get(key),
  };
}

describe('Redis fetch coalescer', () => {
  it('concurrent runs of one key on two instances cause one execution; the others read its result', async () => {
    const store = sharedStore();
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    let executions = 0;
    const work = async () => {
      executions += 1;
      await sleep(100);
      store.values.set('k1', 'fetched');
      return 'fetched';
    };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? first : second).run('k1', work, { signal: AbortSignal.timeout(3000), readSettled: store.read('k1') })),
    );
    expect(executions).toBe(1);
    expect(results.every((result) => result === 'fetched')).toBe(true);
    expect(await admin.exists(`${prefix}lock:k1`)).toBe(0);
  });

  it('when the holder fails without a result, a waiter on the other instance takes the lock and fetches', async () => {
    const store = sharedStore();
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const failing = first.run('k2', async () => {
      await sleep(80);
      throw new Error('upstream failed');
    });
    await sleep(10);
    const recovered = second.run('k2', async () => 'second', { signal: AbortSignal.timeout(2000), readSettled: store.read('k2') });
    await expect(failing).rejects.toThrow('upstream failed');
    await expect(recovered).resolves.toBe('second');
  });

  it('a waiter gives up at its deadline while the lock is held elsewhere', async () => {
    const first = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const second = createRedisFetchCoalescer({ client: await readyClient(), lockTtlMs: 2000 });
    const slow = first.run('k3', async () => {
      await sleep(600);
      return 'slow';
    });
    await sleep(20);
    const startedAt = performance.now();
    await expect(second.run('k3', async () => 'never', { signal: AbortSignal.timeout(150), readSettled: async () => undefined })).rejects.toThrow();
    expect(performance.now() - startedAt).toBeLessThan(400);
    await expect(slow).resolves.toBe('slow');
  });

  it('falls back to in-process coalescing when Redis is unreachable', async () => {
    const coalescer = createRedisFetchCoalescer({ client: await readyClient('redis://127.0.0.1:1'), lockTtlMs: 2000 });
    let executions = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        coalescer.run('k4', async () => {
          executions += 1;
          await sleep(30);
          return executions;
        }),
      ),
    );
    expect(executions).toBe(1);
    expect(new Set(results)).toEqual(new Set([1]));
  });
});
