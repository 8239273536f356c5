import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkNewToken,
  checkTokenExpiry,
  checkTokenLabel,
  hashTokenSecret,
  inForce,
  isTokenId,
  lastUsedAtToWrite,
  makeToken,
  newTokenId,
  newTokenSecret,
  publicToken,
  readStoredToken,
  usedAtHour,
  type RandomBytes,
} from './tokens.js';

/** Bytes 0, 1, 2, … on each call: a secret and an id known in advance. */
const counting: RandomBytes = (size) => Uint8Array.from({ length: size }, (_, at) => at);
const NOW = Date.parse('2026-11-28T13:47:12.345Z');

describe('reporter tokens', () => {
  it('makes a secret of prt_ and 32 bytes in base64url, and an id of tok_ and 10 lowercase hex characters', () => {
    expect(newTokenSecret(counting)).toBe(`prt_${Buffer.from(counting(32)).toString('base64url')}`);
    expect(newTokenSecret(counting)).toMatch(/^prt_[A-Za-z0-9_-]{43}$/);
    expect(newTokenId(counting)).toBe('tok_0001020304');
    expect(isTokenId('tok_0001020304')).toBe(true);
    expect(isTokenId('tok_ABCDEF0123')).toBe(false);
    expect(isTokenId('tok_00010203')).toBe(false);
  });

  it('keeps only the SHA-256 hex of the secret, never the secret', () => {
    const { secret, token } = makeToken({ label: 'Kitchen phone' }, NOW, counting);
    expect(token.hash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(hashTokenSecret(secret)).toBe(token.hash);
    expect(JSON.stringify(token)).not.toContain(secret);
    expect(token).toEqual({
      id: 'tok_0001020304',
      label: 'Kitchen phone',
      createdAt: '2026-11-28T13:47:12.345Z',
      hash: token.hash,
    });
    expect(publicToken(token)).not.toHaveProperty('hash');
  });

  it('is in force until revoked or until its expiry, refused from the expiry on', () => {
    const base = { id: 'tok_0001020304', label: 'x', createdAt: '2026-01-01T00:00:00.000Z' };
    expect(inForce(base, NOW)).toBe(true);
    expect(inForce({ ...base, revokedAt: '2026-11-28T13:00:00.000Z' }, NOW)).toBe(false);
    const expiresAt = '2026-11-28T14:00:00.000Z';
    expect(inForce({ ...base, expiresAt }, Date.parse(expiresAt) - 1)).toBe(true);
    expect(inForce({ ...base, expiresAt }, Date.parse(expiresAt))).toBe(false);
  });

  it('notes the use to the hour, at most one write an hour, never moved back', () => {
    expect(usedAtHour(NOW)).toBe('2026-11-28T13:00:00.000Z');
    const base = { id: 'tok_0001020304', label: 'x', createdAt: '2026-01-01T00:00:00.000Z' };
    expect(lastUsedAtToWrite(base, NOW)).toBe('2026-11-28T13:00:00.000Z');
    const used = { ...base, lastUsedAt: '2026-11-28T13:00:00.000Z' };
    expect(lastUsedAtToWrite(used, NOW + 12 * 60_000)).toBeUndefined();
    expect(lastUsedAtToWrite(used, Date.parse('2026-11-28T14:00:00.000Z'))).toBe('2026-11-28T14:00:00.000Z');
    expect(lastUsedAtToWrite(used, Date.parse('2026-11-28T12:59:59.999Z'))).toBeUndefined();
  });

  it('takes a label of 1 to 60 characters without control characters, trimmed', () => {
    expect(checkTokenLabel('  Téléphone de Léa  ')).toEqual({ ok: true, value: 'Téléphone de Léa' });
    expect(checkTokenLabel('é'.repeat(60))).toEqual({ ok: true, value: 'é'.repeat(60) });
    expect(checkTokenLabel('a'.repeat(61))).toMatchObject({ ok: false, problem: { field: 'label' } });
    expect(checkTokenLabel('   ')).toMatchObject({ ok: false, problem: { field: 'label' } });
    expect(checkTokenLabel(undefined)).toMatchObject({ ok: false, problem: { field: 'label' } });
    for (const control of ['\n', '\t', '\u0000', '\u007f', '\u0085', '\u2028'])
      expect(checkTokenLabel(`a${control}b`)).toMatchObject({
        ok: false,
        problem: { field: 'label', reason: 'a label may not hold control characters' },
      });
  });

  it('takes an expiry that is an ISO date or time in the future, and refuses any other', () => {
    expect(checkTokenExpiry(undefined, NOW)).toEqual({ ok: true, value: undefined });
    expect(checkTokenExpiry('2027-01-01', NOW)).toEqual({ ok: true, value: '2027-01-01T00:00:00.000Z' });
    expect(checkTokenExpiry('2027-01-01T08:30:00+01:00', NOW)).toEqual({
      ok: true,
      value: '2027-01-01T07:30:00.000Z',
    });
    for (const bad of ['2026-11-28T13:00:00Z', '2027-02-30', 'tomorrow', '', 20270101])
      expect(checkTokenExpiry(bad, NOW)).toMatchObject({ ok: false, problem: { field: 'expiresAt' } });
    expect(checkNewToken({ label: 'x', expiresAt: '2001-01-01' }, NOW)).toMatchObject({
      ok: false,
      problem: { field: 'expiresAt', reason: '2001-01-01 is in the past' },
    });
    expect(checkNewToken({ label: ' PBX ', expiresAt: '2027-01-01' }, NOW)).toEqual({
      ok: true,
      value: { label: 'PBX', expiresAt: '2027-01-01T00:00:00.000Z' },
    });
  });

  it('reads back a stored token, and refuses anything that is not one', () => {
    const { token } = makeToken({ label: 'PBX', expiresAt: '2027-01-01T00:00:00.000Z' }, NOW, counting);
    expect(readStoredToken(JSON.parse(JSON.stringify(token)))).toEqual(token);
    expect(readStoredToken({ ...token, hash: 'abc' })).toBeUndefined();
    expect(readStoredToken({ ...token, id: 'tok_zz' })).toBeUndefined();
    expect(readStoredToken({ ...token, revokedAt: 'yesterday' })).toBeUndefined();
    expect(readStoredToken(null)).toBeUndefined();
  });
});
