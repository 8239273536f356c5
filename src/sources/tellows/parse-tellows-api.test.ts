import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PrimaryData } from '../../domain/report.js';
import { haveRequiredMarkers } from '../markers.js';
import type { SourceOutcome } from '../../domain/ports/source.js';
import { collapseList, extractFirstJsonObject, markersOfTellowsApi, parseTellowsApi } from './parse-tellows-api.js';
import { MAX_PAGE_NODES } from '../common/html.js';
import { WITHIN_PARSE_BOUND_MARKER } from '../common/outcomes.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const outcomeOf = (body: string): SourceOutcome<PrimaryData> => parseTellowsApi(body).outcome;

const NORMAL_DATA = {
  score: 8,
  searches: 1234,
  commentsCount: 3,
  commentList: [
    {
      author: 'Camille',
      text: "Isolation – Appel insistant pour une isolation à 1 euro, raccroche dès qu'on répond, j'en ai gros sur le cœur.",
      date: '12/03/2024',
      callerType: 'Démarchage',
    },
    // subject equal to text: not repeated
    {
      author: 'Dominique',
      text: 'Message vocal demandant de rappeler un numéro surtaxé.',
      date: '05/02/2024',
      callerType: 'Arnaque',
    },
    // no caller type of its own: the number's most frequent caller type; tags and bidi characters gone
    { author: '', text: "Encore eux, trois fois aujourd'hui.", date: '30/01/2024', callerType: 'Démarchage' },
  ],
};

describe('parseTellowsApi', () => {
  it('maps a normal answer field by field', () => {
    const parsed = parseTellowsApi(fixture('api-normal.json'));
    expect(parsed.outcome).toEqual({ status: 'ok', data: NORMAL_DATA });
    expect(parsed.mainCallerType).toBe('Démarchage');
  });

  it('sorts the caller types by count: the most frequent one is the main caller type, whatever the order sent', () => {
    // The fixture lists Arnaque (1) before Démarchage (2).
    expect(parseTellowsApi(fixture('api-normal.json')).mainCallerType).toBe('Démarchage');
  });

  it('decodes &oelig; as œ in an API comment text', () => {
    const data = parseTellowsApi(fixture('api-normal.json')).outcome;
    expect(data.status === 'ok' ? data.data.commentList[0]?.text : '').toContain('cœur');
  });

  it('ignores the "Partner Data not correct" line after the JSON', () => {
    expect(fixture('api-trailer-after.txt')).toContain('Partner Data not correct');
    expect(outcomeOf(fixture('api-trailer-after.txt'))).toEqual({ status: 'ok', data: NORMAL_DATA });
  });

  it('ignores the "Partner Data not correct" line before the JSON', () => {
    expect(outcomeOf(fixture('api-trailer-before.txt'))).toEqual({ status: 'ok', data: NORMAL_DATA });
  });

  it('reads lists collapsed to a single object', () => {
    const parsed = parseTellowsApi(fixture('api-single-object-lists.json'));
    expect(parsed.mainCallerType).toBe('Service client');
    expect(parsed.outcome).toEqual({
      status: 'ok',
      data: {
        score: 3,
        searches: 87,
        commentsCount: 1,
        commentList: [
          {
            author: 'Lou',
            text: "SAV – C'était le service après-vente, rien d'inquiétant.",
            date: '14/06/2024',
            callerType: 'Service client',
          },
        ],
      },
    });
  });

  it('accepts callerNames as a bare string and counts with a thousands separator', () => {
    const result = outcomeOf(fixture('api-bare-string-caller-names.json'));
    expect(result).toMatchObject({ status: 'ok', data: { score: 6, searches: 2345, commentsCount: 2 } });
    if (result.status !== 'ok') throw new Error('expected ok');
    expect(result.data.commentList.map((comment) => [comment.date, comment.callerType])).toEqual([
      ['01/05/2024', 'Sondage'],
      ['02/05/2024', 'Sondage'],
    ]);
  });

  it('leaves comments empty when every list is missing, keeping the counts', () => {
    expect(outcomeOf(fixture('api-missing-lists.json'))).toEqual({
      status: 'ok',
      data: { score: 7, searches: 410, commentsCount: 5, commentList: [] },
    });
  });

  it('calls an unknown number (score 5, no comment, no search) not_found', () => {
    expect(outcomeOf(fixture('api-unknown-number.json'))).toEqual({ status: 'not_found' });
  });

  it('gives a searched but unrated number a null score, never the neutral 5', () => {
    expect(outcomeOf(fixture('api-searched-unrated.json'))).toEqual({
      status: 'ok',
      data: { score: null, searches: 17, commentsCount: 0, commentList: [] },
    });
  });

  it('recognises the invalid-key text as an auth error', () => {
    expect(outcomeOf(fixture('api-invalid-key.txt'))).toEqual({ status: 'error', reason: 'auth' });
  });

  it('rejects bodies that are not the expected JSON', () => {
    expect(outcomeOf('<html>maintenance</html>')).toEqual({ status: 'error', reason: 'invalid_json' });
    expect(outcomeOf('{"other":{}}')).toEqual({ status: 'error', reason: 'invalid_json' });
    expect(outcomeOf('{"tellows":{"score":"","comments":"3"}}')).toEqual({ status: 'error', reason: 'invalid_json' });
    expect(outcomeOf('{"tellows":{"score":"12","comments":"3"}}')).toEqual({ status: 'error', reason: 'invalid_json' });
    expect(outcomeOf('{"tellows":{"score":"8"')).toEqual({ status: 'error', reason: 'invalid_json' });
  });

  it('calls counts out of their range invalid JSON, as a score of 99 is: comments 1e3, 20-digit searches, negative counts', () => {
    const normal = fixture('api-normal.json');
    const cases = [
      ['"score":"8"', '"score":"99"'],
      ['"comments":"3"', '"comments":"1e3"'],
      ['"comments":"3"', '"comments":"-3"'],
      ['"searches":"1234"', '"searches":"12345678901234567890"'],
      ['"searches":"1234"', '"searches":-7'],
      ['"searches":"1234"', '"searches":12.5'],
    ] as const;
    for (const [from, to] of cases) {
      const body = normal.replace(from, to);
      expect(body).not.toBe(normal);
      expect(outcomeOf(body), to).toEqual({ status: 'error', reason: 'invalid_json' });
    }
    // A JSON number that is a whole count is still read.
    expect(outcomeOf(normal.replace('"searches":"1234"', '"searches":1e3'))).toMatchObject({
      status: 'ok',
      data: { searches: 1000 },
    });
  });

  it('ends an answer with more tags than the parse-work bound as invalid_json, before parsing any field', () => {
    const body = fixture('api-normal.json').replace(
      '"text":"Appel insistant',
      `"text":"${'<div>'.repeat(MAX_PAGE_NODES + 1)}Appel insistant`,
    );
    const parsed = parseTellowsApi(body);
    expect(parsed.outcome).toEqual({ status: 'error', reason: 'invalid_json' });
    expect(parsed.markers).toEqual([{ marker: WITHIN_PARSE_BOUND_MARKER, found: false }]);
    // At the bound itself the answer is read.
    const within = fixture('api-normal.json').replace(
      '"text":"Appel insistant',
      `"text":"${'<b>'.repeat(1000)}Appel insistant`,
    );
    expect(parseTellowsApi(within).outcome.status).toBe('ok');
  });

  it('caps the comment list at 50', () => {
    const comments = Array.from({ length: 80 }, (_, index) => ({
      userName: `u${index}`,
      text: `t${index}`,
      created: '2024-01-01',
    }));
    const body = JSON.stringify({
      tellows: { score: '9', searches: '1', comments: '80', commentList: { comment: comments } },
    });
    const result = outcomeOf(body);
    expect(result.status === 'ok' ? result.data.commentList.length : -1).toBe(50);
  });
});

