import { describe, expect, it } from 'vitest';
import type { PhoneNumberParser } from '../phone-number.js';
import { memoizeParser } from './memoize-parser.js';

describe('memoizeParser', () => {
  it('parses each spelling once and answers repeats from memory', () => {
    let calls = 0;
    const parse: PhoneNumberParser = (raw) => {
      calls += 1;
      return { ok: false, reason: raw.length > 3 ? 'invalid_number' : 'empty' };
    };
    const memoized = memoizeParser(parse, 2);
    expect(memoized('0612')).toEqual({ ok: false, reason: 'invalid_number' });
    expect(memoized('0612')).toEqual({ ok: false, reason: 'invalid_number' });
    expect(calls).toBe(1);
    memoized('a');
    memoized('b'); // evicts '0612' (bounded)
    memoized('0612');
    expect(calls).toBe(4);
  });

  it('does not remember inputs longer than any accepted spelling', () => {
    let calls = 0;
    const memoized = memoizeParser(() => {
      calls += 1;
      return { ok: false, reason: 'too_long' };
    });
    const long = '0'.repeat(40);
    memoized(long);
    memoized(long);
    expect(calls).toBe(2);
  });
});
