// The Redis variables (issue 50): REDIS_URL alone as before, or REDIS_SENTINELS with
// REDIS_SENTINEL_NAME, with REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD and
// REDIS_TLS_CA. Every combination that cannot work stops the start naming its variables, and no
// message shows a password.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, listsLocationOf, loadConfig, parseHostPorts, redisConnectionOf } from './config.js';

const SECRET = { HASH_SECRET: 'hash-secret-0123456789' };
const SENTINELS = {
  ...SECRET,
  REDIS_SENTINELS: 'sentinel-a:26379,10.0.0.2:26380,[::1]:26381',
  REDIS_SENTINEL_NAME: 'phonerep',
};
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

function caFile(text = PEM): string {
  const path = join(mkdtempSync(join(tmpdir(), 'redis-ca-')), 'ca.pem');
  writeFileSync(path, text);
  return path;
}

describe('REDIS_URL alone', () => {
  it('is one Redis by URL, as before, with no credentials or TLS added', () => {
    const config = loadConfig({ ...SECRET, REDIS_URL: 'redis://:pw@cache.lan:6380/2' });
    expect(redisConnectionOf(config)).toEqual({ url: 'redis://:pw@cache.lan:6380/2' });
    expect(listsLocationOf(config).redis).toEqual({ url: 'redis://:pw@cache.lan:6380/2' });
  });

  it('is no Redis when neither REDIS_URL nor REDIS_SENTINELS is set', () => {
    const config = loadConfig({});
    expect(redisConnectionOf(config)).toBeUndefined();
    expect('redis' in listsLocationOf(config)).toBe(false);
  });

  it('takes REDIS_USERNAME and REDIS_PASSWORD beside a URL without credentials', () => {
    const config = loadConfig({
      ...SECRET,
      REDIS_URL: 'redis://cache.lan:6379',
      REDIS_USERNAME: 'phonerep',
      REDIS_PASSWORD: 'acl-pass',
    });
    expect(redisConnectionOf(config)).toEqual({
      url: 'redis://cache.lan:6379',
      username: 'phonerep',
      password: 'acl-pass',
    });
  });

  it('turns TLS on with rediss://, with REDIS_TLS_CA as the authority when set', () => {
    const bare = loadConfig({ ...SECRET, REDIS_URL: 'rediss://cache.lan:6380' });
    expect(redisConnectionOf(bare)).toEqual({ url: 'rediss://cache.lan:6380', tls: {} });
    const withCa = loadConfig({ ...SECRET, REDIS_URL: 'rediss://cache.lan:6380', REDIS_TLS_CA: caFile() });
    expect(redisConnectionOf(withCa)).toEqual({ url: 'rediss://cache.lan:6380', tls: { ca: PEM } });
  });
});

