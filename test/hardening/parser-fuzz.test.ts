// Fuzzing the upstream parsers: each one is fed its own fixtures mutated (sliced, duplicated,
// tags deleted, random bytes and Unicode inserted, digits swapped for look-alikes, markup
// repeated thousands of times) and plain random strings. Each parse returns one of its typed
// outcomes, never throws, and an `ok` never carries a value outside the spec's ranges or a
// control or bidi character in a text field. (Angle brackets may remain in text: the adapters
// decode `&lt;` to `<` on purpose and clients escape; see docs/readme/proof.md.)
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseNumeroinconnuPage } from '../../src/sources/numeroinconnu/parse-numeroinconnu-page.js';
import { parseTelguarderPage } from '../../src/sources/telguarder/parse-telguarder-page.js';
import { parseTellowsApi } from '../../src/sources/tellows/parse-tellows-api.js';
import { parseTellowsPage } from '../../src/sources/tellows/parse-tellows-page.js';

const RUNS_PER_PARSER = 1500;
const DATE = /^(\d{2}\/\d{2}\/\d{4})?$/;
// Control characters (tab and newline aside) and bidi controls never reach a text field.
// eslint-disable-next-line no-control-regex -- the control characters are what this looks for
const CONTROL_OR_BIDI = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u202a-\u202e\u2066-\u2069]/;

function readFixtures(upstream: string, accept: (file: string) => boolean): string[] {
  const directory = fileURLToPath(new URL(`../../src/sources/${upstream}/fixtures/`, import.meta.url));
  const files = readdirSync(directory).filter(accept);
  if (files.length === 0) throw new Error(`no fixtures for ${upstream}`);
  return files.map((file) => readFileSync(`${directory}${file}`, 'utf8'));
}

/** One edit of a document; positions are fractions so they fit any length. */
const mutation = fc.oneof(
  fc
    .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([a, b]) => (text: string) => {
      const [from, to] = [Math.floor(Math.min(a, b) * text.length), Math.ceil(Math.max(a, b) * text.length)];
      return text.slice(from, to);
    }),
  fc
    .tuple(
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
    )
    .map(([a, b, at]) => (text: string) => {
      const [from, to] = [Math.floor(Math.min(a, b) * text.length), Math.ceil(Math.max(a, b) * text.length)];
      const position = Math.floor(at * text.length);
      return `${text.slice(0, position)}${text.slice(from, to)}${text.slice(position)}`;
    }),
  fc.nat(50).map((index) => (text: string) => {
    // Deletes the index-th tag (opening or closing), so elements lose their ends.
    let seen = 0;
    return text.replace(/<[^>]+>/g, (tag) => (seen++ === index ? '' : tag));
  }),
  fc
    .tuple(
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.constantFrom(
          '<',
          '>',
          '"',
          "'",
          '&',
          '&#x0;',
          '&#99999999;',
          '<!--',
          ']]>',
          '<script>',
          '\u0000',
          '\u202e',
          '\ufeff',
          '{',
          '}',
          '[',
          ']',
          '\\',
          '"score":',
        ),
      ),
    )
    .map(([at, insert]) => (text: string) => {
      const position = Math.floor(at * text.length);
      return `${text.slice(0, position)}${insert}${text.slice(position)}`;
    }),
  fc
    .constantFrom('٣', '３', '𝟑', 'O', '\u00a0')
    .map((digit) => (text: string) => text.replace(/\d/g, (match) => (match === '7' ? digit : match))),
  fc
    .tuple(
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.constantFrom('<div class="comment">', '<li class="x">', '<table><tr><td>', '{"a":', '<span', '&amp;', '<!--'),
      fc.integer({ min: 100, max: 5000 }),
    )
    .map(([at, unit, times]) => (text: string) => {
      const position = Math.floor(at * text.length);
      return `${text.slice(0, position)}${unit.repeat(times)}${text.slice(position)}`;
    }),
);

function mutatedDocument(fixtures: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.constantFrom(...fixtures), fc.array(mutation, { minLength: 1, maxLength: 5 }))
        .map(([fixture, edits]) => edits.reduce((text, edit) => edit(text), fixture)),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 2000 }) },
    {
      weight: 1,
      arbitrary: fc.string({
        unit: fc.constantFrom('<', '>', '/', 'div', 'span', 'class="', '"', ' ', 'a', '1', '{', '}', ':', ','),
        maxLength: 500,
      }),
    },
  );
}

/** What is wrong with a parse result's data, or undefined when every field is in its range. */
function checkTexts(texts: unknown[]): string | undefined {
  for (const text of texts) {
    if (typeof text !== 'string') return `text field of type ${typeof text}`;
    if (CONTROL_OR_BIDI.test(text))
      return `control or bidi character in a text field: ${JSON.stringify(text.slice(0, 80))}`;
  }
  return undefined;
}

const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const isNullablePercent = (value: unknown): boolean =>
  value === null || (typeof value === 'number' && value >= 0 && value <= 100);

function checkPrimary(data: {
  score: number | null;
  searches: number;
  commentsCount: number;
  commentList: { author: string; text: string; date: string; callerType: string }[];
}): string | undefined {
  if (data.score !== null && !(Number.isInteger(data.score) && data.score >= 1 && data.score <= 9))
    return `score ${data.score}`;
  if (!isCount(data.searches) || !isCount(data.commentsCount)) return 'counts';
  if (!data.commentList.every((comment) => DATE.test(comment.date))) return 'comment date';
  return checkTexts(data.commentList.flatMap((comment) => [comment.author, comment.text, comment.callerType]));
}

