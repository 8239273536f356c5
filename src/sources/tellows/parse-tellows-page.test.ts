import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nestedPage } from '../../../harness/upstream-sites.js';
import { expectStoppedAtParseBound } from '../../../test/support/parse-bound.js';
import type { PrimaryData } from '../../domain/report.js';
import { haveRequiredMarkers } from '../markers.js';
import type { SourceOutcome } from '../../domain/ports/source.js';
import { markersOfTellowsPage, parseTellowsPage } from './parse-tellows-page.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const outcomeOf = (html: string): SourceOutcome<PrimaryData> => parseTellowsPage(html).outcome;

function expectOk(outcome: SourceOutcome<PrimaryData>): PrimaryData {
  if (outcome.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(outcome)}`);
  return outcome.data;
}

/** A page with a readable score and the given markup after it. */
const page = (inner: string): string =>
  `<div id="tellowsscore"><img class="scoreimage" alt="tellows Score 6"></div><a href="#complaint_list"><strong>Évaluations: <span>1</span></strong></a>${inner}`;

describe('parseTellowsPage', () => {
  it('reads score, counts, caller types and comments of a normal page', () => {
    const parsed = parseTellowsPage(fixture('page-normal.html'));
    // The most frequent call type of the call-type table, given to every comment.
    expect(parsed.mainCallerType).toBe('Démarchage');
    expect(parsed.outcome).toEqual({
      status: 'ok',
      data: {
        score: 8,
        searches: 1234,
        commentsCount: 3,
        commentList: [
          {
            author: 'Camille',
            text: "Appel insistant pour une isolation à 1 euro, raccroche dès qu'on répond. J'en ai gros sur le cœur.",
            date: '12/03/2024',
            callerType: 'Démarchage',
          },
          {
            author: 'Jürgen',
            text: 'Message vocal demandant de rappeler un numéro surtaxé.',
            date: '05/02/2024',
            callerType: 'Démarchage',
          },
          {
            author: 'Anonyme',
            text: "Encore eux <script>alert(1)</script> trois fois aujourd'hui.",
            date: '30/01/2024',
            callerType: 'Démarchage',
          },
        ],
      },
    });
  });

  it('reads the call types from the table under the call-type heading, without the count', () => {
    // The caller-names table comes first on the page and has the larger count.
    expect(parseTellowsPage(fixture('page-normal.html')).mainCallerType).toBe('Démarchage');
    const namesLast = page(
      `<div class="col-md-4"><h5>Types d'appel</h5><table class="table-rating"><tr><th>Sondage <span class="small">(2)</span></th></tr></table></div>` +
        `<div class="col-md-4"><h5>Noms de l'appelant</h5><table class="table-rating"><tr><th>Société <span class="small">(7)</span></th></tr></table></div>`,
    );
    expect(parseTellowsPage(namesLast).mainCallerType).toBe('Sondage');
  });

  it('reads the call types from the table that is not the caller-names one when the other heading is unknown', () => {
    const html = page(
      `<div class="col-md-4"><h5>Noms de l'appelant</h5><table class="table-rating"><tr><th>Société <span class="small">(7)</span></th></tr></table></div>` +
        `<div class="col-md-4"><h5>Catégories</h5><table class="table-rating"><tr><th>Sondage <span class="small">(2)</span></th></tr></table></div>`,
    );
    expect(parseTellowsPage(html).mainCallerType).toBe('Sondage');
  });

  it('reads no call type at all when the only rating table is the caller-names one', () => {
    const html = page(
      `<h5>Noms de l'appelant</h5><table class="table-rating"><tr><th>Société <span class="small">(7)</span></th></tr></table>`,
    );
    expect(parseTellowsPage(html).mainCallerType).toBe('');
  });

  it('reads searches after their label, not from the recent-searches sidebar', () => {
    expect(expectOk(outcomeOf(fixture('page-normal.html'))).searches).toBe(1234);
    // Only a sidebar: its numbers are other numbers, never a count.
    const sidebarOnly = page(
      '<aside><h5>Dernières recherches</h5><ul><li><a href="/num/0123456789">0123456789</a></li></ul></aside>',
    );
    expect(expectOk(outcomeOf(sidebarOnly)).searches).toBe(0);
  });

  it("reads the score from the page's image src (/images/score/sN.jpg) and from the API's scoreN.png form", () => {
    const withSrc = (src: string): string =>
      `<img class="scoreimage" src="${src}" alt=""><a href="#complaint_list"><span>2</span></a>`;
    expect(expectOk(outcomeOf(withSrc('/images/score/s7.jpg'))).score).toBe(7);
    expect(expectOk(outcomeOf(withSrc('https://www.tellows.de/img/score/score3.png'))).score).toBe(3);
  });

  it('decodes &oelig; as œ, &uuml; as ü, and numeric and hex references', () => {
    const data = expectOk(outcomeOf(fixture('page-normal.html')));
    expect(data.commentList[0]?.text).toContain('cœur');
    expect(data.commentList[1]?.author).toBe('Jürgen');
    expect(data.commentList[1]?.text).toContain('numéro surtaxé');
  });

  it('reads a partial page: score image without alt, no comments block → null score, empty list', () => {
    expect(outcomeOf(fixture('page-partial.html'))).toEqual({
      status: 'ok',
      data: { score: null, searches: 42, commentsCount: 0, commentList: [] },
    });
  });

  it('calls a page with no comment and no search not_found', () => {
    expect(outcomeOf(fixture('page-unknown.html'))).toEqual({ status: 'not_found' });
  });

  it('calls a 200 page without img.scoreimage a challenge, even if it holds words we read', () => {
    expect(outcomeOf(fixture('page-challenge.html'))).toEqual({ status: 'blocked', reason: 'challenge' });
  });

  it('reads the Latin-1 page variant once decoded, with a single unheaded rating table', () => {
    const html = new TextDecoder('windows-1252').decode(
      readFileSync(new URL('./fixtures/page-latin1.html', import.meta.url)),
    );
    const parsed = parseTellowsPage(html);
    expect(parsed.mainCallerType).toBe('Télémarketing');
    expect(parsed.outcome).toEqual({
      status: 'ok',
      data: {
        score: 7,
        searches: 56,
        commentsCount: 2,
        commentList: [
          {
            author: 'Élodie',
            text: 'Propose une étude gratuite de la façade, très insistant.',
            date: '03/04/2024',
            callerType: 'Télémarketing',
          },
          { author: 'François', text: 'Déjà signalé, même discours.', date: '01/04/2024', callerType: 'Télémarketing' },
        ],
      },
    });
  });

  it('treats a score image whose score cannot be read as invalid, not as data', () => {
    expect(outcomeOf('<img class="scoreimage" src="/x.png" alt="tellows">')).toEqual({
      status: 'error',
      reason: 'parse',
    });
  });

  it('calls a page whose searches or comments count is no count invalid, never 0 or a smaller count', () => {
    const normal = fixture('page-normal.html');
    const cases = [
      ['<strong>Recherches:</strong> 1&nbsp;234', '<strong>Recherches:</strong> 12345678901234567890'],
      ['<strong>Recherches:</strong> 1&nbsp;234', '<strong>Recherches:</strong> -7'],
      ['<strong>Recherches:</strong> 1&nbsp;234', '<strong>Recherches:</strong> 1e3'],
      ['<span>3</span>', '<span>1e3</span>'],
      ['<span>3</span>', '<span>-3</span>'],
    ] as const;
    for (const [from, to] of cases) {
      const html = normal.replace(from, to);
      expect(html).not.toBe(normal);
      expect(outcomeOf(html), to).toEqual({ status: 'error', reason: 'parse' });
    }
  });

  it('caps the comment list at 50', () => {
    const items = Array.from(
      { length: 70 },
      (_, index) => `<li><div class="comment-body"><p class="mb-0">c${index}</p></div></li>`,
    ).join('');
    const html = `<img class="scoreimage" alt="Score 9"><a href="#complaint_list">70</a><ol id="singlecomments">${items}</ol>`;
    expect(expectOk(outcomeOf(html)).commentList).toHaveLength(50);
  });
});

