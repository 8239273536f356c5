// The connection description as ioredis' options: what each connection of the service is given
// (the shared client, the CLI's own, and their duplicates, which copy these options).
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  describeRedisConnection,
  reconnectOnReadOnly,
  redisOptionsOf,
  refusalOf,
  type RedisConnection,
} from './redis-connection.js';

const SENTINEL: RedisConnection = {
  sentinels: [
    { host: '10.0.0.1', port: 26379 },
    { host: '::1', port: 26380 },
  ],
  sentinelName: 'phonerep',
  sentinelPassword: 'sentinel-pass',
  username: 'phonerep',
  password: 'data-pass',
};

describe('redisOptionsOf', () => {
  it('gives a URL alone as before, with only the READONLY reconnect added to the base', () => {
    const { url, options } = redisOptionsOf('redis://cache.lan:6379', { keyPrefix: 'p:' });
    expect(url).toBe('redis://cache.lan:6379');
    expect(options).toEqual({ keyPrefix: 'p:', reconnectOnError: reconnectOnReadOnly });
  });

  it('adds the ACL user, the password and the TLS authority to a URL', () => {
    const { url, options } = redisOptionsOf({
      url: 'rediss://cache.lan:6380',
      username: 'phonerep',
      password: 'pw',
      tls: { ca: 'PEM' },
    });
    expect(url).toBe('rediss://cache.lan:6380');
    expect(options).toMatchObject({ username: 'phonerep', password: 'pw', tls: { ca: 'PEM' } });
    expect(options.sentinels).toBeUndefined();
  });

  it('asks the sentinels for the primary, follows its failovers and logs in to both', () => {
    const { url, options } = redisOptionsOf(SENTINEL, { connectTimeout: 500 });
    expect(url).toBeUndefined();
    expect(options).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'phonerep',
      role: 'master',
      failoverDetector: true,
      sentinelPassword: 'sentinel-pass',
      username: 'phonerep',
      password: 'data-pass',
      connectTimeout: 500,
    });
    expect(options.enableTLSForSentinelMode).toBeUndefined();
  });

  it('speaks TLS to the sentinels and to Redis alike with REDIS_TLS_CA', () => {
    const { options } = redisOptionsOf({ ...SENTINEL, tls: { ca: 'PEM' } });
    expect(options).toMatchObject({ enableTLSForSentinelMode: true, sentinelTLS: { ca: 'PEM' }, tls: { ca: 'PEM' } });
  });

  it('is what a duplicate() connection (a stream reader, a subscriber) carries too', () => {
    const { options } = redisOptionsOf({ ...SENTINEL, tls: { ca: 'PEM' } }, { lazyConnect: true });
    const shared = new Redis(options);
    const reader = shared.duplicate({ connectionName: 'reader', lazyConnect: true });
    try {
      expect(reader.options).toMatchObject({
        sentinels: SENTINEL.sentinels,
        name: 'phonerep',
        role: 'master',
        failoverDetector: true,
        sentinelPassword: 'sentinel-pass',
        username: 'phonerep',
        password: 'data-pass',
        tls: { ca: 'PEM' },
        enableTLSForSentinelMode: true,
      });
      expect(reader.options.reconnectOnError).toBe(reconnectOnReadOnly);
    } finally {
      reader.disconnect();
      shared.disconnect();
    }
  });
});

describe('reconnectOnReadOnly', () => {
  it('reconnects and resends on READONLY only', () => {
    expect(reconnectOnReadOnly(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(reconnectOnReadOnly(new Error('ERR wrong number of arguments'))).toBe(false);
    expect(reconnectOnReadOnly(new Error('WRONGTYPE Operation against a key'))).toBe(false);
  });
});

describe('describeRedisConnection', () => {
  it('names Redis by host and port or by its sentinels, never a credential', () => {
    expect(describeRedisConnection('redis://user:secret@cache.lan:6380/3')).toBe('cache.lan:6380');
    expect(describeRedisConnection({ url: 'rediss://:secret@cache.lan', tls: {} })).toBe('cache.lan:6379 (TLS)');
    const sentinels = describeRedisConnection({ ...SENTINEL, tls: {} });
    expect(sentinels).toBe('primary phonerep through sentinels 10.0.0.1:26379,[::1]:26380 (TLS)');
    expect(sentinels).not.toMatch(/pass/);
  });
});

describe('refusalOf', () => {
  it('tells a refused login or an untrusted certificate from a Redis that is away', () => {
    expect(refusalOf(new Error('WRONGPASS invalid username-password pair or user is disabled.'))).toBe('credentials');
    expect(refusalOf(new Error('NOAUTH Authentication required.'))).toBe('credentials');
    expect(
      refusalOf(new Error('All sentinels are unreachable. Retrying from scratch after 10ms. Last error: WRONGPASS x')),
    ).toBe('credentials');
    const untrusted = Object.assign(new Error('unable to get local issuer certificate'), {
      code: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    });
    expect(refusalOf(untrusted)).toBe('certificate');
    expect(refusalOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6410'), { code: 'ECONNREFUSED' }))).toBe(
      undefined,
    );
    expect(refusalOf(new Error('All sentinels are unreachable. Retrying from scratch after 10ms.'))).toBe(undefined);
  });
});
