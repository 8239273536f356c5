import { describe, expect, it } from 'vitest';
import { createMemoryPolitenessStore } from './politeness-store.js';

describe('memory politeness store', () => {
  it('grants requestsPerMinute slots per sliding minute, then says when the oldest frees up', async () => {
    const store = createMemoryPolitenessStore();
    const startMs = 1_000_000;
    expect(await store.takeBudgetSlot('u', 2, startMs)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 2, startMs + 10_000)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 2, startMs + 20_000)).toEqual({
      granted: false,
      retryInMs: 40_000,
      by: 'budget',
    });
    expect(await store.takeBudgetSlot('u', 2, startMs + 60_001)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 2, startMs + 60_002)).toEqual({
      granted: false,
      retryInMs: 9_998,
      by: 'budget',
    });
  });

  it('keeps budgets and pauses apart per upstream', async () => {
    const store = createMemoryPolitenessStore();
    await store.takeBudgetSlot('a', 1, 0);
    expect(await store.takeBudgetSlot('b', 1, 0)).toEqual({ granted: true });
    await store.writePause('a', { untilMs: 5_000, consecutiveBlocks: 1 });
    expect(await store.readPause('a')).toEqual({ untilMs: 5_000, consecutiveBlocks: 1 });
    expect(await store.readPause('b')).toEqual({ untilMs: 0, consecutiveBlocks: 0 });
  });

  it('counts a large window exactly as its times expire, whatever the order the clock gave them', async () => {
    const store = createMemoryPolitenessStore();
    // 5,000 requests over 50 s, one every 10 ms, under a budget of 5,000 a minute.
    for (let index = 0; index < 5_000; index += 1)
      expect(await store.takeBudgetSlot('u', 5_000, index * 10)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 5_000, 50_000)).toEqual({ granted: false, retryInMs: 10_000, by: 'budget' });
    // At 70 s the first 1,001 times (0 … 10,000 ms) have left the window: 1,001 slots free.
    for (let index = 0; index < 1_001; index += 1)
      expect(await store.takeBudgetSlot('u', 5_000, 70_000)).toEqual({ granted: true });
    expect((await store.takeBudgetSlot('u', 5_000, 70_000)).granted).toBe(false);
    // A clock that steps back is recorded in order, not lost.
    expect(await store.takeBudgetSlot('v', 2, 1_000)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('v', 2, 500)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('v', 2, 60_600)).toEqual({ granted: true });
    expect(store.hasLiveBudget('v', 60_600)).toBe(true);
    expect(store.hasLiveBudget('v', 200_000)).toBe(false);
  });

  it('keeps a client within its share of the budget, while other clients still get theirs', async () => {
    const store = createMemoryPolitenessStore();
    const share = { client: 'greedy', clientLimit: 3 };
    for (let i = 0; i < 3; i += 1)
      expect(await store.takeBudgetSlot('u', 6, 1_000 + i, share)).toEqual({ granted: true });
    // Its share is spent until its oldest request leaves the minute; the budget is not.
    expect(await store.takeBudgetSlot('u', 6, 2_000, share)).toEqual({
      granted: false,
      retryInMs: 59_000,
      by: 'share',
    });
    expect(await store.takeBudgetSlot('u', 6, 2_000, { client: 'other', clientLimit: 3 })).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 6, 2_000)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 6, 61_000, share)).toEqual({ granted: true });
  });

  it('charges a cost of several requests together, or not at all', async () => {
    const store = createMemoryPolitenessStore();
    expect(await store.takeBudgetSlot('u', 5, 0, { cost: 2 })).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 5, 10, { cost: 2 })).toEqual({ granted: true });
    // One slot left: a search of two waits until the first has left.
    expect(await store.takeBudgetSlot('u', 5, 20, { cost: 2 })).toEqual({
      granted: false,
      retryInMs: 59_980,
      by: 'budget',
    });
    expect(await store.takeBudgetSlot('u', 5, 20)).toEqual({ granted: true });
  });
});