describe('tellows page markers, from the parse itself', () => {
  it('finds every marker on a normal page', () => {
    const reports = markersOfTellowsPage(fixture('page-normal.html'));
    expect(reports.filter((report) => !report.found).map((report) => report.marker)).toEqual([]);
  });

  it('lists the missing optional blocks of a partial page without failing it', () => {
    const reports = markersOfTellowsPage(fixture('page-partial.html'));
    expect(haveRequiredMarkers(reports)).toBe(true);
    expect(reports.filter((report) => !report.found).map((report) => report.marker)).toContain('#singlecomments > li');
  });

  it('fails the required score marker on a challenge page', () => {
    expect(haveRequiredMarkers(markersOfTellowsPage(fixture('page-challenge.html')))).toBe(false);
  });
});

describe('parseTellowsPage on hostile input (about 1 MiB, must not go quadratic)', () => {
  const MIB = 1024 * 1024;
  const hostilePages: Array<[string, string]> = [
    ['unclosed tag starts', '<a'.repeat(MIB / 2)],
    ['unclosed comments', '<!--'.repeat(MIB / 4)],
    ['unclosed scripts', '<script'.repeat(MIB / 7)],
    ['unclosed list items', `<img class="scoreimage" alt="Score 8"><ol id="singlecomments">${'<li>x'.repeat(MIB / 5)}`],
    [
      'unclosed comment bodies',
      `<img class="scoreimage" alt="Score 8"><ol id="singlecomments"><li>${'<div class="comment-body">'.repeat(MIB / 26)}`,
    ],
    ['one giant tag of unmatched quotes', `<img class="scoreimage" ${'a="'.repeat(MIB / 3)}>`],
  ];
  for (const [name, html] of hostilePages) {
    it(`finishes on ${name}`, { timeout: 10_000 }, () => {
      const parsed = parseTellowsPage(html);
      expect(['ok', 'not_found', 'blocked', 'error']).toContain(parsed.outcome.status);
      expect(parsed.markers.length).toBeGreaterThan(0);
    });
  }
});

describe('parseTellowsPage: a hostile page past the parse-work bound', () => {
  for (const unit of [
    '<div>',
    '<div class="comment-body">',
    '<a href="#complaint_list">',
    '<ol id="singlecomments"><li>',
  ]) {
    it(`ends 1 MiB of nested ${unit} as error(parse), with the bound's marker`, () => {
      expectStoppedAtParseBound(parseTellowsPage(nestedPage(unit)));
    });
  }
});
