import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, trustProxySetting } from './config.js';

describe('loadConfig', () => {
  it('gives the documented defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      RATE_LIMIT_MAX: 30,
      RATE_LIMIT_WINDOW_S: 60,
      TRUST_PROXY: 'off',
      DEFAULT_REGION: 'FR',
      TELLOWS_API_URL: 'https://www.tellows.de',
      TELLOWS_WEB_URL: 'https://www.tellows.fr',
      NUMEROINCONNU_URL: 'https://www.numeroinconnu.fr',
      TELGUARDER_URL: 'https://www.telguarder.com',
      SOURCE_TIMEOUT_MS: 3000,
      LOOKUP_TIMEOUT_MS: 4000,
      CACHE_MAX_ENTRIES: 100_000,
      CACHE_TTL_S: 21_600,
      CACHE_NOT_FOUND_TTL_S: 3600,
      CACHE_STALE_S: 604_800,
      WORKERS: '1',
    });
    expect(config.TELLOWS_API_KEY).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('converts numbers and booleans and treats empty strings as unset', () => {
    const config = loadConfig({ PORT: '8080', RATE_LIMIT_MAX: '0', METRICS_ENABLED: 'false', TELLOWS_API_KEY: '' });
    expect(config.PORT).toBe(8080);
    expect(config.RATE_LIMIT_MAX).toBe(0);
    expect(config.METRICS_ENABLED).toBe(false);
    expect(config.TELLOWS_API_KEY).toBeUndefined();
  });

  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('fails fast naming every bad variable and what it takes', () => {
    expect(() => loadConfig({ PORT: 'eighty', RATE_LIMIT_MAX: '-1', TELGUARDER_URL: 'ftp://x' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', RATE_LIMIT_MAX: '-1', TELGUARDER_URL: 'ftp://x' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('PORT="eighty" is not valid: expected a whole number');
      expect(message).toContain('RATE_LIMIT_MAX');
      expect(message).toContain('TELGUARDER_URL');
    }
  });

  it('refuses TRUST_PROXY=true, which would let anyone forge X-Forwarded-For', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
  });

  it('requires a shared HASH_SECRET when Redis is shared between instances', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/HASH_SECRET/);
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', HASH_SECRET: 'x'.repeat(16) }).REDIS_URL).toBe('redis://127.0.0.1:6379');
  });
});

describe('trustProxySetting', () => {
  it('trusts exactly the nearest N hops for a hop count', () => {
    const trust = trustProxySetting({ TRUST_PROXY: '2' });
    expect(typeof trust).toBe('function');
    if (typeof trust !== 'function') return;
    expect([0, 1, 2].map((hop) => trust('10.0.0.1', hop))).toEqual([true, true, false]);
  });

  it.each([
    ['off', false],
    ['0', false],
    ['10.0.0.1, 10.0.0.0/8', ['10.0.0.1', '10.0.0.0/8']],
    ['loopback', ['loopback']],
  ])('reads %s', (value, expected) => {
    expect(trustProxySetting({ TRUST_PROXY: value })).toEqual(expected);
  });
});
