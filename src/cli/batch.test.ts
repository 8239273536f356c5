import { describe, expect, it } from 'vitest';
import {
  createPacer,
  csvField,
  csvHeader,
  deduplicate,
  formatRow,
  readBatchLines,
  renderProgress,
  runBatch,
  toBatchRow,
} from './batch.js';
import type { ApiAnswer } from './api-answer.js';
import { computeScore, scoreToRisk } from '../domain/score.js';
import type { SourceDataBySlot } from '../domain/report.js';

/** The meta the server adds to a full report for these sources (its score rule, not the CLI's). */
function scoreMeta(sources: SourceDataBySlot): {
  score: number | null;
  risk: string;
  scoreSource: string | null;
  list: null;
  reports: null;
} {
  const { score, scoreSource } = computeScore(sources);
  return { score, risk: scoreToRisk(score), scoreSource, list: null, reports: null };
}

const report = (
  number: string,
  overrides: { primaryScore?: number | null; signals?: 'ok' | 'error' } = {},
): ApiAnswer => {
  const sources: SourceDataBySlot = {
    primary: {
      score: overrides.primaryScore === undefined ? 8 : overrides.primaryScore,
      searches: 10,
      commentsCount: 1,
      commentList: [],
    },
    community: {
      dangerPercent: 84,
      visits: 25,
      commentsCount: 0,
      topCategory: '',
      lastCommentDate: '',
      commentList: [],
    },
    signals:
      overrides.signals === 'error'
        ? { spamScore: null, reportsCount: null, callerType: '', commentList: [] }
        : { spamScore: 50, reportsCount: 17, callerType: 'Vendeur', commentList: [] },
  };
  return {
    status: 200,
    body: JSON.stringify({
      success: true,
      data: {
        number,
        phoneInfo: {
          national: '06 12 34 56 78',
          e164: '+33612345678',
          type: 'mobile',
          rangeLabel: '',
          originalCarrier: 'Orange',
          region: 'France',
          isNPV: false,
        },
        sources,
      },
      meta: {
        sources: {
          primary: { status: 'ok', fetchedAt: '2026-11-22T03:00:00.000Z', cache: 'miss' },
          community: { status: 'ok', fetchedAt: '2026-11-22T03:00:00.000Z', cache: 'miss' },
          signals:
            overrides.signals === 'error'
              ? { status: 'error', reason: 'timeout', fetchedAt: '2026-11-22T03:00:00.000Z', cache: 'miss' }
              : { status: 'ok', fetchedAt: '2026-11-22T03:00:00.000Z', cache: 'miss' },
        },
        hints: [],
        ...scoreMeta(sources),
      },
    }),
  };
};

/** A problem body as the API writes it (RFC 9457 members, then its own). */
const problem = (status: number, type: string, title: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    type: `/problems/${type}`,
    title,
    status,
    detail: 'details',
    requestId: 'r-1',
    success: false,
    error: title,
    ...extra,
  });
const PHONE_INFO = {
  national: '01 62 00 56 78',
  e164: '+33162005678',
  type: 'fixed_line',
  rangeLabel: 'NPV',
  originalCarrier: 'SFR',
  region: 'Île-de-France',
  isNPV: true,
};

describe('reading batch input', () => {
  it('keeps non-empty, non-comment lines with their 1-based line numbers', () => {
    expect(readBatchLines('\uFEFF0612345678\r\n\n# a comment\n  06 12 34 56 79  \n')).toEqual([
      { line: 1, raw: '0612345678' },
      { line: 4, raw: '06 12 34 56 79' },
    ]);
  });

  it('keeps the first line of each normalised number and counts the others as duplicates', () => {
    const normalise = (raw: string): string | undefined => {
      const digits = raw.replace(/[\s.]/g, '').replace(/^(\+33|0033)/, '0');
      return /^0\d{9}$/.test(digits) ? digits : undefined;
    };
    const lines = readBatchLines('0612345678\n06 12 34 56 78\n+33612345678\nabc\nabc\n0611111111\n');
    const { items, duplicates } = deduplicate(lines, normalise);
    expect(items.map((item) => item.line)).toEqual([1, 4, 6]);
    expect(duplicates).toBe(3);
  });
});

