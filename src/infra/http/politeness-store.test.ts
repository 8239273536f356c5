import { describe, expect, it } from 'vitest';
import { createMemoryPolitenessStore } from './politeness-store.js';

describe('memory politeness store', () => {
  it('grants requestsPerMinute slots per sliding minute, then says when the oldest frees up', async () => {
    const store = createMemoryPolitenessStore();
    const startMs = 1_000_000;
    expect(await store.takeBudgetSlot('u', 2, startMs)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 2, startMs + 10_000)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 2, startMs + 20_000)).toEqual({ granted: false, retryInMs: 40_000 });
    expect(await store.takeBudgetSlot('u', 2, startMs + 60_001)).toEqual({ granted: true });
    expect(await store.takeBudgetSlot('u', 2, startMs + 60_002)).toEqual({ granted: false, retryInMs: 9_998 });
  });

  it('keeps budgets and pauses apart per upstream', async () => {
    const store = createMemoryPolitenessStore();
    await store.takeBudgetSlot('a', 1, 0);
    expect(await store.takeBudgetSlot('b', 1, 0)).toEqual({ granted: true });
    await store.writePause('a', { untilMs: 5_000, consecutiveBlocks: 1 });
    expect(await store.readPause('a')).toEqual({ untilMs: 5_000, consecutiveBlocks: 1 });
    expect(await store.readPause('b')).toEqual({ untilMs: 0, consecutiveBlocks: 0 });
  });
});
