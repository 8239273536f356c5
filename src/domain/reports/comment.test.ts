import { describe, expect, it } from 'vitest';
import { cleanComment, COMMENT_MAX_LENGTH } from './comment.js';

describe('a reporter comment cleaned', () => {
  it('keeps plain text as it is', () => {
    expect(cleanComment('Arnaque au CPF')).toBe('Arnaque au CPF');
  });

  it('removes quotes and the other characters refused on /cid', () => {
    expect(cleanComment(`il a dit "rappelez" ; c'est {faux} <b>%s</b> $x`)).toBe('il a dit rappelez cest faux bs/b x');
  });

  it('turns newlines and tabs into single spaces', () => {
    expect(cleanComment('ligne 1\nligne 2\r\n\tligne 3')).toBe('ligne 1 ligne 2 ligne 3');
  });

  it('removes control and invisible characters', () => {
    expect(cleanComment('a\u0000b\u0007c\u200Bd\u202Ee\uFFFDf\uD800g')).toBe('abcdefg');
  });

  it('is undefined when nothing is left, or when it is no string', () => {
    expect(cleanComment('  "" \n ')).toBeUndefined();
    expect(cleanComment('')).toBeUndefined();
    expect(cleanComment(undefined)).toBeUndefined();
    expect(cleanComment(42)).toBeUndefined();
  });

  it(`is cut to ${COMMENT_MAX_LENGTH} code points, an emoji at the cut kept whole or left out`, () => {
    const kept = cleanComment(`${'a'.repeat(199)}😀tail`);
    expect(kept).toBe(`${'a'.repeat(199)}😀`);
    expect([...(kept ?? '')]).toHaveLength(200);
    const left = cleanComment(`${'a'.repeat(200)}😀`);
    expect(left).toBe('a'.repeat(200));
    // 150 emoji are 300 UTF-16 units but 150 code points: all kept.
    expect(cleanComment('😀'.repeat(150))).toBe('😀'.repeat(150));
    const many = cleanComment('😀'.repeat(250)) ?? '';
    expect([...many]).toHaveLength(200);
    expect(many).not.toMatch(/\p{Cs}/u);
  });
});