describe('REDIS_SENTINELS', () => {
  it('is the sentinels and the primary name, HASH_SECRET required as with REDIS_URL', () => {
    const config = loadConfig({ ...SENTINELS, REDIS_SENTINEL_PASSWORD: 'sentinel-pass', REDIS_PASSWORD: 'data-pass' });
    expect(redisConnectionOf(config)).toEqual({
      sentinels: [
        { host: 'sentinel-a', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      sentinelName: 'phonerep',
      sentinelPassword: 'sentinel-pass',
      password: 'data-pass',
    });
    const { HASH_SECRET: _omitted, ...withoutSecret } = SENTINELS;
    expect(configError(withoutSecret)).toMatch(/HASH_SECRET must be set .* when REDIS_SENTINELS is set/);
  });

  it('turns TLS on for the sentinels and Redis with REDIS_TLS_CA', () => {
    const config = loadConfig({ ...SENTINELS, REDIS_TLS_CA: caFile() });
    expect(redisConnectionOf(config)?.tls).toEqual({ ca: PEM });
  });

  it('needs REDIS_SENTINEL_NAME', () => {
    const { REDIS_SENTINEL_NAME: _omitted, ...env } = SENTINELS;
    expect(configError(env)).toContain('REDIS_SENTINELS is set but REDIS_SENTINEL_NAME is not');
  });

  it('is refused beside REDIS_URL: one way to Redis, not a precedence', () => {
    expect(configError({ ...SENTINELS, REDIS_URL: 'redis://cache.lan:6379' })).toContain(
      'REDIS_URL and REDIS_SENTINELS are both set: give one',
    );
  });

  it.each([
    ['sentinel-a', 'sentinel-a'],
    ['sentinel-a:0', 'sentinel-a:0'],
    ['sentinel-a:65536', 'sentinel-a:65536'],
    ['sentinel-a:26379,:26379', ':26379'],
    ['::1:26379', '::1:26379'],
    ['[not-v6]:26379', '[not-v6]:26379'],
    ['host name:26379', 'host name:26379'],
    ['redis://sentinel-a:26379', 'redis://sentinel-a:26379'],
  ])('names a malformed item of %j', (setting, bad) => {
    const message = configError({ ...SENTINELS, REDIS_SENTINELS: setting });
    expect(message).toContain('REDIS_SENTINELS has items that are not host:port');
    expect(message).toContain(JSON.stringify(bad));
  });

  it('names an empty list', () => {
    expect(configError({ ...SENTINELS, REDIS_SENTINELS: ' , ' })).toContain('REDIS_SENTINELS names no sentinel');
  });

  it('parses host:port items, trimming spaces and skipping empty ones', () => {
    expect(parseHostPorts(' a:1 ,, b.example.org:26379 ')).toEqual({
      hosts: [
        { host: 'a', port: 1 },
        { host: 'b.example.org', port: 26379 },
      ],
      invalid: [],
    });
  });
});

describe('the combinations that stop the start', () => {
  it.each([
    [{ REDIS_SENTINEL_NAME: 'phonerep' }, 'REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not'],
    [{ REDIS_SENTINEL_PASSWORD: 'pw' }, 'REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not'],
    [{ REDIS_PASSWORD: 'pw' }, 'REDIS_PASSWORD is set but neither REDIS_URL nor REDIS_SENTINELS is'],
    [
      { REDIS_USERNAME: 'u', REDIS_PASSWORD: 'pw' },
      'REDIS_USERNAME is set but neither REDIS_URL nor REDIS_SENTINELS is',
    ],
    [{ REDIS_TLS_CA: '/etc/ssl/ca.pem' }, 'REDIS_TLS_CA is set but neither REDIS_URL nor REDIS_SENTINELS is'],
    [
      { ...SECRET, REDIS_URL: 'redis://cache.lan', REDIS_USERNAME: 'u' },
      'REDIS_USERNAME is set but REDIS_PASSWORD is not',
    ],
    [
      { ...SECRET, REDIS_URL: 'redis://:inurl@cache.lan', REDIS_PASSWORD: 'pw' },
      'REDIS_URL holds a password and REDIS_PASSWORD is set too',
    ],
    [
      { ...SECRET, REDIS_URL: 'redis://user:inurl@cache.lan', REDIS_USERNAME: 'u', REDIS_PASSWORD: 'pw' },
      'REDIS_URL holds a user and REDIS_USERNAME is set too',
    ],
    [
      { ...SECRET, REDIS_URL: 'redis://cache.lan', REDIS_TLS_CA: '/etc/ssl/ca.pem' },
      'REDIS_TLS_CA is set but REDIS_URL is redis:// (no TLS): write rediss:// for TLS',
    ],
    [{ ...SECRET, REDIS_URL: 'redis://:p w@@' }, 'REDIS_URL="redis://***@" is not a URL'],
  ])('%j', (env, expected) => {
    expect(configError(env)).toContain(expected);
  });

  it('names REDIS_TLS_CA when its file cannot be read, or holds no certificate', () => {
    const missing = join(tmpdir(), 'no-such-dir-redis-ca', 'ca.pem');
    expect(configError({ ...SECRET, REDIS_URL: 'rediss://cache.lan', REDIS_TLS_CA: missing })).toContain(
      `REDIS_TLS_CA=${JSON.stringify(missing)} cannot be read (ENOENT)`,
    );
    const notPem = caFile('not a certificate\n');
    expect(configError({ ...SECRET, REDIS_URL: 'rediss://cache.lan', REDIS_TLS_CA: notPem })).toContain(
      `REDIS_TLS_CA=${JSON.stringify(notPem)} holds no PEM certificate`,
    );
  });

  it('never shows REDIS_PASSWORD or REDIS_SENTINEL_PASSWORD, even when they are what is wrong', () => {
    const message = configError({
      REDIS_PASSWORD: 'data-pass-4f1c9',
      REDIS_SENTINEL_PASSWORD: 'sentinel-pass-8e2d7',
      REDIS_URL: 'redis://:url-pass-0b3a6@cache.lan',
    });
    for (const secret of ['data-pass-4f1c9', 'sentinel-pass-8e2d7', 'url-pass-0b3a6'])
      expect(message).not.toContain(secret);
  });
});
