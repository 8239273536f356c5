import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { haveRequiredMarkers } from '../markers.js';
import { describeTellowsPageMarkers, parseTellowsPage } from './parse-tellows-page.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('parseTellowsPage', () => {
  it('reads score, counts, caller types and comments of a normal page', () => {
    expect(parseTellowsPage(fixture('page-normal.html'))).toEqual({
      kind: 'ok',
      // the most frequent caller type of table.table-rating, given to every comment
      mainCallerType: 'Démarchage',
      data: {
        score: 8,
        searches: 1234,
        commentsCount: 3,
        commentList: [
          { author: 'Camille', text: "Appel insistant pour une isolation à 1 euro, raccroche dès qu'on répond.", date: '12/03/2024', callerType: 'Démarchage' },
          { author: 'Dominique', text: 'Message vocal demandant de rappeler un numéro surtaxé.', date: '05/02/2024', callerType: 'Démarchage' },
          { author: 'Anonyme', text: "Encore eux <script>alert(1)</script> trois fois aujourd'hui.", date: '30/01/2024', callerType: 'Démarchage' },
        ],
      },
    });
  });

  it('reads a partial page: score image without alt, no comments block → null score, empty list', () => {
    expect(parseTellowsPage(fixture('page-partial.html'))).toEqual({
      kind: 'ok',
      mainCallerType: '',
      data: { score: null, searches: 42, commentsCount: 0, commentList: [] },
    });
  });

  it('calls a page with no comment and no search not_found', () => {
    expect(parseTellowsPage(fixture('page-unknown.html'))).toEqual({ kind: 'not_found' });
  });

  it('calls a 200 page without img.scoreimage a challenge, even if it holds words we read', () => {
    expect(parseTellowsPage(fixture('page-challenge.html'))).toEqual({ kind: 'challenge' });
  });

  it('reads the Latin-1 page variant once decoded', () => {
    const html = new TextDecoder('windows-1252').decode(readFileSync(new URL('./fixtures/page-latin1.html', import.meta.url)));
    expect(parseTellowsPage(html)).toEqual({
      kind: 'ok',
      mainCallerType: 'Télémarketing',
      data: {
        score: 7,
        searches: 56,
        commentsCount: 2,
        commentList: [
          { author: 'Élodie', text: 'Propose une étude gratuite de la façade, très insistant.', date: '03/04/2024', callerType: 'Télémarketing' },
          { author: 'François', text: 'Déjà signalé, même discours.', date: '01/04/2024', callerType: 'Télémarketing' },
        ],
      },
    });
  });

  it('treats a score image whose score cannot be read as invalid, not as data', () => {
    expect(parseTellowsPage('<img class="scoreimage" src="/x.png" alt="tellows">')).toMatchObject({ kind: 'invalid' });
  });

  it('caps the comment list at 50', () => {
    const items = Array.from({ length: 70 }, (_, index) => `<li><div class="comment-body"><p class="mb-0">c${index}</p></div></li>`).join('');
    const html = `<img class="scoreimage" alt="Score 9"><a href="#complaint_list">70</a><ol id="singlecomments">${items}</ol>`;
    const result = parseTellowsPage(html);
    expect(result.kind === 'ok' ? result.data.commentList.length : -1).toBe(50);
  });
});

describe('describeTellowsPageMarkers', () => {
  it('finds every marker on a normal page', () => {
    const reports = describeTellowsPageMarkers(fixture('page-normal.html'));
    expect(reports.every((report) => report.found)).toBe(true);
  });

  it('lists the missing optional blocks of a partial page without failing it', () => {
    const reports = describeTellowsPageMarkers(fixture('page-partial.html'));
    expect(haveRequiredMarkers(reports)).toBe(true);
    expect(reports.filter((report) => !report.found).map((report) => report.marker)).toContain('#singlecomments > li');
  });

  it('fails the required score marker on a challenge page', () => {
    expect(haveRequiredMarkers(describeTellowsPageMarkers(fixture('page-challenge.html')))).toBe(false);
  });
});

describe('parseTellowsPage on hostile input (about 1 MiB, must not go quadratic)', () => {
  const MIB = 1024 * 1024;
  const hostilePages: Array<[string, string]> = [
    ['unclosed tag starts', '<a'.repeat(MIB / 2)],
    ['unclosed comments', '<!--'.repeat(MIB / 4)],
    ['unclosed scripts', '<script'.repeat(MIB / 7)],
    ['unclosed list items', `<img class="scoreimage" alt="Score 8"><ol id="singlecomments">${'<li>x'.repeat(MIB / 5)}`],
    ['unclosed comment bodies', `<img class="scoreimage" alt="Score 8"><ol id="singlecomments"><li>${'<div class="comment-body">'.repeat(MIB / 26)}`],
    ['one giant tag of unmatched quotes', `<img class="scoreimage" ${'a="'.repeat(MIB / 3)}>`],
  ];
  for (const [name, html] of hostilePages) {
    it(`finishes on ${name}`, { timeout: 10_000 }, () => {
      expect(['ok', 'not_found', 'challenge', 'invalid']).toContain(parseTellowsPage(html).kind);
      expect(describeTellowsPageMarkers(html).length).toBeGreaterThan(0);
    });
  }
});
