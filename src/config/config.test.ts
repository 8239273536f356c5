import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_DEFAULTS,
  ConfigError,
  ConfigSchema,
  configVariables,
  fastifyTrustProxy,
  loadConfig,
  parseAddressRanges,
  parseTrustProxy,
  parseWorkers,
  SECRET_MASK,
  SECRET_VARIABLES,
  settingsForDisplay,
} from './config.js';

const PARSED = new Set(['WORKERS', 'TRUST_PROXY']);

describe('the schema', () => {
  it('describes every variable, and every default is a value its own schema accepts', () => {
    const properties = Object.entries(ConfigSchema.properties);
    expect(properties.length).toBeGreaterThan(0);
    for (const [name, schema] of properties) {
      expect(schema.description, `${name} has no description`).toMatch(/\S{3,}/);
      if (schema.default !== undefined)
        expect(
          Value.Check(schema, schema.default),
          `${name}'s default ${String(schema.default)} fails its own schema`,
        ).toBe(true);
    }
  });

  it('derives CONFIG_DEFAULTS from exactly the variables that carry a default', () => {
    const withDefault = Object.entries(ConfigSchema.properties).filter(([, schema]) => schema.default !== undefined);
    expect(Object.keys(CONFIG_DEFAULTS).sort()).toEqual(withDefault.map(([name]) => name).sort());
    expect(CONFIG_DEFAULTS.PORT).toBe(3000);
    expect('REDIS_URL' in CONFIG_DEFAULTS).toBe(false);
  });

  it('lists each variable once for the docs, with its default as text or none', () => {
    const variables = configVariables();
    expect(variables.map((v) => v.name)).toEqual(Object.keys(ConfigSchema.properties));
    expect(variables.find((v) => v.name === 'CACHE_TTL_S')).toMatchObject({
      defaultValue: '21600',
      accepts: 'a whole number ≥ 1',
    });
    expect(variables.find((v) => v.name === 'HASH_SECRET')).toMatchObject({
      defaultValue: undefined,
      accepts: 'a string of 16+ characters',
    });
  });
});

describe('loadConfig', () => {
  it('gives every variable its schema default on an empty environment, and leaves the others unset', () => {
    const config = loadConfig({}) as unknown as Record<string, unknown>;
    for (const [name, value] of Object.entries(CONFIG_DEFAULTS)) {
      if (PARSED.has(name)) continue;
      expect(config[name], name).toEqual(value);
    }
    for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
      if (schema.default === undefined) expect(config[name], name).toBeUndefined();
    }
    expect(config.workers).toBe(1);
    expect(config.trustProxy).toBe(false);
    expect(config.CACHE_MAX_MB).toBe(256);
    expect(config.CACHE_MAX_ENTRIES).toBeUndefined();
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

  it('exposes WORKERS and TRUST_PROXY only parsed, never as raw text', () => {
    const config = loadConfig({ WORKERS: '3', TRUST_PROXY: '10.0.0.1, 10.0.0.0/8' }) as unknown as Record<
      string,
      unknown
    >;
    expect(config.workers).toBe(3);
    expect(config.trustProxy).toEqual(['10.0.0.1', '10.0.0.0/8']);
    expect('WORKERS' in config).toBe(false);
    expect('TRUST_PROXY' in config).toBe(false);
  });

  it('fails fast naming every bad variable and what it takes', () => {
    let thrown: unknown;
    try {
      loadConfig({ PORT: 'eighty', RATE_LIMIT_MAX: '-1', TELGUARDER_URL: 'ftp://x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as Error).message;
    expect(message).toContain('PORT="eighty" is not valid: expected a whole number');
    expect(message).toContain('RATE_LIMIT_MAX');
    expect(message).toContain('TELGUARDER_URL');
  });

  it('refuses a bad WORKERS value rather than guessing a count', () => {
    expect(() => loadConfig({ WORKERS: 'many' })).toThrow(/WORKERS="many" is not valid/);
    expect(() => loadConfig({ WORKERS: '0' })).toThrow(/WORKERS/);
  });

  it('refuses TRUST_PROXY=true, which would let anyone forge X-Forwarded-For', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
  });

  it('requires a shared HASH_SECRET when Redis is shared between instances', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/HASH_SECRET/);
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', HASH_SECRET: 'x'.repeat(16) }).REDIS_URL).toBe(
      'redis://127.0.0.1:6379',
    );
  });
});