describe('extractFirstJsonObject', () => {
  it('matches braces without being fooled by braces and quotes inside strings', () => {
    expect(extractFirstJsonObject('junk {"a":"}{\\"","b":{"c":1}} tail {"d":2}')).toEqual({ a: '}{"', b: { c: 1 } });
  });

  it('skips a brace in leading text that does not start JSON', () => {
    expect(extractFirstJsonObject('note {not json} then {"ok":true}')).toEqual({ ok: true });
  });

  it('returns undefined when no object is complete', () => {
    expect(extractFirstJsonObject('{"a":')).toBeUndefined();
    expect(extractFirstJsonObject('plain text')).toBeUndefined();
  });
});

describe('collapseList', () => {
  it('turns array, single object, bare string and missing into one list shape', () => {
    expect(collapseList({ caller: [{ name: 'a' }, { name: 'b' }] }, 'caller')).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(collapseList({ caller: { name: 'a' } }, 'caller')).toEqual([{ name: 'a' }]);
    expect(collapseList({ caller: 'a' }, 'caller')).toEqual([{ name: 'a' }]);
    expect(collapseList({}, 'caller')).toEqual([]);
    expect(collapseList(undefined, 'caller')).toEqual([]);
    expect(collapseList('', 'caller')).toEqual([]);
  });
});

describe('tellows API markers, from the parse itself', () => {
  it('finds every required marker in a normal answer', () => {
    expect(haveRequiredMarkers(markersOfTellowsApi(fixture('api-trailer-after.txt')))).toBe(true);
  });

  it('reports the invalid-key text and the missing object', () => {
    const reports = markersOfTellowsApi(fixture('api-invalid-key.txt'));
    expect(haveRequiredMarkers(reports)).toBe(false);
    expect(reports.filter((report) => !report.found).map((report) => report.marker)).toContain('no invalid-key text');
  });
});
