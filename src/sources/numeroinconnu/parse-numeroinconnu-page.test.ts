import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileHtml, isOutputDate, isPlainText } from '../../../test/support/html-arbitrary.js';
import { describeNumeroinconnuPage, parseNumeroinconnuPage } from './parse-numeroinconnu-page.js';
import type { NumeroinconnuPageResult } from './parse-numeroinconnu-page.js';
import type { CommunityData } from '../../domain/report.js';
import { MAX_COMMENTS } from '../common/text.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

function expectOk(result: NumeroinconnuPageResult): CommunityData {
  if (result.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  return result.data;
}

describe('parseNumeroinconnuPage', () => {
  it('reads every field of a normal page', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('normal.html')));
    expect(data).toEqual({
      dangerPercent: 84,
      visits: 2535,
      commentsCount: 4,
      topCategory: 'Dangereux',
      // From the last-rating row, not the newest listed comment (18/11) nor the last visit (20/11).
      lastCommentDate: '19/11/2026',
      commentList: [
        { text: 'Appel inventé pour le test : une voix enregistrée propose une isolation à un euro.', date: '18/11/2026', category: 'Dangereux' },
        { text: 'Sonne trois fois par jour, ne laisse jamais de message.', date: '10/11/2026', category: 'Gênant' },
        { text: "Faux conseiller bancaire, c'est une arnaque.", date: '03/09/2026', category: 'Dangereux' },
        { text: 'Demande un code reçu par SMS <script> & raccroche.', date: '01/08/2026', category: 'Dangereux' },
      ],
    });
  });

  it('ignores markup inside scripts and styles', () => {
    // The normal fixture's script writes a fake #count-comments of 999.
    expect(expectOk(parseNumeroinconnuPage(fixture('normal.html'))).commentsCount).toBe(4);
  });

  it('skips hidden and advert comment items', () => {
    const texts = expectOk(parseNumeroinconnuPage(fixture('normal.html'))).commentList.map((comment) => comment.text);
    expect(texts.some((text) => text.includes('Publicité') || text.includes('masqué'))).toBe(false);
  });

  it('keeps the text of profanity spans without a gap', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('normal.html')));
    expect(data.commentList[2]?.text).toContain('arnaque');
  });

  it('maps a rank class to its label when the rank text is empty', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('normal.html')));
    expect(data.commentList[3]?.category).toBe('Dangereux');
    const partial = expectOk(parseNumeroinconnuPage(fixture('partial.html')));
    expect(partial.commentList[1]?.category).toBe('Utile');
  });

  it('answers not_found for the unknown-number page with its pseudo-comment', () => {
    expect(parseNumeroinconnuPage(fixture('unknown.html'))).toEqual({ kind: 'not_found' });
  });

  it('answers ok with empty optional fields on a partial page', () => {
    expect(expectOk(parseNumeroinconnuPage(fixture('partial.html')))).toEqual({
      dangerPercent: null,
      visits: null,
      commentsCount: 2,
      // A tie (one Neutre, one Utile) goes to the most recent.
      topCategory: 'Utile',
      lastCommentDate: '07/07/2026',
      commentList: [
        { text: 'Un institut de sondage inventé.', date: '', category: 'Neutre' },
        { text: 'Livreur inventé, tout va bien.', date: '07/07/2026', category: 'Utile' },
      ],
    });
  });

  it('calls a page without any marker a challenge', () => {
    expect(parseNumeroinconnuPage(fixture('challenge.html'))).toEqual({ kind: 'challenge' });
    expect(parseNumeroinconnuPage('')).toEqual({ kind: 'challenge' });
  });

  it('reads the danger from the table row, separators and × in counts, and the filter counts', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('danger-row-only.html')));
    expect(data.dangerPercent).toBe(37);
    expect(data.commentsCount).toBe(1204);
    expect(data.visits).toBe(1234567);
    expect(data.topCategory).toBe('Fiable');
  });

  it('takes the newest comment date, never the last visit, when there is no last-rating row', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('danger-row-only.html')));
    expect(data.lastCommentDate).toBe('20/11/2026');
  });

  it('reads a bar written with a percent sign, unquoted attributes and any class order', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('bar-percent-sign.html')));
    expect(data).toMatchObject({ dangerPercent: 52, visits: 12000, commentsCount: 1, topCategory: 'Gênant', lastCommentDate: '05/03/2026' });
  });

  it('reads rows written as "label : value" in one element, and French month dates', () => {
    expect(expectOk(parseNumeroinconnuPage(fixture('inline-rows.html')))).toEqual({
      dangerPercent: 8,
      visits: 98765,
      commentsCount: 3,
      topCategory: 'Utile',
      lastCommentDate: '15/10/2026',
      commentList: [
        { text: 'Transporteur inventé, colis bien livré.', date: '14/10/2026', category: 'Utile' },
        { text: 'Mairie inventée.', date: '02/09/2026', category: 'Fiable' },
        { text: 'Pharmacie inventée.', date: '01/08/2026', category: 'Utile' },
      ],
    });
  });

  it('gives a null danger for a bar that carries only its colour class', () => {
    const data = expectOk(parseNumeroinconnuPage(fixture('bar-class-only.html')));
    expect(data.dangerPercent).toBeNull();
    expect(data.commentsCount).toBe(1);
  });

  it('calls a recognised page with an unreadable count invalid, never zero', () => {
    expect(parseNumeroinconnuPage(fixture('malformed-count.html'))).toEqual({ kind: 'invalid', reason: 'comments count missing or unreadable' });
  });

  it('calls a danger above 100 invalid', () => {
    const html = '<div id="progress-bar-inner">140</div><span id="count-comments">3</span>';
    expect(parseNumeroinconnuPage(html)).toEqual({ kind: 'invalid', reason: 'danger percent out of range' });
  });

  it('reads the Latin-1 page once decoded', () => {
    const html = new TextDecoder('latin1').decode(readFileSync(new URL('./fixtures/latin1.html', import.meta.url)));
    expect(expectOk(parseNumeroinconnuPage(html))).toEqual({
      dangerPercent: 91,
      visits: 3210,
      commentsCount: 1,
      topCategory: 'Dangereux',
      lastCommentDate: '02/11/2026',
      commentList: [{ text: 'Numéro inventé qui réclame des données bancaires.', date: '01/11/2026', category: 'Dangereux' }],
    });
  });

  it('caps the comment list', () => {
    const items = Array.from({ length: MAX_COMMENTS + 10 }, (_, index) => `<div class="comment-item"><p class="comment-text">c${index}</p></div>`);
    const data = expectOk(parseNumeroinconnuPage(`<span id="count-comments">${MAX_COMMENTS + 10}</span>${items.join('')}`));
    expect(data.commentList).toHaveLength(MAX_COMMENTS);
    expect(data.commentsCount).toBe(MAX_COMMENTS + 10);
  });

  it('treats a zero count with no comments and no danger as not_found even without the notice', () => {
    expect(parseNumeroinconnuPage('<span id="count-comments">0</span>')).toEqual({ kind: 'not_found' });
  });

  it('treats a zero count with no comments as not_found even when the bar shows a level', () => {
    expect(parseNumeroinconnuPage('<div id="progress-bar-inner">0</div><span id="count-comments">0</span>')).toEqual({ kind: 'not_found' });
  });

  it('keeps ok when comments are listed under a stale zero count', () => {
    const data = expectOk(parseNumeroinconnuPage('<span id="count-comments">0</span><div class="comment-item"><p class="comment-text">a</p></div>'));
    expect(data).toMatchObject({ commentsCount: 1, commentList: [{ text: 'a', date: '', category: '' }] });
  });

  it('never throws on broken markup', () => {
    for (const html of ['<', '<<<>>>', '<div id="count-comments"', '</p></div><td>', '<div class=">', '<!--', '<script>', '\u0000<\u0000']) {
      expect(() => parseNumeroinconnuPage(html)).not.toThrow();
    }
  });
});