describe('hardening: parser fuzzing', () => {
  it('tellows API: mutated fixtures and random text end as a typed result, never a throw', () => {
    const fixtures = readFixtures('tellows', (file) => file.startsWith('api-'));
    fc.assert(
      fc.property(mutatedDocument(fixtures), (body) => {
        const result = parseTellowsApi(body).outcome;
        expect(['ok', 'not_found', 'error']).toContain(result.status);
        if (result.status === 'ok') expect(checkPrimary(result.data)).toBeUndefined();
      }),
      { numRuns: RUNS_PER_PARSER },
    );
  }, 60_000);

  it('tellows page: mutated fixtures and random text end as a typed result, never a throw', () => {
    const fixtures = readFixtures('tellows', (file) => file.startsWith('page-'));
    fc.assert(
      fc.property(mutatedDocument(fixtures), (html) => {
        const result = parseTellowsPage(html).outcome;
        expect(['ok', 'not_found', 'blocked', 'error']).toContain(result.status);
        if (result.status === 'ok') expect(checkPrimary(result.data)).toBeUndefined();
      }),
      { numRuns: RUNS_PER_PARSER },
    );
  }, 60_000);

  it('numeroinconnu page: mutated fixtures and random text end as a typed result, never a throw', () => {
    const fixtures = readFixtures('numeroinconnu', (file) => file.endsWith('.html'));
    fc.assert(
      fc.property(mutatedDocument(fixtures), (html) => {
        const result = parseNumeroinconnuPage(html).outcome;
        expect(['ok', 'not_found', 'blocked', 'error']).toContain(result.status);
        if (result.status !== 'ok') return;
        const { data } = result;
        expect(isNullablePercent(data.dangerPercent), `dangerPercent ${data.dangerPercent}`).toBe(true);
        expect(data.visits === null || isCount(data.visits)).toBe(true);
        expect(isCount(data.commentsCount)).toBe(true);
        expect(data.lastCommentDate).toMatch(DATE);
        expect(data.commentList.every((comment) => DATE.test(comment.date))).toBe(true);
        expect(
          checkTexts([data.topCategory, ...data.commentList.flatMap((comment) => [comment.text, comment.category])]),
        ).toBeUndefined();
      }),
      { numRuns: RUNS_PER_PARSER },
    );
  }, 60_000);

  it('telguarder page: mutated fixtures and random text end as a typed result, never a throw', () => {
    const fixtures = readFixtures('telguarder', (file) => file.endsWith('.html'));
    fc.assert(
      fc.property(mutatedDocument(fixtures), (html) => {
        const result = parseTelguarderPage(html).outcome;
        expect(['ok', 'not_found', 'blocked', 'error']).toContain(result.status);
        if (result.status !== 'ok') return;
        const { data } = result;
        expect(isNullablePercent(data.spamScore), `spamScore ${data.spamScore}`).toBe(true);
        expect(data.reportsCount === null || isCount(data.reportsCount)).toBe(true);
        expect(data.commentList.every((comment) => DATE.test(comment.date))).toBe(true);
        expect(
          checkTexts([data.callerType, ...data.commentList.flatMap((comment) => [comment.text, comment.callerType])]),
        ).toBeUndefined();
      }),
      { numRuns: RUNS_PER_PARSER },
    );
  }, 60_000);
});

describe('hardening: parser cost on hostile pages', () => {
  // Half the body cap of repeated, unclosed markup. A quadratic scan of it takes minutes and
  // blocks the event loop for every request; a linear one takes well under a second. The bound
  // is loose on purpose (shared, noisy machines): it separates the two, it is not a benchmark.
  const HOSTILE_BYTES = 512 * 1024;
  const BOUND_MS = 5_000;
  const UNITS = [
    '<li class="x">',
    '<span',
    '<!--',
    '<script',
    '<table><tr><td>',
    '<tr>',
    '<a href="#complaint_list">',
    '<div class="comment-body">',
    '<ol id="singlecomments"><li>',
    '<div class="comment">',
    '{"a":',
    '"',
    '<b><i>',
    '<p><div>',
    '</x>',
    '<div class="stats">',
    '<table class="table-rating"><tr><th>x <span class="small">(1)</span>',
    "<h5>Types d'appel</h5>",
    '<strong>Recherches:</strong>',
    '<div class="comment-item"><strong class="rank r1">x</strong><span class="date">01.01.2024</span>',
    '<th>Visites</th>',
  ];
  const parsers: [string, string, (body: string) => unknown][] = [
    ['tellows API', 'tellows/fixtures/api-normal.json', parseTellowsApi],
    ['tellows page', 'tellows/fixtures/page-normal.html', parseTellowsPage],
    ['numeroinconnu page', 'numeroinconnu/fixtures/normal.html', parseNumeroinconnuPage],
    ['telguarder page', 'telguarder/fixtures/normal.html', parseTelguarderPage],
  ];
  for (const [name, fixture, parse] of parsers) {
    it(`${name}: 512 KiB of any repeated unclosed markup parses in far less than ${BOUND_MS / 1000} s`, () => {
      const text = readFileSync(fileURLToPath(new URL(`../../src/sources/${fixture}`, import.meta.url)), 'utf8');
      const half = Math.floor(text.length / 2);
      for (const unit of UNITS) {
        const body = `${text.slice(0, half)}${unit.repeat(Math.floor(HOSTILE_BYTES / unit.length))}${text.slice(half)}`;
        const startedAt = performance.now();
        parse(body);
        expect(performance.now() - startedAt, `${name} with ${unit} repeated`).toBeLessThan(BOUND_MS);
      }
    }, 120_000);
  }
});
