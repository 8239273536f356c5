import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileHtml, isOutputDate, isPlainText, nestedPage } from '../../../harness/upstream-sites.js';
import { expectStoppedAtParseBound } from '../../../test/support/parse-bound.js';
import {
  markersOfTelguarder,
  parseTelguarderPage as parse,
  securityLevelToSpamScore,
} from './parse-telguarder-page.js';
import type { SignalsData } from '../../domain/report.js';
import { MAX_COMMENTS } from '../common/text.js';
import { haveRequiredMarkers } from '../markers.js';
import type { SourceOutcome } from '../../domain/ports/source.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const parseTelguarderPage = (html: string): SourceOutcome<SignalsData> => parse(html).outcome;

function expectOk(result: SourceOutcome<SignalsData>): SignalsData {
  if (result.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  return result.data;
}

const panel = (inner: string): string => `<div class="ai-number-stats-panel">${inner}</div>`;

describe('parseTelguarderPage', () => {
  it('reads every field of a normal page', () => {
    expect(expectOk(parseTelguarderPage(fixture('normal.html')))).toEqual({
      spamScore: 74,
      reportsCount: 37,
      callerType: 'Démarchage téléphonique',
      commentList: [
        { text: 'Propose des panneaux solaires inventés.', date: '12/03/2026', callerType: 'Démarchage téléphonique' },
        {
          text: 'Demande un virement urgent à un soi-disant naïf « conseiller » ; il insiste – cœur ❤.',
          date: '01/02/2026',
          callerType: 'Arnaque',
        },
        { text: 'Rappelle sans arrêt.', date: '15/01/2026', callerType: 'Démarchage téléphonique' },
        // No reason of its own: takes the number's main caller type.
        { text: 'Pas de message laissé.', date: '03/01/2026', callerType: 'Démarchage téléphonique' },
      ],
    });
  });

  it('calls a reports count that is no count invalid (-7, 1e3, 20 digits), never 7, 1 or 0', () => {
    const normal = fixture('normal.html');
    for (const count of ['-7', '1e3', '12345678901234567890']) {
      const html = normal.replace(
        '<div class="ai-row-info-value">37</div>',
        `<div class="ai-row-info-value">${count}</div>`,
      );
      expect(html).not.toBe(normal);
      expect(parseTelguarderPage(html), count).toEqual({ status: 'error', reason: 'parse' });
    }
  });

  it('a security level of 26 is a spam score of 74', () => {
    expect(expectOk(parseTelguarderPage(fixture('normal.html'))).spamScore).toBe(74);
  });

  it('a security level of 90 is a spam score of 10, and an unreported clean number stays ok', () => {
    expect(expectOk(parseTelguarderPage(fixture('clean-company.html')))).toEqual({
      spamScore: 10,
      reportsCount: 0,
      callerType: '',
      commentList: [],
    });
  });

  it('reads 2026.2.1 and 2026.01.15 18:42 year-first, as 01/02/2026 and 15/01/2026', () => {
    const dates = expectOk(parseTelguarderPage(fixture('normal.html'))).commentList.map((comment) => comment.date);
    expect(dates).toContain('01/02/2026');
    expect(dates).toContain('15/01/2026');
  });

  it('strips the user-comment trailer and does not repeat the latest-comment panel', () => {
    const texts = expectOk(parseTelguarderPage(fixture('normal.html'))).commentList.map((comment) => comment.text);
    expect(texts.filter((text) => text.startsWith('Propose'))).toHaveLength(1);
    expect(texts.some((text) => text.includes('Commentaire de l'))).toBe(false);
  });

  it('answers not_found for a page with no reports, level 0 and no comment', () => {
    expect(parseTelguarderPage(fixture('unknown.html'))).toEqual({ status: 'not_found' });
  });

  it('answers not_found for a page with no reports, no level attribute and no comment', () => {
    const html = fixture('unknown.html').replace(/<div id="securityLevelValue"[^>]*><\/div>/, '');
    expect(html).not.toContain('securityLevelValue');
    expect(parseTelguarderPage(html)).toEqual({ status: 'not_found' });
  });

  it('leaves missing optional blocks empty on a partial page and labels a reason by its slug', () => {
    expect(expectOk(parseTelguarderPage(fixture('partial.html')))).toEqual({
      spamScore: null,
      reportsCount: null,
      callerType: 'Survey',
      commentList: [{ text: 'Sondage inventé sur les transports.', date: '', callerType: 'Survey' }],
    });
  });

  it('calls a page without the stats panel a challenge', () => {
    expect(parseTelguarderPage(fixture('challenge.html'))).toEqual({ status: 'blocked', reason: 'challenge' });
    expect(parseTelguarderPage('')).toEqual({ status: 'blocked', reason: 'challenge' });
  });

  it('is not fooled by a stats panel written inside a script', () => {
    expect(parseTelguarderPage('<script>x = "<div class=\'ai-number-stats-panel\'>"</script>')).toEqual({
      status: 'blocked',
      reason: 'challenge',
    });
  });

  it('breaks a caller-type tie by the most recent comment', () => {
    const data = expectOk(parseTelguarderPage(fixture('caller-type-tie.html')));
    expect(data.callerType).toBe('Sondage');
    expect(data.reportsCount).toBe(4);
    expect(data.spamScore).toBe(65);
  });

  it('calls a non-numeric security level invalid', () => {
    expect(parseTelguarderPage(fixture('malformed-level.html'))).toEqual({ status: 'error', reason: 'parse' });
    expect(parseTelguarderPage(panel('<div id="securityLevelValue" data-security-level="140"></div>'))).toEqual({
      status: 'error',
      reason: 'parse',
    });
  });

  it('keeps a page with reports but no level as ok with a null score', () => {
    const html = panel(
      '<div class="ai-row-1-cell"><div>a</div><div>5</div></div><div class="ai-row-1-cell"><div>b</div><div>2</div></div>',
    );
    expect(expectOk(parseTelguarderPage(html))).toEqual({
      spamScore: null,
      reportsCount: 2,
      callerType: '',
      commentList: [],
    });
  });

  it('reads the Latin-1 page once decoded', () => {
    const html = new TextDecoder('latin1').decode(readFileSync(new URL('./fixtures/latin1.html', import.meta.url)));
    expect(expectOk(parseTelguarderPage(html))).toEqual({
      spamScore: 36,
      reportsCount: 9,
      callerType: 'Arnaque à la carte',
      commentList: [
        { text: 'Prétend être la banque (inventé).', date: '14/12/2025', callerType: 'Arnaque à la carte' },
      ],
    });
  });

  it('caps the comment list', () => {
    const bodies = Array.from(
      { length: MAX_COMMENTS + 5 },
      (_, index) => `<div class="ai-assessment-body"><div class="ai-comment-text">c${index}</div></div>`,
    );
    expect(expectOk(parseTelguarderPage(panel('') + bodies.join(''))).commentList).toHaveLength(MAX_COMMENTS);
  });

  it('never throws on broken markup', () => {
    for (const html of [
      '<',
      '<div class="ai-number-stats-panel"',
      '<div class="ai-number-stats-panel"><div id="securityLevelValue" data-security-level=',
      '\u0000',
    ]) {
      expect(() => parseTelguarderPage(html)).not.toThrow();
    }
  });
});

describe('securityLevelToSpamScore', () => {
  it('treats 0 and an absent level as no data', () => {
    expect(securityLevelToSpamScore(0)).toBeNull();
    expect(securityLevelToSpamScore(null)).toBeNull();
  });

  it('reads the level as a security level: higher is safer', () => {
    expect(securityLevelToSpamScore(26)).toBe(74);
    expect(securityLevelToSpamScore(50)).toBe(50);
    expect(securityLevelToSpamScore(90)).toBe(10);
    expect(securityLevelToSpamScore(100)).toBe(0);
  });
});

describe('telguarder markers, from the parse itself', () => {
  it('finds every marker of a normal page', () => {
    const markers = markersOfTelguarder(fixture('normal.html'));
    expect(markers.filter((report) => !report.found).map((report) => report.marker)).toEqual([]);
    expect(haveRequiredMarkers(markers)).toBe(true);
  });

  it('keeps the required marker on the unknown-number page', () => {
    expect(haveRequiredMarkers(markersOfTelguarder(fixture('unknown.html')))).toBe(true);
  });

  it('finds nothing on a challenge page', () => {
    const markers = markersOfTelguarder(fixture('challenge.html'));
    expect(markers.some((report) => report.found)).toBe(false);
    expect(haveRequiredMarkers(markers)).toBe(false);
  });
});

describe('parseTelguarderPage on hostile input', () => {
  it('never throws and never returns values outside the contract', () => {
    fc.assert(
      fc.property(hostileHtml(), (html) => {
        const result = parseTelguarderPage(html);
        if (result.status !== 'ok') return ['not_found', 'blocked', 'error'].includes(result.status);
        const { data } = result;
        return (
          (data.spamScore === null ||
            (Number.isInteger(data.spamScore) && data.spamScore >= 0 && data.spamScore <= 100)) &&
          (data.reportsCount === null || Number.isSafeInteger(data.reportsCount)) &&
          isPlainText(data.callerType) &&
          data.commentList.length <= MAX_COMMENTS &&
          data.commentList.every(
            (comment) => isOutputDate(comment.date) && isPlainText(comment.text) && isPlainText(comment.callerType),
          )
        );
      }),
      { numRuns: 1500 },
    );
  });
});

describe('parse: a hostile page past the parse-work bound', () => {
  for (const unit of [
    '<div>',
    '<div class="ai-assessment-body">',
    '<div class="ai-number-stats-panel"><div class="ai-row-1-cell">',
    '<table><tr><td>',
  ]) {
    it(`ends 1 MiB of nested ${unit} as error(parse), with the bound's marker`, () => {
      expectStoppedAtParseBound(parse(nestedPage(unit)));
    });
  }
});
