import { describe, expect, it } from 'vitest';
import {
  COMMUNITY_DATA,
  PRIMARY_DATA,
  SIGNALS_DATA,
  frenchMobile,
  FETCHED_AT,
  blockedSlot,
  errorSlot,
  lookupResult,
  notFoundSlot,
  okSlot,
  pendingSlot,
  skippedSlot,
} from '../../harness/lookup.js';
import { buildReport, buildScoreResult, failureReasons, isAllSourcesFailed, sourceCheckOf } from './report-builder.js';
import { emptySourceData } from './report.js';
import type { SlotResult } from './lookup/types.js';

const number = frenchMobile(8);

describe('buildReport', () => {
  it('renders every ok slot’s data with the number and phoneInfo', () => {
    const built = buildReport(
      number,
      lookupResult(okSlot(PRIMARY_DATA), okSlot(COMMUNITY_DATA, 'hit'), okSlot(SIGNALS_DATA, 'stale')),
    );
    expect(built.report).toEqual({
      number: number.number,
      phoneInfo: number.phoneInfo,
      sources: { primary: PRIMARY_DATA, community: COMMUNITY_DATA, signals: SIGNALS_DATA },
    });
    expect(built.meta.sources).toEqual({
      primary: { status: 'ok', fetchedAt: FETCHED_AT, cache: 'miss' },
      community: { status: 'ok', fetchedAt: FETCHED_AT, cache: 'hit' },
      signals: { status: 'ok', fetchedAt: FETCHED_AT, cache: 'stale' },
    });
    expect(built.allSourcesFailed).toBe(false);
  });

  it('gives a slot that is not ok its empty fields, and says why in meta', () => {
    const built = buildReport(number, lookupResult(errorSlot('timeout'), blockedSlot('http_429'), notFoundSlot()));
    expect(built.report.sources).toEqual(emptySourceData());
    const asked = { fetchedAt: FETCHED_AT, cache: 'miss' };
    expect(built.meta.sources.primary).toEqual({ status: 'error', reason: 'timeout', cause: 'timeout', ...asked });
    expect(built.meta.sources.community).toEqual({
      status: 'blocked',
      reason: 'http_429',
      cause: 'http_429',
      ...asked,
    });
    expect(built.meta.sources.signals).toEqual({ status: 'not_found', fetchedAt: FETCHED_AT, cache: 'miss' });
    expect('reason' in built.meta.sources.signals).toBe(false);
  });

  it('keeps the reason of a stale slot served after a failed refresh', () => {
    const stale: SlotResult<'primary'> = { ...okSlot<'primary'>(PRIMARY_DATA, 'stale'), reason: 'http_5xx' };
    const built = buildReport(number, lookupResult(stale, errorSlot('connection'), errorSlot('connection')));
    expect(built.report.sources.primary).toEqual(PRIMARY_DATA);
    // A stale entry remembers the reason only: its cause is the reason's own.
    const staleMeta = { fetchedAt: FETCHED_AT, cache: 'stale' };
    expect(built.meta.sources.primary).toEqual({ status: 'ok', reason: 'http_5xx', cause: 'http_5xx', ...staleMeta });
    expect(built.allSourcesFailed).toBe(false);
  });
});

describe('the score in the full report’s meta', () => {
  it.each([
    ['the primary score', lookupResult(okSlot(PRIMARY_DATA), okSlot(COMMUNITY_DATA), okSlot(SIGNALS_DATA))],
    [
      'a score derived from the others',
      lookupResult(errorSlot('timeout'), okSlot(COMMUNITY_DATA), okSlot(SIGNALS_DATA)),
    ],
    ['no score at all', lookupResult(errorSlot('timeout'), notFoundSlot(), pendingSlot())],
  ])('is exactly what the score route answers: %s', (_case, result) => {
    const report = buildReport(number, result);
    const score = buildScoreResult(number, result);
    expect({ score: report.meta.score, risk: report.meta.risk, scoreSource: report.meta.scoreSource }).toEqual({
      score: score.score.score,
      risk: score.score.risk,
      scoreSource: score.meta.scoreSource,
    });
  });

  it('names where the score came from, and is null with risk unknown when no source rates the number', () => {
    expect(
      buildReport(number, lookupResult(okSlot(PRIMARY_DATA), okSlot(COMMUNITY_DATA), okSlot(SIGNALS_DATA))).meta,
    ).toMatchObject({ score: PRIMARY_DATA.score, scoreSource: 'primary' });
    expect(buildReport(number, lookupResult(errorSlot('timeout'), notFoundSlot(), pendingSlot())).meta).toMatchObject({
      score: null,
      risk: 'unknown',
      scoreSource: null,
    });
  });
});

