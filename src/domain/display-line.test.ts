import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DISPLAY_LINE_MIN_BYTE_BOUND, displayLineMaxBytes, safeDisplayLine } from './display-line.js';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const clusterCount = (text: string): number => Array.from(graphemes.segment(text)).length;
const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8');

// Everything the line must never hold, as one pattern the tests share (docs/integrations/README.md).
/* eslint-disable no-control-regex -- the absence of control characters is the point */
const FORBIDDEN =
  /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Noncharacter_Code_Point}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2800\uFFFD"'`;|,\\${}[\]<>%]/u;
/* eslint-enable no-control-regex */

describe('the display line sanitiser', () => {
  it('removes % and the other characters a dialplan, an AGI command or a display name could misread', () => {
    expect(safeDisplayLine('100% arnaque %s %n', 30)).toBe('100 arnaque s n');
    expect(safeDisplayLine('a"b\'c`d;e|f,g\\h$i{j}k[l]m<n>o', 40)).toBe('abcdefghijklmno');
  });

  it('removes lone surrogates instead of letting them become U+FFFD, and U+FFFD itself', () => {
    expect(safeDisplayLine('Dé\uD800mar\uDC00chage', 30)).toBe('Démarchage');
    expect(safeDisplayLine('Démar\uFFFDchage', 30)).toBe('Démarchage');
    expect(Buffer.from(safeDisplayLine('x\uDBFFy', 30), 'utf8').toString('utf8')).toBe('xy');
  });

  it('removes noncharacters: U+FFFE, U+FFFF, U+10FFFF, U+FDD0-FDEF and every plane-final pair', () => {
    const noncharacters = ['\uFFFE', '\uFFFF', '\u{10FFFF}', '\u{1FFFE}', '\u{1FFFF}', '\u{EFFFF}'];
    for (let codePoint = 0xfdd0; codePoint <= 0xfdef; codePoint += 1)
      noncharacters.push(String.fromCodePoint(codePoint));
    for (const character of noncharacters)
      expect(safeDisplayLine(`a${character}b`, 30), character.codePointAt(0)?.toString(16)).toBe('ab');
  });

  it('removes invisible fillers and joiners', () => {
    for (const filler of [
      '\u3164',
      '\u115F',
      '\u1160',
      '\u034F',
      '\uFFA0',
      '\u2800',
      '\u200B',
      '\u2060',
      '\uFEFF',
      '\u{E0041}',
      '\u180E',
    ]) {
      expect(safeDisplayLine(`a${filler}b`, 30), filler.codePointAt(0)?.toString(16)).toBe('ab');
    }
    // A line of fillers only is empty, not a blank name.
    expect(safeDisplayLine('\u3164\u3164 \u115F', 30)).toBe('');
  });

  it('folds line breaks, tabs and unusual spaces into one space', () => {
    expect(safeDisplayLine(' a\r\n\tb\u00a0\u2028c\u3000 d ', 30)).toBe('a b c d');
  });

  it('counts what a phone shows: a flag, an accented letter and an emoji sequence are one each, and none is cut', () => {
    expect(safeDisplayLine('🇫🇷🇫🇷🇫🇷', 2)).toBe('🇫🇷🇫🇷');
    expect(safeDisplayLine('e\u0301e\u0301e\u0301', 2)).toBe('éé');
    // A base letter with marks NFC cannot compose stays whole.
    expect(safeDisplayLine('q\u0307\u0323q\u0307\u0323x', 2)).toBe('q\u0323\u0307q\u0323\u0307');
    expect(safeDisplayLine('Démarchage 😀 téléphonique', 12)).toBe('Démarchage 😀');
  });

  it('stops before a cluster that would pass the byte bound', () => {
    expect(displayLineMaxBytes(30)).toBe(DISPLAY_LINE_MIN_BYTE_BOUND);
    expect(displayLineMaxBytes(200)).toBe(200);
    // 30 flags are 240 bytes: the line keeps the 9 that fit in 75 bytes.
    const flags = safeDisplayLine('🇫🇷'.repeat(30), 30);
    expect(flags).toBe('🇫🇷'.repeat(9));
    // A cluster of 60 combining marks (121 bytes) never fits: nothing of it is kept.
    expect(safeDisplayLine(`ab ${'a' + '\u0301\u0300'.repeat(30)}`, 30)).toBe('ab');
  });

  it('never gives a line with a forbidden character, over the limit in clusters or bytes, or with an outer space', () => {
    const hostile = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 120 }),
      fc.string({
        unit: fc.constantFrom('🇫🇷', 'e\u0301', '👨‍👩‍👧', '\u0301', '\uD800', '\uFFFF', '\u3164', '%', ' ', 'é', '語', 'a'),
        maxLength: 80,
      }),
    );
    fc.assert(
      fc.property(hostile, fc.integer({ min: 8, max: 200 }), (text, limit) => {
        const line = safeDisplayLine(text, limit);
        // Plain checks, not expect(): thousands of runs on a loaded machine.
        return (
          clusterCount(line) <= limit &&
          byteLength(line) <= displayLineMaxBytes(limit) &&
          !FORBIDDEN.test(line) &&
          line === line.trim() &&
          // Sanitising twice changes nothing: the line is already what it should be.
          safeDisplayLine(line, limit) === line
        );
      }),
      { numRuns: 600 },
    );
    // A minute: the runs take seconds on a loaded two-core machine.
  }, 60_000);

  it('keeps every cluster that fits: a cut only ever drops the end', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('🇫🇷', 'e\u0301', 'é', 'a', ' ', '語'), maxLength: 60 }),
        fc.integer({ min: 8, max: 40 }),
        (text, limit) => safeDisplayLine(text, 200).startsWith(safeDisplayLine(text, limit)),
      ),
      { numRuns: 300 },
    );
    // A minute: the runs take seconds on a loaded two-core machine.
  }, 60_000);
});