describe('parseWorkers', () => {
  it('reads a count as itself and `auto` as one per core, at least one', () => {
    expect(parseWorkers('1', 8)).toBe(1);
    expect(parseWorkers('3', 8)).toBe(3);
    expect(parseWorkers('auto', 8)).toBe(8);
    expect(parseWorkers('auto', 0)).toBe(1);
  });
});

describe('parseTrustProxy', () => {
  it.each([
    ['off', false],
    ['false', false],
    ['0', false],
    ['2', 2],
    ['10.0.0.1, 10.0.0.0/8', ['10.0.0.1', '10.0.0.0/8']],
    ['loopback', ['loopback']],
  ])('reads %s as %j', (value, expected) => {
    expect(parseTrustProxy(value)).toEqual(expected);
  });
});

describe('fastifyTrustProxy', () => {
  it('trusts exactly the nearest N hops for a hop count', () => {
    const trust = fastifyTrustProxy(2);
    expect(typeof trust).toBe('function');
    if (typeof trust !== 'function') return;
    expect([0, 1, 2].map((hop) => trust('10.0.0.1', hop))).toEqual([true, true, false]);
  });

  it('passes off and address lists through unchanged', () => {
    expect(fastifyTrustProxy(false)).toBe(false);
    expect(fastifyTrustProxy(['loopback'])).toEqual(['loopback']);
  });
});

