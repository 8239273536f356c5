import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { haveRequiredMarkers } from '../markers.js';
import { collapseList, describeTellowsApiMarkers, extractFirstJsonObject, parseTellowsApi } from './parse-tellows-api.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

const NORMAL_DATA = {
  score: 8,
  searches: 1234,
  commentsCount: 3,
  commentList: [
    {
      author: 'Camille',
      text: "Isolation – Appel insistant pour une isolation à 1 euro, raccroche dès qu'on répond.",
      date: '12/03/2024',
      callerType: 'Démarchage',
    },
    // subject equal to text: not repeated
    { author: 'Dominique', text: 'Message vocal demandant de rappeler un numéro surtaxé.', date: '05/02/2024', callerType: 'Arnaque' },
    // no caller type of its own: the number's first caller type; tags and bidi characters gone
    { author: '', text: "Encore eux , trois fois aujourd'hui.", date: '30/01/2024', callerType: 'Démarchage' },
  ],
};

describe('parseTellowsApi', () => {
  it('maps a normal answer field by field', () => {
    expect(parseTellowsApi(fixture('api-normal.json'))).toEqual({ kind: 'ok', data: NORMAL_DATA, mainCallerType: 'Démarchage' });
  });

  it('ignores the "Partner Data not correct" line after the JSON', () => {
    expect(fixture('api-trailer-after.txt')).toContain('Partner Data not correct');
    expect(parseTellowsApi(fixture('api-trailer-after.txt'))).toEqual({ kind: 'ok', data: NORMAL_DATA, mainCallerType: 'Démarchage' });
  });

  it('ignores the "Partner Data not correct" line before the JSON', () => {
    expect(parseTellowsApi(fixture('api-trailer-before.txt'))).toEqual({ kind: 'ok', data: NORMAL_DATA, mainCallerType: 'Démarchage' });
  });

  it('reads lists collapsed to a single object', () => {
    expect(parseTellowsApi(fixture('api-single-object-lists.json'))).toEqual({
      kind: 'ok',
      mainCallerType: 'Service client',
      data: {
        score: 3,
        searches: 87,
        commentsCount: 1,
        commentList: [{ author: 'Lou', text: "SAV – C'était le service après-vente, rien d'inquiétant.", date: '14/06/2024', callerType: 'Service client' }],
      },
    });
  });

  it('accepts callerNames as a bare string and counts with a thousands separator', () => {
    const result = parseTellowsApi(fixture('api-bare-string-caller-names.json'));
    expect(result).toMatchObject({ kind: 'ok', data: { score: 6, searches: 2345, commentsCount: 2 } });
    if (result.kind !== 'ok') throw new Error('expected ok');
    expect(result.data.commentList.map((comment) => [comment.date, comment.callerType])).toEqual([
      ['01/05/2024', 'Sondage'],
      ['02/05/2024', 'Sondage'],
    ]);
  });

  it('leaves comments empty when every list is missing, keeping the counts', () => {
    expect(parseTellowsApi(fixture('api-missing-lists.json'))).toEqual({
      kind: 'ok',
      mainCallerType: '',
      data: { score: 7, searches: 410, commentsCount: 5, commentList: [] },
    });
  });

  it('calls an unknown number (score 5, no comment, no search) not_found', () => {
    expect(parseTellowsApi(fixture('api-unknown-number.json'))).toEqual({ kind: 'not_found' });
  });

  it('gives a searched but unrated number a null score, never the neutral 5', () => {
    expect(parseTellowsApi(fixture('api-searched-unrated.json'))).toEqual({
      kind: 'ok',
      mainCallerType: '',
      data: { score: null, searches: 17, commentsCount: 0, commentList: [] },
    });
  });

  it('recognises the invalid-key text as an auth error', () => {
    expect(parseTellowsApi(fixture('api-invalid-key.txt'))).toEqual({ kind: 'auth_error' });
  });

  it('rejects bodies that are not the expected JSON', () => {
    expect(parseTellowsApi('<html>maintenance</html>')).toMatchObject({ kind: 'invalid' });
    expect(parseTellowsApi('{"other":{}}')).toMatchObject({ kind: 'invalid' });
    expect(parseTellowsApi('{"tellows":{"score":"","comments":"3"}}')).toMatchObject({ kind: 'invalid' });
    expect(parseTellowsApi('{"tellows":{"score":"12","comments":"3"}}')).toMatchObject({ kind: 'invalid' });
    expect(parseTellowsApi('{"tellows":{"score":"8"')).toMatchObject({ kind: 'invalid' });
  });

  it('caps the comment list at 50', () => {
    const comments = Array.from({ length: 80 }, (_, index) => ({ userName: `u${index}`, text: `t${index}`, created: '2024-01-01' }));
    const body = JSON.stringify({ tellows: { score: '9', searches: '1', comments: '80', commentList: { comment: comments } } });
    const result = parseTellowsApi(body);
    expect(result.kind === 'ok' ? result.data.commentList.length : -1).toBe(50);
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

describe('describeTellowsApiMarkers', () => {
  it('finds every required marker in a normal answer', () => {
    expect(haveRequiredMarkers(describeTellowsApiMarkers(fixture('api-trailer-after.txt')))).toBe(true);
  });

  it('reports the invalid-key text and the missing object', () => {
    const reports = describeTellowsApiMarkers(fixture('api-invalid-key.txt'));
    expect(haveRequiredMarkers(reports)).toBe(false);
    expect(reports.filter((report) => !report.found).map((report) => report.marker)).toContain('no invalid-key text');
  });
});
