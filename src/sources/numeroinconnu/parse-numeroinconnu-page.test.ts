import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileHtml, isOutputDate, isPlainText, nestedPage } from '../../../harness/upstream-sites.js';
import { expectStoppedAtParseBound } from '../../../test/support/parse-bound.js';
import { markersOfNumeroinconnu, parseNumeroinconnuPage } from './parse-numeroinconnu-page.js';
import type { CommunityData } from '../../domain/report.js';
import { MAX_COMMENTS } from '../common/text.js';
import { haveRequiredMarkers } from '../markers.js';
import type { SourceOutcome } from '../../domain/ports/source.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const outcomeOf = (html: string): SourceOutcome<CommunityData> => parseNumeroinconnuPage(html).outcome;

function expectOk(outcome: SourceOutcome<CommunityData>): CommunityData {
  if (outcome.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(outcome)}`);
  return outcome.data;
}

const comment = (html: string): string =>
  `<div class="comment-item"><strong class="rank r1">Dangereux</strong><p class="comment-text">${html}</p><span class="date">01.02.2026</span></div>`;

describe('parseNumeroinconnuPage', () => {
  it('reads every field of a normal page', () => {
    expect(expectOk(outcomeOf(fixture('normal.html')))).toEqual({
      dangerPercent: 48,
      visits: 1393,
      commentsCount: 6,
      topCategory: 'Gênant',
      lastCommentDate: '20/11/2026',
      commentList: [
        {
          text: 'Sonne trois fois par jour, ne laisse jamais de message. Un vrai cœur de pierre.',
          date: '19/11/2026',
          category: 'Gênant',
        },
        { text: "Faux conseiller bancaire inventé, c'est une arnaque.", date: '18/11/2026', category: 'Dangereux' },
        {
          text: "Enquête inventée d'un institut münchnois, répétée chaque semaine ; il fait 30° dehors.",
          date: '10/11/2026',
          category: 'Gênant',
        },
        { text: 'Demande un code reçu par SMS <script> & raccroche.', date: '01/08/2026', category: 'Dangereux' },
      ],
    });
  });

  it('ignores markup inside scripts and styles', () => {
    // The fixture's script writes a fake `#count-comments` of 999.
    expect(expectOk(outcomeOf(fixture('normal.html'))).commentsCount).toBe(6);
  });

  it('reads a comment marked comment-item-ad as a real comment, and skips the advert after it', () => {
    const texts = expectOk(outcomeOf(fixture('normal.html'))).commentList.map((item) => item.text);
    expect(texts).toContain("Faux conseiller bancaire inventé, c'est une arnaque.");
    expect(texts.some((text) => text.includes('Publicité'))).toBe(false);
  });

  it("never reads the site's notices (partner pointer, removed placeholder) as comments", () => {
    const texts = expectOk(outcomeOf(fixture('normal.html'))).commentList.map((item) => item.text);
    expect(texts.some((text) => text.includes('partenaire') || text.includes('temporairement retiré'))).toBe(false);
  });

  it('skips a comment item marked comment-disabled', () => {
    const texts = expectOk(outcomeOf(fixture('normal.html'))).commentList.map((item) => item.text);
    expect(texts.some((text) => text.includes('modération'))).toBe(false);
  });

  it('takes the views count from the views table, not the locality table', () => {
    // The hidden locality table earlier in the page says "Nombre de visites : 1 727 800" (a population).
    expect(expectOk(outcomeOf(fixture('normal.html'))).visits).toBe(1393);
  });

  it('reads the last-rating date before the button text in its cell', () => {
    expect(expectOk(outcomeOf(fixture('normal.html'))).lastCommentDate).toBe('20/11/2026');
  });

  it('decodes &oelig; as œ, &uuml; as ü, &deg; and numeric and hex references in comment texts', () => {
    const texts = expectOk(outcomeOf(fixture('normal.html'))).commentList.map((item) => item.text);
    expect(texts.some((text) => text.includes('cœur'))).toBe(true);
    expect(texts.some((text) => text.includes('münchnois, répétée') && text.includes('30°'))).toBe(true);
  });

  it('keeps the text of profanity spans without a gap', () => {
    const data = expectOk(outcomeOf(fixture('normal.html')));
    expect(data.commentList.some((item) => item.text.endsWith("c'est une arnaque."))).toBe(true);
  });

  it('maps a rank class to its label when the rank text is empty (r2 = Gênant, r5 = Utile)', () => {
    const data = expectOk(outcomeOf(fixture('normal.html')));
    expect(data.commentList[2]?.category).toBe('Gênant');
    const partial = expectOk(outcomeOf(fixture('partial.html')));
    expect(partial.commentList[1]?.category).toBe('Utile');
  });

  it("an unknown number whose only item is the site's notice is not_found", () => {
    expect(outcomeOf(fixture('unknown.html'))).toEqual({ status: 'not_found' });
  });

  it('an item without a rating or without a readable date is not a comment', () => {
    const withoutRating =
      '<div class="comment-item"><p class="comment-text">a</p><span class="date">01.02.2026</span></div>';
    const withoutDate =
      '<div class="comment-item"><strong class="rank r1">Dangereux</strong><p class="comment-text">b</p></div>';
    const data = expectOk(
      outcomeOf(
        `<table><tr><td><span id="count-comments">3</span></td></tr></table>${withoutRating}${withoutDate}${comment('c')}`,
      ),
    );
    expect(data.commentList.map((item) => item.text)).toEqual(['c']);
  });

  it('answers ok with empty optional fields on a partial page', () => {
    expect(expectOk(outcomeOf(fixture('partial.html')))).toEqual({
      dangerPercent: null,
      visits: null,
      commentsCount: 2,
      // A tie (one Neutre, one Utile) goes to the most recent.
      topCategory: 'Neutre',
      lastCommentDate: '09/07/2026',
      commentList: [
        { text: 'Un institut de sondage inventé.', date: '09/07/2026', category: 'Neutre' },
        { text: 'Livreur inventé, tout va bien.', date: '07/07/2026', category: 'Utile' },
      ],
    });
  });

  it('calls a page without any marker a challenge', () => {
    expect(outcomeOf(fixture('challenge.html'))).toEqual({ status: 'blocked', reason: 'challenge' });
    expect(outcomeOf('')).toEqual({ status: 'blocked', reason: 'challenge' });
  });

  it('reads the danger from the table row, separators and × in counts, and the filter counts', () => {
    const data = expectOk(outcomeOf(fixture('danger-row-only.html')));
    expect(data.dangerPercent).toBe(37);
    expect(data.commentsCount).toBe(1204);
    expect(data.visits).toBe(1234567);
    expect(data.topCategory).toBe('Fiable');
  });

  it('takes the newest comment date, never the last visit, when there is no last-rating row', () => {
    const data = expectOk(outcomeOf(fixture('danger-row-only.html')));
    expect(data.lastCommentDate).toBe('20/11/2026');
  });

  it('reads a bar written with a percent sign, unquoted attributes and any class order', () => {
    const data = expectOk(outcomeOf(fixture('bar-percent-sign.html')));
    expect(data).toMatchObject({
      dangerPercent: 52,
      visits: 12000,
      commentsCount: 1,
      topCategory: 'Gênant',
      lastCommentDate: '05/03/2026',
    });
  });

  it('reads rows written as "label : value" in one element, and French month dates', () => {
    expect(expectOk(outcomeOf(fixture('inline-rows.html')))).toEqual({
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
    const data = expectOk(outcomeOf(fixture('bar-class-only.html')));
    expect(data.dangerPercent).toBeNull();
    expect(data.commentsCount).toBe(1);
  });

  it('calls a recognised page with an unreadable count invalid, never zero', () => {
    expect(outcomeOf(fixture('malformed-count.html'))).toEqual({ status: 'error', reason: 'parse' });
  });

  it('calls a danger above 100 invalid', () => {
    const html = '<div id="progress-bar-inner">140</div><span id="count-comments">3</span>';
    expect(outcomeOf(html)).toEqual({ status: 'error', reason: 'parse' });
  });

  it('calls a danger of 1000 invalid (not 100 %), in the bar or in the table row', () => {
    expect(outcomeOf('<div id="progress-bar-inner">1000</div><span id="count-comments">3</span>')).toEqual({
      status: 'error',
      reason: 'parse',
    });
    const row = fixture('danger-row-only.html').replace('<dd>37&#8239;%</dd>', '<dd>1000&#8239;%</dd>');
    expect(row).not.toBe(fixture('danger-row-only.html'));
    expect(outcomeOf(row)).toEqual({ status: 'error', reason: 'parse' });
  });

  it('calls visits of -7, comments of 1e3 or a 20-digit count invalid, never 7, 1 or 0', () => {
    const normal = fixture('normal.html');
    const visits = normal.replace('1&nbsp;393×', '-7');
    expect(visits).not.toBe(normal);
    expect(outcomeOf(visits)).toEqual({ status: 'error', reason: 'parse' });
    for (const count of ['1e3', '-6', '12345678901234567890']) {
      const comments = normal.replace(
        '<span id="count-comments">6</span>',
        `<span id="count-comments">${count}</span>`,
      );
      expect(comments).not.toBe(normal);
      expect(outcomeOf(comments), count).toEqual({ status: 'error', reason: 'parse' });
    }
  });

  it('reads the Latin-1 page once decoded', () => {
    const html = new TextDecoder('latin1').decode(readFileSync(new URL('./fixtures/latin1.html', import.meta.url)));
    expect(expectOk(outcomeOf(html))).toEqual({
      dangerPercent: 91,
      visits: 3210,
      commentsCount: 1,
      topCategory: 'Dangereux',
      lastCommentDate: '02/11/2026',
      commentList: [
        { text: 'Numéro inventé qui réclame des données bancaires.', date: '01/11/2026', category: 'Dangereux' },
      ],
    });
  });

  it('caps the comment list', () => {
    const items = Array.from({ length: MAX_COMMENTS + 10 }, (_, index) => comment(`c${index}`));
    const data = expectOk(outcomeOf(`<span id="count-comments">${MAX_COMMENTS + 10}</span>${items.join('')}`));
    expect(data.commentList).toHaveLength(MAX_COMMENTS);
    expect(data.commentsCount).toBe(MAX_COMMENTS + 10);
  });

  it('treats a zero count with no comments and no danger as not_found even without the notice', () => {
    expect(outcomeOf('<span id="count-comments">0</span>')).toEqual({ status: 'not_found' });
  });

  it('treats a zero count with no comments as not_found even when the bar shows a level', () => {
    expect(outcomeOf('<div id="progress-bar-inner">0</div><span id="count-comments">0</span>')).toEqual({
      status: 'not_found',
    });
  });

  it('keeps ok when comments are listed under a stale zero count', () => {
    const data = expectOk(outcomeOf(`<span id="count-comments">0</span>${comment('a')}`));
    expect(data).toMatchObject({
      commentsCount: 1,
      commentList: [{ text: 'a', date: '01/02/2026', category: 'Dangereux' }],
    });
  });

  it('never throws on broken markup', () => {
    for (const html of [
      '<',
      '<<<>>>',
      '<div id="count-comments"',
      '</p></div><td>',
      '<div class=">',
      '<!--',
      '<script>',
      '\u0000<\u0000',
    ]) {
      expect(() => parseNumeroinconnuPage(html)).not.toThrow();
    }
  });
});