describe('describeNumeroinconnuPage', () => {
  it('lists the markers found on a normal page', () => {
    expect(describeNumeroinconnuPage(fixture('normal.html'))).toEqual({
      countComments: true, commentsRow: true, dangerBar: true, dangerBarPercent: true, statsTable: true, dangerRow: true,
      visitsRow: true, lastRatingRow: true, commentItems: true, commentTexts: true, ranks: true, readableDates: true,
      rankFilter: true, siteNotice: false,
    });
  });

  it('tells a class-only bar from a bar with a percentage', () => {
    expect(describeNumeroinconnuPage(fixture('bar-class-only.html'))).toMatchObject({ dangerBar: true, dangerBarPercent: false });
  });

  it('lists none on a challenge page', () => {
    expect(Object.values(describeNumeroinconnuPage(fixture('challenge.html'))).some(Boolean)).toBe(false);
  });
});

describe('parseNumeroinconnuPage on hostile input', () => {
  it('never throws and never returns values outside the contract', () => {
    fc.assert(
      fc.property(hostileHtml(), (html) => {
        const result = parseNumeroinconnuPage(html);
        if (result.kind !== 'ok') return ['not_found', 'challenge', 'invalid'].includes(result.kind);
        const { data } = result;
        return (
          (data.dangerPercent === null || (Number.isInteger(data.dangerPercent) && data.dangerPercent >= 0 && data.dangerPercent <= 100)) &&
          (data.visits === null || Number.isSafeInteger(data.visits)) &&
          Number.isSafeInteger(data.commentsCount) &&
          isOutputDate(data.lastCommentDate) &&
          isPlainText(data.topCategory) &&
          data.commentList.length <= MAX_COMMENTS &&
          data.commentList.every((comment) => isOutputDate(comment.date) && isPlainText(comment.text) && isPlainText(comment.category))
        );
      }),
      { numRuns: 1500 },
    );
  });
});
