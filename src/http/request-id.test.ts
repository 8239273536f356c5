import { describe, expect, it } from 'vitest';
import { freshRequestId } from './request-id.js';

// RFC 9562: version 4 in the 13th hex digit, variant 10xx (8, 9, a or b) in the 17th.
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('fresh request ids', () => {
  it('are version-4 UUIDs, all different, across several refills of the random pool', () => {
    const seen = new Set<string>();
    // 128 per refill: ten refills and a part.
    for (let i = 0; i < 1300; i += 1) {
      const id = freshRequestId();
      expect(id).toMatch(UUID_V4);
      seen.add(id);
    }
    expect(seen.size).toBe(1300);
  });

  it('use every hex digit in every free position (random bytes, not a pattern)', () => {
    // Positions other than the dashes, the version digit and the variant digit.
    const free = [...Array(36).keys()].filter((at) => ![8, 13, 14, 18, 19, 23].includes(at));
    const digits = free.map(() => new Set<string>());
    for (let i = 0; i < 2000; i += 1) {
      const id = freshRequestId();
      free.forEach((at, n) => digits[n]?.add(id[at] ?? ''));
    }
    // With 2,000 draws, a digit missing from a position would happen with odds of about 16 × (15/16)^2000.
    for (const seenAt of digits) expect(seenAt.size).toBe(16);
  });

  it('give a string that stays the same after the next one is made (the buffer is not shared)', () => {
    const first = freshRequestId();
    const copy = `${first}`;
    freshRequestId();
    expect(first).toBe(copy);
    expect(first).toMatch(UUID_V4);
  });
});
