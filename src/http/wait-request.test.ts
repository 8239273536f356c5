import { describe, expect, it } from 'vitest';
import { callerDeadlineMs } from '../domain/lookup/types.js';
import { preferredWaitSeconds, waitRequestOf } from './wait-request.js';

describe('Prefer: wait (RFC 7240)', () => {
  it.each([
    ['wait=5', 5],
    ['WAIT = 2', 2],
    ['respond-async, wait=10', 10],
    ['wait="3"', 3],
    ['wait=1; foo=bar', 1],
    ['return=minimal', undefined],
    ['wait=soon', undefined],
    ['wait=-1', undefined],
    ['wait=1.5', undefined],
    ['', undefined],
  ] as const)('reads %j as %s', (header, seconds) => {
    expect(preferredWaitSeconds(header)).toBe(seconds);
  });

  it('reads a header sent twice', () => {
    expect(preferredWaitSeconds(['return=minimal', 'wait=4'])).toBe(4);
  });
});

describe('the wait of a request', () => {
  it('is absent without ?wait or Prefer', () => {
    expect(waitRequestOf({}, undefined, 4000)).toEqual({
      waitMs: undefined,
      preferenceApplied: undefined,
      invalid: false,
    });
  });

  it('passes ?wait on as asked: the engine alone bounds it (callerDeadlineMs)', () => {
    expect(waitRequestOf({ wait: '800' }, undefined, 4000).waitMs).toBe(800);
    expect(waitRequestOf({ wait: '0' }, undefined, 4000).waitMs).toBe(0);
    expect(waitRequestOf({ wait: '999999999999' }, undefined, 4000).waitMs).toBe(999_999_999_999);
  });

  it('takes the smaller of ?wait and Prefer, and says what Prefer got', () => {
    expect(waitRequestOf({ wait: '800' }, 'wait=2', 4000)).toEqual({
      waitMs: 800,
      preferenceApplied: 'wait=1',
      invalid: false,
    });
    expect(waitRequestOf({ wait: '3000' }, 'wait=2', 4000)).toEqual({
      waitMs: 2000,
      preferenceApplied: 'wait=2',
      invalid: false,
    });
    expect(waitRequestOf({}, 'wait=60', 4000)).toEqual({ waitMs: 60_000, preferenceApplied: 'wait=4', invalid: false });
  });

  it.each(['-1', '1.5', 'soon', '', ' 5', '0x10', '1e3'])(
    'marks ?wait=%j invalid and sets no bound from it',
    (wait) => {
      expect(waitRequestOf({ wait }, undefined, 4000)).toEqual({
        waitMs: undefined,
        preferenceApplied: undefined,
        invalid: true,
      });
    },
  );

  it('marks a repeated ?wait invalid', () => {
    expect(waitRequestOf({ wait: ['100', '200'] }, undefined, 4000).invalid).toBe(true);
  });
});

describe('the caller deadline (the one rule that bounds a wait)', () => {
  it('is the lookup deadline without a wait, or with one that is not a number', () => {
    expect(callerDeadlineMs(undefined, 4000)).toBe(4000);
    expect(callerDeadlineMs(Number.NaN, 4000)).toBe(4000);
    expect(callerDeadlineMs(Number.POSITIVE_INFINITY, 4000)).toBe(4000);
  });

  it('is the wait itself between 0 and the lookup deadline', () => {
    expect(callerDeadlineMs(800, 4000)).toBe(800);
    expect(callerDeadlineMs(0, 4000)).toBe(0);
    expect(callerDeadlineMs(-5, 4000)).toBe(0);
    expect(callerDeadlineMs(999_999_999_999, 4000)).toBe(4000);
  });
});