describe('skipped and pending slots', () => {
  it('render exactly their status (and the skip reason) in meta, with empty fields', () => {
    const built = buildReport(number, lookupResult(okSlot(PRIMARY_DATA), skippedSlot(), pendingSlot()));
    expect(built.meta.sources).toEqual({
      primary: { status: 'ok', fetchedAt: FETCHED_AT, cache: 'miss' },
      community: { status: 'skipped', reason: 'not_covered' },
      signals: { status: 'pending' },
    });
    expect(built.report.sources).toEqual({ ...emptySourceData(), primary: PRIMARY_DATA });
  });
});

describe('isAllSourcesFailed: the 502 rule', () => {
  it.each([
    [
      'every slot error or blocked',
      lookupResult(errorSlot('timeout'), blockedSlot('http_429'), errorSlot('connection')),
      true,
    ],
    ['every slot error', lookupResult(errorSlot('circuit_open'), errorSlot('http_5xx'), errorSlot('parse')), true],
    ['every slot not_found', lookupResult(notFoundSlot(), notFoundSlot(), notFoundSlot()), false],
    ['one slot not_found', lookupResult(errorSlot('timeout'), notFoundSlot(), errorSlot('timeout')), false],
    ['one slot ok', lookupResult(errorSlot('timeout'), errorSlot('timeout'), okSlot(SIGNALS_DATA)), false],
    [
      'one slot stale ok',
      lookupResult(okSlot(PRIMARY_DATA, 'stale'), blockedSlot('paused'), errorSlot('timeout')),
      false,
    ],
    // skipped: not asked, so neither a failure nor a record
    ['every slot skipped', lookupResult(skippedSlot(), skippedSlot(), skippedSlot()), false],
    [
      'the only slot asked failed, the others skipped',
      lookupResult(errorSlot('http_5xx'), skippedSlot(), skippedSlot()),
      true,
    ],
    [
      'the slots asked failed, one skipped',
      lookupResult(errorSlot('timeout'), blockedSlot('http_429'), skippedSlot()),
      true,
    ],
    ['the only slot asked not_found', lookupResult(notFoundSlot(), skippedSlot(), skippedSlot()), false],
    // pending: still being fetched, so not a failure either
    ['every slot pending', lookupResult(pendingSlot(), pendingSlot(), pendingSlot()), false],
    ['failures and one pending', lookupResult(errorSlot('timeout'), errorSlot('connection'), pendingSlot()), false],
    ['pending and skipped', lookupResult(pendingSlot(), skippedSlot(), skippedSlot()), false],
  ])('%s → %s', (_name, result, expected) => {
    expect(isAllSourcesFailed(result)).toBe(expected);
    expect(buildReport(number, result).allSourcesFailed).toBe(expected);
  });
});

describe('sourceCheckOf: what the words for "no score" say', () => {
  it('is answered when one source gave a record or said it has none, whatever the others did', () => {
    expect(sourceCheckOf(lookupResult(notFoundSlot(), errorSlot('timeout'), skippedSlot()))).toBe('answered');
    expect(sourceCheckOf(lookupResult(errorSlot('timeout'), pendingSlot(), okSlot(SIGNALS_DATA)))).toBe('answered');
  });

  it('is not_checked when every source asked failed or is still on its way', () => {
    expect(sourceCheckOf(lookupResult(errorSlot('timeout'), blockedSlot('http_429'), errorSlot('connection')))).toBe(
      'not_checked',
    );
    expect(sourceCheckOf(lookupResult(pendingSlot(), skippedSlot(), errorSlot('connection')))).toBe('not_checked');
    expect(sourceCheckOf(lookupResult(pendingSlot(), pendingSlot(), pendingSlot()))).toBe('not_checked');
  });

  it('is not_covered when no source was asked (none covers the number)', () => {
    expect(sourceCheckOf(lookupResult(skippedSlot(), skippedSlot(), skippedSlot()))).toBe('not_covered');
  });
});

describe('failureReasons', () => {
  it('lists each slot’s reason for the 502 body', () => {
    expect(
      failureReasons(lookupResult(errorSlot('timeout'), blockedSlot('http_429'), errorSlot('connection'))),
    ).toEqual({
      primary: 'timeout',
      community: 'http_429',
      signals: 'connection',
    });
  });

  it('falls back to the status for a slot without a reason', () => {
    expect(failureReasons(lookupResult(notFoundSlot(), okSlot(COMMUNITY_DATA), errorSlot('parse')))).toEqual({
      primary: 'not_found',
      community: 'ok',
      signals: 'parse',
    });
  });
});
