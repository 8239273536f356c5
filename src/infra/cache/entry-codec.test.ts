import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CommunityData, PrimaryData, SignalsData } from '../../domain/report.js';
import { decodeCachedResult, encodeCachedResult } from './entry-codec.js';
import type { CachedSourceResult } from '../../domain/ports/source-cache.js';
import { FAILURE_REASONS } from '../../domain/ports/source.js';

// Any UTF-16 text, lone surrogates included, so accents, emoji and broken pairs all go through.
const text = fc.string({ unit: 'binary', maxLength: 40 });
const count = fc.nat({ max: 1_000_000 });
const nullableCount = fc.option(count, { nil: null });

const primary: fc.Arbitrary<PrimaryData> = fc.record({
  score: fc.option(fc.integer({ min: 1, max: 9 }), { nil: null }),
  searches: count,
  commentsCount: count,
  commentList: fc.array(fc.record({ author: text, text, date: text, callerType: text }), { maxLength: 5 }),
});
const community: fc.Arbitrary<CommunityData> = fc.record({
  dangerPercent: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  visits: nullableCount,
  commentsCount: count,
  topCategory: text,
  lastCommentDate: text,
  commentList: fc.array(fc.record({ text, date: text, category: text }), { maxLength: 5 }),
});
const signals: fc.Arbitrary<SignalsData> = fc.record({
  spamScore: nullableCount,
  reportsCount: nullableCount,
  callerType: text,
  commentList: fc.array(fc.record({ text, date: text, callerType: text }), { maxLength: 5 }),
});

const epochMs = fc.integer({ min: 0, max: 8_640_000_000_000 });

const entry: fc.Arbitrary<CachedSourceResult> = fc
  .record({
    ok: fc.boolean(),
    data: fc.oneof(primary, community, signals),
    fetchedAt: fc.oneof(
      epochMs.map((ms) => new Date(ms).toISOString()),
      text,
    ),
    freshUntil: epochMs,
    staleFor: fc.nat({ max: 1_000_000_000 }),
    lastFailure: fc.option(fc.constantFrom(...FAILURE_REASONS), { nil: undefined }),
  })
  .map(({ ok, data, fetchedAt, freshUntil, staleFor, lastFailure }) => {
    const value: CachedSourceResult = {
      status: ok ? 'ok' : 'not_found',
      data: ok ? data : null,
      fetchedAt,
      freshUntil,
      staleUntil: freshUntil + staleFor,
    };
    if (lastFailure !== undefined) value.lastFailure = lastFailure;
    return value;
  });

describe('source cache entry codec', () => {
  it('round-trips every slot data shape, status, time and failure reason', () => {
    fc.assert(
      fc.property(entry, (value) => {
        expect(decodeCachedResult(encodeCachedResult(value))).toEqual(value);
      }),
      { numRuns: 500 },
    );
  });

  it('writes pure ASCII whatever the text, so the stored form is one byte per character', () => {
    fc.assert(
      fc.property(entry, (value) => {
        const stored = encodeCachedResult(value);
        // JSON escapes the controls below 0x20; DEL (0x7f) stays as it is, one ASCII byte.
        expect(/^[\x20-\x7f]*$/.test(stored)).toBe(true);
        expect(Buffer.byteLength(stored, 'utf8')).toBe(stored.length);
      }),
      // Found by this property: a text holding DEL, which is ASCII and is stored as it is.
      {
        numRuns: 300,
        examples: [
          [
            {
              status: 'ok',
              data: { callerType: '\u007f', spamScore: null, reportsCount: null, commentList: [] },
              fetchedAt: '',
              freshUntil: 0,
              staleUntil: 0,
            },
          ],
        ],
      },
    );
  });

  it('keeps accented and astral characters exactly', () => {
    const value: CachedSourceResult = {
      status: 'ok',
      data: {
        callerType: 'Démarchage',
        broken: 'x\ud800y',
        commentList: [{ text: 'Gênant 📞 « toujours »', date: '11/03/2024', category: 'Arnaque' }],
      },
      fetchedAt: '2026-11-22T03:00:00.000Z',
      freshUntil: 10,
      staleUntil: 20,
    };
    const stored = encodeCachedResult(value);
    expect(stored).toContain('D\\u00e9marchage');
    expect(stored).toContain('\\ud83d\\udcde');
    expect(stored).toContain('x\\ud800y');
    expect(decodeCachedResult(stored)).toEqual(value);
  });

  it('stores a not_found entry without data, and reads its data as null', () => {
    const stored = encodeCachedResult({
      status: 'not_found',
      data: { leftover: true },
      fetchedAt: 't',
      freshUntil: 1,
      staleUntil: 2,
    });
    expect(stored).toBe('[0,"t",1,2,null]');
    expect(decodeCachedResult(stored)).toEqual({
      status: 'not_found',
      data: null,
      fetchedAt: 't',
      freshUntil: 1,
      staleUntil: 2,
    });
  });

  it('reads anything it did not write as a miss, never as an error or a half entry', () => {
    for (const text of [
      'not json',
      '',
      'null',
      '{"s":"o","d":{},"f":"t","u":1,"x":2}',
      '[1,"t",1,2]',
      '[2,"t",1,2,{}]',
      '["1","t",1,2,{}]',
      '[1,3,1,2,{}]',
      '[1,"t","1",2,{}]',
      '[1,"t",1,null,{}]',
      '[1,"t",1,2,{},7]',
      '[1,"t",1,2,{},"x","extra"]',
      // a failure reason outside the closed vocabulary is not something this layout wrote
      '[1,"t",1,2,{},"blocked"]',
      '[1,"t",1,2,{},"Timeout"]',
    ]) {
      expect(decodeCachedResult(text), text).toBeUndefined();
    }
  });
});