describe('numeroinconnu markers, from the parse itself', () => {
  const found = (html: string): Record<string, boolean> =>
    Object.fromEntries(parseNumeroinconnuPage(html).markers.map((report) => [report.marker, report.found]));

  it('finds every marker of a normal page, the site notice and the advert included', () => {
    const markers = parseNumeroinconnuPage(fixture('normal.html')).markers;
    expect(markers.filter((report) => !report.found).map((report) => report.marker)).toEqual([]);
    expect(haveRequiredMarkers(markers)).toBe(true);
  });

  it('reports the notice and no real comment on the unknown-number page', () => {
    expect(found(fixture('unknown.html'))).toMatchObject({
      'site notice (comment item without rating or date)': true,
      'real comment (strong.rank.rN + p.comment-text + readable span.date)': false,
    });
    expect(haveRequiredMarkers(markersOfNumeroinconnu(fixture('unknown.html')))).toBe(true);
  });

  it('tells a class-only bar from a bar with a percentage', () => {
    expect(found(fixture('bar-class-only.html'))).toMatchObject({
      '#progress-bar-inner': true,
      '#progress-bar-inner with a percentage': false,
    });
  });

  it('finds none on a challenge page', () => {
    const markers = markersOfNumeroinconnu(fixture('challenge.html'));
    expect(markers.some((report) => report.found)).toBe(false);
    expect(haveRequiredMarkers(markers)).toBe(false);
  });
});

