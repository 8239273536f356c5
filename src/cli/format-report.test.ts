import { describe, expect, it } from 'vitest';
import { formatReportSummary, plural, sanitizeForTerminal } from './format-report.js';
import { readReportBody, type ReportBody } from './api-answer.js';

function body(): ReportBody {
  return {
    success: true,
    data: {
      number: '0612345678',
      phoneInfo: {
        national: '06 12 34 56 78',
        e164: '+33612345678',
        type: 'mobile',
        rangeLabel: 'Mobile',
        originalCarrier: 'Orange',
        region: 'France',
        isNPV: true,
      },
      sources: {
        primary: {
          score: 8,
          searches: 1234,
          commentsCount: 1,
          commentList: [
            {
              author: 'Camille',
              text: 'Appel insistant\u001b[31m rouge\u0007',
              date: '12/03/2024',
              callerType: 'Démarchage',
            },
          ],
        },
        community: {
          dangerPercent: 84,
          visits: 2535,
          commentsCount: 1,
          topCategory: 'Gênant',
          lastCommentDate: '11/03/2024',
          commentList: [{ text: 'Toujours le même message.', date: '11/03/2024', category: 'Gênant' }],
        },
        signals: { spamScore: null, reportsCount: null, callerType: '', commentList: [] },
      },
    },
    meta: {
      sources: {
        primary: { status: 'ok', cache: 'miss' },
        community: { status: 'ok', cache: 'stale', reason: 'http_5xx' },
        signals: { status: 'error', reason: 'timeout', cache: 'miss' },
      },
      score: 8,
      risk: 'suspicious',
      scoreSource: 'primary',
    },
  };
}

describe('the lookup summary', () => {
  it("puts the number's facts first, then the verdict, then each source with its comments", () => {
    const text = formatReportSummary(body());
    const lines = text.split('\n');
    expect(lines[0]).toBe('Number 0612345678');
    const order = [
      'Number 0612345678',
      'Original carrier  Orange',
      'NPV               yes, a range reserved for automated calls and messages',
      'Hints             npv: ',
      'Verdict: LIKELY UNWANTED (score 8/9, suspicious, from the primary source)',
      'Primary (tellows): ok',
      'Camille',
      'Community (numeroinconnu.fr): ok, older copy (http_5xx)',
      'Toujours le même message.',
      'Signals (telguarder): error (timeout)',
    ];
    const positions = order.map((needle) => text.indexOf(needle));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('never prints control characters from scraped text (no terminal escape sequences)', () => {
    const text = formatReportSummary(body());
    // eslint-disable-next-line no-control-regex -- asserting their absence
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(text).toContain('Appel insistant[31m rouge');
  });

  it('writes English plurals: 1 search, 10 searches, 1 visit, 1 report, 1 comment', () => {
    const b = body();
    b.data.sources.primary.searches = 10;
    b.data.sources.community.visits = 1;
    b.meta.sources.signals = { status: 'ok', cache: 'miss' };
    b.data.sources.signals.reportsCount = 1;
    const text = formatReportSummary(b);
    expect(text).toContain('score 8 · 10 searches · 1 comment');
    expect(text).toContain('· 1 visit ·');
    expect(text).toContain('· 1 report');
    expect(text).not.toMatch(/searchs|\b1 (?:searches|visits|reports|comments)\b/);
    b.data.sources.primary.searches = 1;
    expect(formatReportSummary(b)).toContain('score 8 · 1 search ·');
    expect([plural(0, 'error'), plural(1, 'duplicate line'), plural(2, 'search', 'searches')]).toEqual([
      '0 errors',
      '1 duplicate line',
      '2 searches',
    ]);
  });

  it('shows the verdict the server gave, and says there is no rating when it has none', () => {
    const given = body();
    given.meta = { ...given.meta, score: 3, risk: 'trustworthy', scoreSource: 'derived' };
    expect(formatReportSummary(given)).toContain(
      'Verdict: LIKELY SAFE (score 3/9, trustworthy, derived from community and signals)',
    );
    const b = body();
    b.data.sources.primary.score = null;
    b.data.sources.community.dangerPercent = null;
    b.meta = { ...b.meta, score: null, risk: 'unknown', scoreSource: null };
    expect(formatReportSummary(b).split('\n')).toContain('Verdict: NO RATING (no source has a rating; risk unknown)');
  });

  it("shows the server's meta.hints when it sends them, in words where the hint is known", () => {
    const b = body();
    b.meta.hints = ['technical_platform', 'future_hint'];
    const lines = formatReportSummary(b).split('\n');
    expect(lines).toContain(
      '  Hints             technical_platform: technical platform range (0937, 0938, 09390–09394): not a person dialling',
    );
    expect(lines).toContain('                    future_hint');
    expect(lines.join('\n')).not.toContain('npv:');
  });

  it("shows the operator's deciding rule and this deployment's reports after the verdict, when the server sends them", () => {
    const b = body();
    expect(formatReportSummary(b)).not.toMatch(/Reported here|Operator's/);
    b.meta.list = { list: 'block', rule: '+33162*', label: 'NPV\u001b[31m' };
    b.meta.reports = {
      spam: 2.87,
      legitimate: 0,
      reporters: 3,
      categories: { fraud: 2, advertising: 1, odd: 'x' },
      lastReportAt: '2026-11-21T17:42:00.000Z',
      verdict: 'spam',
    };
    const lines = formatReportSummary(b).split('\n');
    const verdictAt = lines.findIndex((line) => line.startsWith('Verdict: '));
    expect(lines.slice(verdictAt + 1, verdictAt + 3)).toEqual([
      "Operator's block list: +33162*, NPV[31m",
      'Reported here: spam (3 reporters; fraud 2, advertising 1; last 2026-11-21T17:42:00.000Z)',
    ]);
    b.meta.reports = null;
    b.meta.list = { list: 'allow' };
    expect(formatReportSummary(b)).not.toMatch(/Reported here|Operator's/);
  });

  it('strips bidi overrides and folds line breaks', () => {
    expect(sanitizeForTerminal('a\u202eb\nc\td')).toBe('ab c d');
  });
});

describe('reading an API answer', () => {
  it('accepts a report body and refuses other shapes', () => {
    expect(readReportBody(JSON.stringify(body()))?.data.number).toBe('0612345678');
    expect(readReportBody('{"success":false}')).toBeUndefined();
    expect(readReportBody('not json')).toBeUndefined();
    expect(readReportBody(JSON.stringify({ ...body(), meta: {} }))).toBeUndefined();
    // A report whose meta lacks the server's score is not one: the CLI never computes it.
    const { score: _score, ...withoutScore } = body().meta;
    expect(readReportBody(JSON.stringify({ ...body(), meta: withoutScore }))).toBeUndefined();
    expect(readReportBody(JSON.stringify({ ...body(), meta: { ...body().meta, risk: 'dangerous' } }))).toBeUndefined();
  });
});
