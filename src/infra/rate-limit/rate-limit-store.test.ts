import { describe, expect, it } from 'vitest';
import { createMemoryRateLimitStore, SWEEP_STEP } from './rate-limit-store.js';

describe('memory sliding-log rate limit', () => {
  it('lets exactly `limit` requests through in one window and refuses the next', () => {
    let now = 1_000_000;
    const store = createMemoryRateLimitStore({ now: () => now });
    const decisions = Array.from({ length: 31 }, () => store.hitSync('client', 30, 60_000));
    expect(decisions.slice(0, 30).every((d) => d.allowed)).toBe(true);
    expect(decisions[29]?.remaining).toBe(0);
    expect(decisions[30]).toMatchObject({ allowed: false, remaining: 0, resetMs: 60_000 });
    now += 59_999;
    expect(store.hitSync('client', 30, 60_000).allowed).toBe(false);
  });

  it('frees slots one by one as the window slides, never 2× the limit across a boundary', () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    // 10 requests spread over the first 10 s of the window.
    for (let i = 0; i < 10; i += 1) {
      now = i * 1000;
      expect(store.hitSync('c', 10, 60_000).allowed).toBe(true);
    }
    now = 59_500;
    expect(store.hitSync('c', 10, 60_000).allowed).toBe(false);
    now = 60_000; // the first request (t=0) leaves the window: exactly one slot frees
    expect(store.hitSync('c', 10, 60_000).allowed).toBe(true);
    expect(store.hitSync('c', 10, 60_000).allowed).toBe(false);
    now = 61_000;
    expect(store.hitSync('c', 10, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('does not count refused requests, so a hammering client recovers as the window slides', () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    for (let i = 0; i < 3; i += 1) store.hitSync('c', 3, 1000);
    for (let i = 0; i < 100; i += 1) {
      now = i * 5;
      store.hitSync('c', 3, 1000);
    }
    now = 1000;
    expect(store.hitSync('c', 3, 1000).allowed).toBe(true);
  });

  it('keeps clients apart and forgets idle ones', () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    expect(store.hitSync('a', 1, 1000).allowed).toBe(true);
    expect(store.hitSync('b', 1, 1000).allowed).toBe(true);
    expect(store.hitSync('a', 1, 1000).allowed).toBe(false);
    now = 5000;
    store.hitSync('c', 1, 1000);
    expect(store.size()).toBe(1);
  });

  it('cleans up with bounded work per request at any number of clients, and still forgets every idle client', () => {
    let now = 0;
    const store = createMemoryRateLimitStore({ now: () => now });
    const clients = 600_000;
    for (let i = 0; i < clients; i += 1) store.hitSync(`client-${i}`, 30, 60_000);
    expect(store.size()).toBe(clients);
    // Every bucket is now idle; each request examines at most SWEEP_STEP of them.
    now = 61_000;
    let before = store.sweepWork();
    for (let i = 0; i < 1_000; i += 1) {
      store.hitSync('busy', 30, 60_000);
      const work = store.sweepWork() - before;
      expect(work).toBeLessThanOrEqual(SWEEP_STEP);
      expect(work).toBeGreaterThan(0);
      before = store.sweepWork();
    }
    // One pass of the cursor removes them all.
    for (let i = 0; i < clients / SWEEP_STEP; i += 1) store.hitSync('busy', 1_000_000, 60_000);
    expect(store.size()).toBe(1);
  });

  it('seeds a client with the accepts a shared store last reported, placed so that they leave no sooner than the real ones', () => {
    let now = 10_000;
    const store = createMemoryRateLimitStore({ now: () => now });
    store.seed('c', 28, 9_000, 60_000);
    expect(store.hitSync('c', 30, 60_000).allowed).toBe(true);
    expect(store.hitSync('c', 30, 60_000).allowed).toBe(true);
    expect(store.hitSync('c', 30, 60_000).allowed).toBe(false);
    now = 69_000; // the seeded accepts (at 9 000) leave the window
    expect(store.hitSync('c', 30, 60_000)).toMatchObject({ allowed: true, remaining: 27 });
    expect(store.hasLiveLog('c')).toBe(true);
    expect(store.hasLiveLog('never-seen')).toBe(false);
  });
});