describe('a batch row', () => {
  const item = { line: 3, raw: '06 12 34 56 78' };

  it('carries the verdict, score, risk and each source key figures for a found number', () => {
    const row = toBatchRow(item, report('0612345678', { signals: 'error' }));
    expect(row).toMatchObject({
      line: 3,
      input: '06 12 34 56 78',
      number: '0612345678',
      status: 'found',
      verdict: 'likely unwanted',
      score: 8,
      risk: 'suspicious',
      score_source: 'primary',
      primary_status: 'ok',
      primary_searches: 10,
      community_danger_percent: 84,
      signals_status: 'error:timeout',
      signals_spam_score: null,
      error: null,
    });
  });

  it('derives the score from community and signals when the primary source has none', () => {
    const row = toBatchRow(item, report('0612345678', { primaryScore: null }));
    // mean(84, 50) = 67 → 1 + round(67 × 8 / 100) = 6
    expect(row).toMatchObject({ score: 6, risk: 'suspicious', score_source: 'derived' });
  });

  it('reports an invalid number in its row', () => {
    const row = toBatchRow(item, {
      status: 400,
      body: problem(400, 'invalid-number', 'Invalid phone number format', { code: 'invalid_character' }),
    });
    expect(row).toMatchObject({ status: 'invalid', number: null, score: null, error: 'Invalid phone number format' });
  });

  it('reports each source reason when every upstream failed', () => {
    const row = toBatchRow(item, {
      status: 502,
      body: problem(502, 'all-sources-failed', 'All data sources failed', {
        number: '0162005678',
        phoneInfo: PHONE_INFO,
        sources: { primary: 'timeout', community: 'http_429', signals: 'connection' },
        meta: { list: null, reports: null },
      }),
    });
    expect(row).toMatchObject({
      status: 'failed',
      primary_status: 'error:timeout',
      community_status: 'error:http_429',
      signals_status: 'error:connection',
    });
    expect(row).toMatchObject({ number: null, national: null, is_npv: null, hints: null });
  });

  it('fills the facts columns of a row whose sources all failed from the facts the answer carries', () => {
    const phoneInfo = PHONE_INFO;
    const row = toBatchRow(item, {
      status: 502,
      body: problem(502, 'all-sources-failed', 'All data sources failed', {
        number: '0162005678',
        phoneInfo,
        sources: { primary: 'timeout', community: 'http_5xx', signals: 'connection' },
        meta: { list: null, reports: null },
      }),
      facts: { number: '0162005678', phoneInfo, hints: ['npv'] },
    });
    expect(row).toMatchObject({
      number: '0162005678',
      status: 'failed',
      national: '01 62 00 56 78',
      international: '+33162005678',
      line_type: 'fixed_line',
      original_carrier: 'SFR',
      region: 'Île-de-France',
      is_npv: true,
      hints: ['npv'],
      verdict: null,
      score: null,
      primary_status: 'error:timeout',
      error: 'All data sources failed',
    });
    expect(formatRow(row, 'csv')).toMatch(
      /^3,06 12 34 56 78,0162005678,failed,01 62 00 56 78,\+33162005678,fixed_line,NPV,SFR,Île-de-France,true,npv,,/,
    );
  });

  it('fills the facts columns of a found row, hints from meta.hints or else from the facts', () => {
    const found = toBatchRow(item, report('0612345678'));
    expect(found).toMatchObject({
      national: '06 12 34 56 78',
      international: '+33612345678',
      line_type: 'mobile',
      original_carrier: 'Orange',
      region: 'France',
      is_npv: false,
      hints: [],
    });
    const answer = report('0612345678');
    const body = JSON.parse(answer.body) as { meta: { hints?: string[] } };
    body.meta.hints = ['technical_platform'];
    expect(toBatchRow(item, { status: 200, body: JSON.stringify(body) }).hints).toEqual(['technical_platform']);
  });

  it('reports any other answer as an error with its status', () => {
    expect(
      toBatchRow(item, { status: 429, body: problem(429, 'too-many-requests', 'Too many requests') }),
    ).toMatchObject({ status: 'error', error: 'HTTP 429 Too many requests' });
  });
});