describe('the phone-system variables', () => {
  it('defaults the verdict rule and the caller-ID length', () => {
    const config = loadConfig({});
    expect([
      config.VERDICT_BLOCK_SCORE,
      config.VERDICT_WARN_SCORE,
      config.VERDICT_NPV,
      config.VERDICT_WITHHELD,
      config.CID_MAX_LENGTH,
    ]).toEqual([7, 5, 'warn', 'allow', 30]);
    expect(config.RATE_LIMIT_EXEMPT).toBeUndefined();
  });

  it('refuses a verdict word it does not know, and a warn score above the block score', () => {
    expect(() => loadConfig({ VERDICT_NPV: 'reject' })).toThrow(
      /VERDICT_NPV="reject" is not valid: expected one of block, warn, allow, unknown/,
    );
    expect(() => loadConfig({ VERDICT_WARN_SCORE: '8' })).toThrow(
      /VERDICT_WARN_SCORE must not exceed VERDICT_BLOCK_SCORE/,
    );
    expect(() => loadConfig({ CID_MAX_LENGTH: '3' })).toThrow(/CID_MAX_LENGTH=3 is not valid/);
  });

  it.each(['::/0', '::/64', '::ffff:0:0/96', '0:0:0:0:0:ffff::/95'])(
    'refuses the IPv6 range %s, which would exempt every IPv4 client too (Node BlockList)',
    (item) => {
      expect(() => loadConfig({ RATE_LIMIT_EXEMPT: `192.0.2.1, ${item}` })).toThrow(
        /RATE_LIMIT_EXEMPT has IPv6 ranges that hold every IPv4-mapped address/,
      );
    },
  );

  it('accepts an IPv6 range of part of the IPv4-mapped space (::ffff:10.0.0.0/104 is 10.0.0.0/8)', () => {
    expect(loadConfig({ RATE_LIMIT_EXEMPT: '::ffff:10.0.0.0/104, 2001:db8::/32' }).RATE_LIMIT_EXEMPT).toBe(
      '::ffff:10.0.0.0/104, 2001:db8::/32',
    );
  });

  it.each(['10.0.0.0/33', '2001:db8::/129', '10.0.0', '1.2.3.4/8/9', 'fe80::zz', '10.0.0.0/', '::1/-1'])(
    'stops the start on the bad RATE_LIMIT_EXEMPT item %s, naming the variable',
    (item) => {
      expect(() => loadConfig({ RATE_LIMIT_EXEMPT: `192.0.2.1, ${item}` })).toThrow(/RATE_LIMIT_EXEMPT/);
    },
  );

  it.each(['10.0.0.0/33', 'everyone', '::/0', '192.0.2.1, none'])(
    'stops the start on a bad FEED_RECORD_FROM %s, naming the variable',
    (value) => {
      expect(() => loadConfig({ FEED_RECORD_FROM: value })).toThrow(/FEED_RECORD_FROM/);
    },
  );

  it('takes FEED_RECORD_FROM as addresses and ranges, or none', () => {
    expect(loadConfig({ FEED_RECORD_FROM: '192.0.2.10, 2001:db8::/32' }).FEED_RECORD_FROM).toBe(
      '192.0.2.10, 2001:db8::/32',
    );
    expect(loadConfig({ FEED_RECORD_FROM: 'none' }).FEED_RECORD_FROM).toBe('none');
    expect(loadConfig({}).FEED_RECORD_FROM).toBeUndefined();
  });

  it('defaults the reports settings, and takes one reporter as the minimum but not none', () => {
    const config = loadConfig({});
    expect([
      config.REPORT_HALF_LIFE_DAYS,
      config.REPORT_MIN_REPORTERS,
      config.REPORT_RETENTION_DAYS,
      config.REPORT_MAX_PER_TOKEN_DAY,
    ]).toEqual([125, 2, 180, 100]);
    expect(loadConfig({ REPORT_MIN_REPORTERS: '1' }).REPORT_MIN_REPORTERS).toBe(1);
    expect(() => loadConfig({ REPORT_MIN_REPORTERS: '0' })).toThrow(/REPORT_MIN_REPORTERS/);
    expect(() => loadConfig({ REPORT_MAX_PER_TOKEN_DAY: '0' })).toThrow(/REPORT_MAX_PER_TOKEN_DAY/);
    expect(() => loadConfig({ REPORT_RETENTION_DAYS: '0' })).toThrow(/REPORT_RETENTION_DAYS/);
  });

  it('reads addresses and ranges of both families', () => {
    const { list, invalid } = parseAddressRanges(' 192.0.2.10, 10.0.0.0/8 ,2001:db8::/32, ::1');
    expect(invalid).toEqual([]);
    expect(list.check('192.0.2.10', 'ipv4')).toBe(true);
    expect(list.check('192.0.2.11', 'ipv4')).toBe(false);
    expect(list.check('10.255.0.1', 'ipv4')).toBe(true);
    expect(list.check('2001:db8:1::5', 'ipv6')).toBe(true);
    expect(list.check('2001:db9::5', 'ipv6')).toBe(false);
    expect(list.check('::1', 'ipv6')).toBe(true);
    expect(loadConfig({ RATE_LIMIT_EXEMPT: '192.0.2.10, 10.0.0.0/8, 2001:db8::/32' }).RATE_LIMIT_EXEMPT).toBe(
      '192.0.2.10, 10.0.0.0/8, 2001:db8::/32',
    );
  });
});

describe('a bad secret in the start-up error', () => {
  const configError = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    throw new Error('the configuration was accepted');
  };

  it.each([
    ['FEED_PASSWORD', 'hunter2', 'a string of 8 to 200 characters'],
    ['FEED_PASSWORD', `${'p4ssw0rd'.repeat(25)}!`, 'a string of 8 to 200 characters'],
    ['ADMIN_TOKEN', 'a-token-far-too-short', 'a string of 32+ characters'],
    ['HASH_SECRET', 'short-secret', 'a string of 16+ characters'],
  ])('names %s and what it takes, never its value', (name, value, expected) => {
    const message = configError({ [name]: value });
    expect(message).toContain(`${name}=(${value.length} characters, not shown) is not valid`);
    expect(message).toContain(expected);
    expect(message).not.toContain(value);
    // Not a recognisable part of it either.
    expect(message).not.toContain(value.slice(0, 6));
  });

  it('masks the password of a URL setting (REDIS_URL, an upstream mirror) and still shows the rest', () => {
    const message = configError({
      REDIS_URL: 'redis//:s3cr3t-redis-pw@cache.lan:6379',
      TELLOWS_API_URL: 'ftp://partner:s3cr3t-mirror-pw@mirror.lan/',
    });
    expect(message).not.toContain('s3cr3t');
    expect(message).not.toContain('partner');
    expect(message).toContain('REDIS_URL="***@cache.lan:6379" is not valid');
    expect(message).toContain('TELLOWS_API_URL="ftp://***@mirror.lan/" is not valid');
  });

  it('treats every variable named as a secret (password, token, key, secret) as one', () => {
    const secretNames = configVariables()
      .map((variable) => variable.name)
      // A count per token names tokens without holding one.
      .filter((name) => /PASSWORD|TOKEN|SECRET|_KEY$/.test(name) && !/_PER_TOKEN_/.test(name));
    expect(secretNames.length).toBeGreaterThanOrEqual(4);
    for (const name of secretNames) expect(SECRET_VARIABLES.has(name), name).toBe(true);
  });
});

