// anySignal, and the leak it replaces: AbortSignal.any() leaves a WeakRef on a long-lived source
// (the engine's process-long `closing` signal) for every signal it makes on Node 20 and 26, so RSS
// grew with every number that went through the process (docs/cache.md).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { heldBy } from '../../test/support/signals.js';
import { distinctNumber, fakeSource, healthyFakeSources, PRIMARY_DATA, TEST_CONFIG } from '../../harness/lookup.js';
import { createMemorySourceCache } from '../infra/cache/memory-cache.js';
import { createKeyedHasher } from '../infra/hash.js';
import { anySignal } from './abort-signals.js';
import { createLookupService } from './lookup/lookup-service.js';
import { createUpstreamPolicy } from './lookup/resilience.js';
import { createSourceFetch, REAL_TIMERS } from './lookup/source-fetch.js';
import { ok } from './ports/source.js';

const MODULE_URL = new URL('./abort-signals.ts', import.meta.url).href;

// Run in a child process started with `--expose-gc` (a test switch; the service never runs with it).
const HEAP_GROWTH_AFTER_RELEASE = `
import { anySignal } from ${JSON.stringify(MODULE_URL)};
const longLived = new AbortController();
globalThis.gc();
const before = process.memoryUsage().heapUsed;
for (let index = 0; index < 200000; index += 1) anySignal([longLived.signal, new AbortController().signal]).release();
let collections = 0;
const collect = () => {
  globalThis.gc();
  collections += 1;
  if (collections < 5) setImmediate(collect);
  else process.stdout.write(JSON.stringify({ grewBytes: process.memoryUsage().heapUsed - before, node: process.versions.node }));
};
setImmediate(collect);
`;

describe('anySignal', () => {
  it('leaves nothing on a long-lived source once released and collected, on the Node this runs on', () => {
    const run = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', HEAP_GROWTH_AFTER_RELEASE],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { grewBytes: number; node: string };
    expect(
      result.grewBytes,
      `Node ${result.node}: 200,000 released signals left something on their source`,
    ).toBeLessThan(2 * 1024 * 1024);
  });

  it('aborts with the reason of the first source that aborts, and then leaves the others', () => {
    const first = new AbortController();
    const second = new AbortController();
    const { signal } = anySignal([first.signal, second.signal]);
    expect(signal.aborted).toBe(false);
    second.abort('second reason');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('second reason');
    expect(heldBy(first.signal)).toBe(0);
    first.abort('later');
    expect(signal.reason).toBe('second reason');
  });

  it('is aborted at once when a source already is, and holds on to nothing', () => {
    const live = new AbortController();
    const { signal, release } = anySignal([live.signal, AbortSignal.abort('gone')]);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('gone');
    expect(heldBy(live.signal)).toBe(0);
    release();
  });

  it('detaches from every source on release, and is no longer aborted by them', () => {
    const longLived = new AbortController();
    const deadline = new AbortController();
    const linked = anySignal([longLived.signal, deadline.signal]);
    expect(heldBy(longLived.signal)).toBe(1);
    linked.release();
    linked.release();
    expect(heldBy(longLived.signal)).toBe(0);
    expect(heldBy(deadline.signal)).toBe(0);
    longLived.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});

describe('the lookup engine leaves nothing on a long-lived signal', () => {
  it("an upstream fetch leaves nothing on the engine's run signal (the closing signal, alive as long as the process)", async () => {
    const closing = new AbortController();
    const fetchAndStore = createSourceFetch({
      policies: { primary: createUpstreamPolicy(), community: createUpstreamPolicy(), signals: createUpstreamPolicy() },
      timers: REAL_TIMERS,
      sourceTimeoutMs: 1000,
      now: Date.now,
      random: () => 0.5,
      cachePolicy: { okTtlSeconds: 60, notFoundTtlSeconds: 60, staleSeconds: 60, jitterRatio: 0 },
      logger: undefined,
      writeCache: () => undefined,
    });
    const source = fakeSource('primary', () => ok(PRIMARY_DATA));
    for (let index = 0; index < 200; index += 1) {
      const result = await fetchAndStore(
        source,
        distinctNumber(index),
        `key-${index}`,
        `hash-${index}`,
        undefined,
        closing.signal,
      );
      expect(result.outcome.status).toBe('ok');
    }
    expect(heldBy(closing.signal)).toBe(0);
  });

  it("a lookup leaves nothing on the caller's signal", async () => {
    const service = createLookupService({
      sources: healthyFakeSources(),
      cache: createMemorySourceCache({ maxEntries: 10 }),
      hashKey: createKeyedHasher('abort-signals-secret-0123456789'),
      timings: TEST_CONFIG,
    });
    const callerLifetime = new AbortController();
    for (let index = 0; index < 200; index += 1)
      await service.lookup(distinctNumber(index), { signal: callerLifetime.signal });
    expect(heldBy(callerLifetime.signal)).toBe(0);
    service.close();
  });
});