describe('output formats', () => {
  it('quotes CSV fields that need it and defuses spreadsheet formulas', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('+33612345678')).toBe('+33612345678');
    expect(csvField(null)).toBe('');
    // Whatever the type: an array, an object, a formula behind a control character, arithmetic.
    expect(csvField(['=HYPERLINK("x")', 'b'])).toBe(`"'=HYPERLINK(""x"") b"`);
    expect(csvField({ '@SUM(1)': 1 })).toBe('"{""@SUM(1)"":1}"');
    expect(csvField('\u001b=cmd|x')).toBe("'=cmd|x");
    expect(csvField('\t=1+1')).toBe("'=1+1");
    expect(csvField('-2-3')).toBe("'-2-3");
    expect(csvField('-7')).toBe('-7');
    expect(csvField(8)).toBe('8');
  });

  it('writes one CSV line per row under a header with the same columns, and one JSON object per NDJSON line', () => {
    const row = toBatchRow({ line: 1, raw: '0612345678' }, report('0612345678'));
    const header = csvHeader().trim().split(',');
    const csv = formatRow(row, 'csv').trim().split(',');
    expect(csv).toHaveLength(header.length);
    expect(csv[header.indexOf('verdict')]).toBe('likely unwanted');
    const json = JSON.parse(formatRow(row, 'ndjson'));
    expect(json).toMatchObject({ number: '0612345678', score: 8, risk: 'suspicious' });
    expect(Object.keys(json)).toEqual(header);
  });

  it("writes the documented columns (docs/cli.md), each slot's from the slot display table", () => {
    expect(csvHeader().trim().split(',')).toEqual([
      'line',
      'input',
      'number',
      'status',
      'national',
      'international',
      'line_type',
      'range',
      'original_carrier',
      'region',
      'is_npv',
      'hints',
      'verdict',
      'score',
      'risk',
      'score_source',
      'primary_status',
      'primary_score',
      'primary_searches',
      'primary_comments',
      'community_status',
      'community_danger_percent',
      'community_visits',
      'community_comments',
      'signals_status',
      'signals_spam_score',
      'signals_reports',
      'error',
    ]);
  });

  it('draws a progress bar', () => {
    expect(renderProgress(5, 10, 10)).toBe('[#####-----]  5/10');
    expect(renderProgress(0, 0, 4)).toBe('[####] 0/0');
  });
});

describe('running a batch', () => {
  it('emits rows in input order whatever order the answers arrive in, and never runs more than N at a time', async () => {
    const items = ['a', 'b', 'c', 'd', 'e'].map((raw, index) => ({ line: index + 1, raw, key: raw }));
    let running = 0;
    let maxRunning = 0;
    const delays: Record<string, number> = { a: 30, b: 5, c: 20, d: 1, e: 10 };
    const emitted: string[] = [];
    const progress: number[] = [];
    await runBatch({
      items,
      concurrency: 2,
      lookup: async (raw) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, delays[raw]));
        running -= 1;
        return raw === 'c' ? { status: 400, body: '{}' } : report('0612345678');
      },
      onRow: (row) => emitted.push(row.input),
      onProgress: (done) => progress.push(done),
    });
    expect(emitted).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(maxRunning).toBe(2);
    expect(progress).toEqual([1, 2, 3, 4, 5]);
  });

  it('turns a lookup that throws into an error row and goes on', async () => {
    const items = [
      { line: 1, raw: 'x', key: 'x' },
      { line: 2, raw: 'y', key: 'y' },
    ];
    const rows = await runBatch({
      items,
      concurrency: 1,
      lookup: async (raw) => {
        if (raw === 'x') throw new Error('connect ECONNREFUSED');
        return report('0612345678');
      },
      onRow: () => {},
    });
    expect(rows.map((row) => row.status)).toEqual(['error', 'found']);
    expect(rows[0]?.error).toContain('ECONNREFUSED');
  });

  it('paces starts to at most max per window', async () => {
    let clock = 0;
    const sleeps: number[] = [];
    const pace = createPacer(
      2,
      60_000,
      async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
      () => clock,
    );
    await pace();
    await pace();
    expect(sleeps).toEqual([]);
    clock = 1_000;
    await pace();
    // The third start waits until the first leaves the 60 s window.
    expect(sleeps).toEqual([59_000]);
    expect(clock).toBe(60_000);
  });
});