describe('the legal-hours and call-centre variables (issue 48)', () => {
  it('default to Europe/Paris, warn on a call-centre range and block outside the hours', () => {
    const config = loadConfig({});
    expect(config.LEGAL_HOURS_TZ).toBe('Europe/Paris');
    expect(config.VERDICT_CALL_CENTRE).toBe('warn');
    expect(config.VERDICT_OUTSIDE_HOURS).toBe('block');
  });

  it('take another real time zone and the other verdicts', () => {
    const config = loadConfig({
      LEGAL_HOURS_TZ: 'Indian/Reunion',
      VERDICT_CALL_CENTRE: 'allow',
      VERDICT_OUTSIDE_HOURS: 'warn',
    });
    expect(config.LEGAL_HOURS_TZ).toBe('Indian/Reunion');
    expect(config.VERDICT_CALL_CENTRE).toBe('allow');
    expect(config.VERDICT_OUTSIDE_HOURS).toBe('warn');
  });

  it('refuse a time zone the platform does not know, and verdicts outside their sets', () => {
    expect(() => loadConfig({ LEGAL_HOURS_TZ: 'Europe/Atlantis' })).toThrow(
      /LEGAL_HOURS_TZ="Europe\/Atlantis" is not a time zone/,
    );
    expect(() => loadConfig({ VERDICT_CALL_CENTRE: 'unknown' })).toThrow(/VERDICT_CALL_CENTRE/);
    expect(() => loadConfig({ VERDICT_OUTSIDE_HOURS: 'allow' })).toThrow(/VERDICT_OUTSIDE_HOURS/);
  });
});

describe('settingsForDisplay (GET /admin/setup)', () => {
  it('masks every secret variable and the credentials of URLs, and shows the rest as in effect', () => {
    const config = loadConfig({
      HASH_SECRET: 'hash-secret-0123456789',
      ADMIN_TOKEN: 'an-admin-token-of-at-least-32-characters',
      FEED_PASSWORD: 'feed-password',
      TELLOWS_API_KEY: 'tellows-key',
      REDIS_URL: 'redis://user:redis-password@redis.example:6379/0',
      TELLOWS_API_URL: 'https://tellows.example/api?partner=p&apikey=url-key',
      TRUST_PROXY: '10.0.0.0/8, 192.168.0.0/16',
      WORKERS: '2',
    });
    const shown = settingsForDisplay(config);
    const text = JSON.stringify(shown);
    for (const secret of [
      'hash-secret',
      'admin-token',
      'feed-password',
      'tellows-key',
      'redis-password',
      'url-key',
      'user:',
    ])
      expect(text).not.toContain(secret);
    expect(shown).toMatchObject({
      HASH_SECRET: SECRET_MASK,
      ADMIN_TOKEN: SECRET_MASK,
      FEED_PASSWORD: SECRET_MASK,
      TELLOWS_API_KEY: SECRET_MASK,
      REDIS_URL: `redis://${SECRET_MASK}@redis.example:6379/0`,
      TELLOWS_API_URL: `https://tellows.example/api?partner=p&apikey=${SECRET_MASK}`,
      TRUST_PROXY: '10.0.0.0/8,192.168.0.0/16',
      WORKERS: 2,
      PORT: 3000,
      PUBLIC_URL: null,
    });
    expect(Object.keys(shown)).toEqual(configVariables().map((variable) => variable.name));
  });
});
