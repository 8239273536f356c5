import { describe, expect, it } from 'vitest';
import { basicCheck, basicCredentialsOf, bearerTokenOf, secretCheck } from './credentials.js';

const basic = (text: string): string => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('the bearer token of a header', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer   abc  ', 'abc'],
    ['Bearer a b', undefined],
    ['Basic abc', undefined],
    ['Bearer', undefined],
    [undefined, undefined],
  ] as const)('reads %j as %j', (header, token) => {
    expect(bearerTokenOf(header)).toBe(token);
  });
});

describe('HTTP Basic credentials', () => {
  it('gives the credentials as sent and decoded', () => {
    expect(basicCredentialsOf(basic('feed:secret'))).toEqual({
      encoded: Buffer.from('feed:secret').toString('base64'),
      decoded: 'feed:secret',
    });
  });

  it.each(['Bearer abc', 'Basic', 'Basic not*base64', `Basic ${'A'.repeat(1025)}`])('refuses %j', (header) => {
    expect(basicCredentialsOf(header)).toBeUndefined();
  });

  it('checks user and password together', () => {
    const check = basicCheck('feed', 'secret');
    expect(check(basic('feed:secret'))).toBe(true);
    expect(check(basic('feed:Secret'))).toBe(false);
    expect(check(basic('other:secret'))).toBe(false);
    expect(check(undefined)).toBe(false);
  });
});

describe('a secret check', () => {
  it('accepts the secret alone, whatever the length of a wrong one', () => {
    const check = secretCheck('s3cret-token');
    expect(check('s3cret-token')).toBe(true);
    expect(check('s3cret-toke')).toBe(false);
    expect(check('')).toBe(false);
    expect(check('s3cret-token-and-more')).toBe(false);
  });
});
