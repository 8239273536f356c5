import { describe, expect, it } from 'vitest';
import { compactHeap, fullCollection, startIdleCompaction, unusedOldSpaceBytes, type CompactionReport } from './idle-compaction.js';

const MIB = 1024 * 1024;

/** An idle compaction on a hand-driven clock, activity count and heap. */
function harness(options: { unused?: number } = {}) {
  let clock = 0;
  let activity = 0;
  let writes = 0;
  let unused = options.unused ?? 20 * MIB;
  const reports: CompactionReport[] = [];
  const churning: boolean[] = [];
  const idle = startIdleCompaction({
    onChurning: (now) => churning.push(now),
    churningWritesPerCheck: 30,
    activity: () => activity,
    churn: () => writes,
    minChurn: 150,
    quietMs: 2000,
    checkMs: 60_000,
    minFreeBytes: 4 * MIB,
    now: () => clock,
    unusedOldBytes: () => unused,
    compact: () => {
      unused = MIB;
    },
    onCompacted: (report) => reports.push(report),
  });
  return {
    idle,
    reports,
    churning,
    /** Cold lookups: requests whose cache writes are worth a compaction once quiet. */
    request: () => {
      activity += 1;
      writes += 200;
    },
    /** Fewer cold lookups: 100 entries written, under the threshold alone. */
    fewWrites: () => {
      activity += 1;
      writes += 100;
    },
    /** A request answered from the caches: nothing written. */
    cachedRequest: () => (activity += 1),
    advance: (ms: number) => {
      clock += ms;
      idle.check();
    },
    fragment: (bytes: number) => (unused = bytes),
  };
}

describe('idle compaction', () => {
  it('does nothing before the first API request, however long the process idles', () => {
    const run = harness();
    for (let second = 0; second < 30; second += 1) run.advance(1000);
    expect(run.idle.compactions()).toBe(0);
    run.idle.stop();
  });

  it('compacts once the API has been quiet for the whole quiet time after requests, and reports what it gave back', () => {
    const run = harness();
    run.request();
    run.advance(500);
    run.request();
    run.advance(500);
    // Quiet from here: 1.5 s is not enough.
    run.advance(1500);
    expect(run.idle.compactions()).toBe(0);
    run.advance(500);
    expect(run.idle.compactions()).toBe(1);
    expect(run.reports).toEqual([{ freeBefore: 20 * MIB, freeAfter: MIB, durationMs: 0 }]);
    run.idle.stop();
  });

  it('runs once per quiet period: not again until requests came and stopped again', () => {
    const run = harness();
    run.request();
    run.advance(1000);
    for (let second = 0; second < 10; second += 1) run.advance(1000);
    expect(run.idle.compactions()).toBe(1);
    run.fragment(30 * MIB);
    run.request();
    run.advance(1000);
    run.advance(1000);
    expect(run.idle.compactions()).toBe(1);
    run.advance(1000);
    expect(run.idle.compactions()).toBe(2);
    run.idle.stop();
  });

  it('does not run after requests that wrote little to the caches (answers served from them); writes add up over quiet periods', () => {
    const run = harness();
    for (let tick = 0; tick < 50; tick += 1) run.cachedRequest();
    run.advance(1000);
    run.advance(2000);
    expect(run.idle.compactions()).toBe(0);
    // 100 entries written: not yet worth it.
    run.fewWrites();
    run.advance(1000);
    run.advance(2000);
    expect(run.idle.compactions()).toBe(0);
    // 200 since the last compaction (none): worth it.
    run.fewWrites();
    run.advance(1000);
    run.advance(2000);
    expect(run.idle.compactions()).toBe(1);
    run.idle.stop();
  });

  it('says when the caches start and stop churning (the heap growth is bounded meanwhile), and stops saying it when stopped', () => {
    const run = harness();
    run.cachedRequest();
    run.advance(500);
    expect(run.churning).toEqual([]);
    run.request();
    run.advance(500);
    run.request();
    run.advance(500);
    expect(run.churning).toEqual([true]);
    run.advance(500);
    expect(run.churning).toEqual([true, false]);
    run.request();
    run.advance(500);
    run.idle.stop();
    expect(run.churning).toEqual([true, false, true, false]);
  });

  it('never runs while requests keep coming', () => {
    const run = harness();
    for (let tick = 0; tick < 100; tick += 1) {
      run.request();
      run.advance(1000);
    }
    expect(run.idle.compactions()).toBe(0);
    run.idle.stop();
  });

  it('leaves a heap with less unused room than the threshold alone, and does not look again in that quiet period', () => {
    const run = harness({ unused: 3 * MIB });
    run.request();
    run.advance(1000);
    run.advance(2000);
    expect(run.idle.compactions()).toBe(0);
    run.fragment(40 * MIB);
    run.advance(1000);
    expect(run.idle.compactions()).toBe(0);
    run.request();
    run.advance(1000);
    run.advance(2000);
    expect(run.idle.compactions()).toBe(1);
    run.idle.stop();
  });
});

describe('compactHeap', () => {
  it('moves the survivors of half-emptied pages together, which a full collection alone does not', () => {
    // Strings of 300 bytes side by side in the old generation, then every other one dropped: pages half full.
    const strings: Array<string | undefined> = [];
    // Each a flat string of its own (a template would make a small cons string over shared parts).
    for (let index = 0; index < 120_000; index += 1) strings.push(Buffer.alloc(300, index % 256).toString('latin1'));
    const gc = fullCollection();
    // Two full collections move the survivors to the old generation, in the array's order.
    gc();
    gc();
    for (let index = 1; index < strings.length; index += 2) strings[index] = undefined;
    gc();
    const fragmented = unusedOldSpaceBytes();
    compactHeap();
    const compacted = unusedOldSpaceBytes();
    expect(strings.filter((text) => text !== undefined)).toHaveLength(60_000);
    // About 18 MiB died between the survivors: a full collection leaves it in the pages, compaction gives it back.
    expect(fragmented).toBeGreaterThan(12 * MIB);
    expect(compacted).toBeLessThan(fragmented - 12 * MIB);
  });
});