describe('parseNumeroinconnuPage on hostile input', () => {
  it('never throws and never returns values outside the contract', () => {
    fc.assert(
      fc.property(hostileHtml(), (html) => {
        const result = outcomeOf(html);
        if (result.status !== 'ok') return ['not_found', 'blocked', 'error'].includes(result.status);
        const { data } = result;
        return (
          (data.dangerPercent === null ||
            (Number.isInteger(data.dangerPercent) && data.dangerPercent >= 0 && data.dangerPercent <= 100)) &&
          (data.visits === null || Number.isSafeInteger(data.visits)) &&
          Number.isSafeInteger(data.commentsCount) &&
          isOutputDate(data.lastCommentDate) &&
          isPlainText(data.topCategory) &&
          data.commentList.length <= MAX_COMMENTS &&
          data.commentList.every(
            (comment) => isOutputDate(comment.date) && isPlainText(comment.text) && isPlainText(comment.category),
          )
        );
      }),
      { numRuns: 1500 },
    );
  });
});

describe('parseNumeroinconnuPage: a hostile page past the parse-work bound', () => {
  for (const unit of ['<div>', '<div class="comment-item">', '<table><tr><td>', '<span id="count-comments">']) {
    it(`ends 1 MiB of nested ${unit} as error(parse), with the bound's marker`, () => {
      expectStoppedAtParseBound(parseNumeroinconnuPage(nestedPage(unit)));
    });
  }
});
