// The start-up line names what is on and never a secret: a password in REDIS_URL, the feed's
// password and the admin token stay out of both the message and its fields.
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config/config.js';
import { formerListsFileWarning, redisHostOf, startupLineOf } from './startup-line.js';

const FACTS = {
  version: '9.8.7',
  nodeVersion: '24.0.0',
  numberingData: { dataDate: '2026-04-17', origin: 'snapshot', dir: '/opt/phone-reputation/data/arcep' },
} as const;

describe('the start-up line', () => {
  it('says the version, Node, the state directory, the lists, the feed, the admin API, Redis and the data date', () => {
    const config = loadConfig({ STATE_DIR: '/var/lib/phone-reputation' });
    const line = startupLineOf(config, FACTS);
    expect(line.message).toBe(
      'phone-reputation 9.8.7 on Node 24.0.0: state in /var/lib/phone-reputation, lists: file /var/lib/phone-reputation/lists.csv, feed off, ' +
        'admin API off, Redis none, ARCEP data of 2026-04-17 (shipped snapshot /opt/phone-reputation/data/arcep)',
    );
    expect(line.fields).toMatchObject({
      version: '9.8.7',
      node: '24.0.0',
      feed: 'off',
      admin: 'off',
      redis: 'none',
      numberingData: { dataDate: '2026-04-17' },
    });
  });

  it('names Redis by host and port and the feed and admin API by on, with none of their secrets', () => {
    const secrets = {
      redisUser: 'operator-name',
      redisPassword: 'redis-pass-7f3a9',
      feed: 'feed-pass-5c1e8',
      token: 'admin-token-0123456789abcdef0123456789',
    };
    const config = loadConfig({
      STATE_DIR: '/srv/phone',
      REDIS_URL: `redis://${secrets.redisUser}:${secrets.redisPassword}@redis.lan:6380/3`,
      HASH_SECRET: 'hash-secret-0123456789',
      FEED_PASSWORD: secrets.feed,
      ADMIN_TOKEN: secrets.token,
      ADMIN_PORT: '3001',
      LISTS_FILE: '/srv/phone/lists.csv',
    });
    const line = startupLineOf(config, { ...FACTS, adminPort: 3001 });
    expect(line.message).toContain('Redis redis.lan:6380');
    expect(line.message).toContain('feed on');
    expect(line.message).toContain('admin API port 3001 on 127.0.0.1');
    expect(line.message).toContain('lists: Redis, mirrored to /srv/phone/lists.csv');
    const written = JSON.stringify(line);
    for (const secret of [...Object.values(secrets), 'hash-secret-0123456789']) expect(written).not.toContain(secret);
  });

  it('takes the default Redis port, and names a URL that does not parse by that fact alone', () => {
    expect(redisHostOf('rediss://:p%40ss@cache.example:7000')).toBe('cache.example:7000 (TLS)');
    expect(redisHostOf('redis://:secret@[::1]')).toBe('[::1]:6379');
    expect(redisHostOf('redis://:se cret@@')).toBe('unparsable URL');
  });
});

describe('a lists file left at the default before STATE_DIR', () => {
  const config = loadConfig({ STATE_DIR: '/srv/phone' });
  const files = (paths: string[]) => (path: string) => paths.includes(path);

  it('is named, with where to move it, while the default now in use holds none', () => {
    const warning = formerListsFileWarning(config, {
      env: { HOME: '/home/ops' },
      uid: 1000,
      exists: files(['/home/ops/.local/state/phone-reputation/lists.csv']),
    });
    expect(warning).toBe(
      'a lists file is at /home/ops/.local/state/phone-reputation/lists.csv, the default before STATE_DIR, and none at /srv/phone/lists.csv, the default now: ' +
        'its rules do not apply. Move it there (mv /home/ops/.local/state/phone-reputation/lists.csv /srv/phone/lists.csv) or set LISTS_FILE=/home/ops/.local/state/phone-reputation/lists.csv',
    );
    expect(
      formerListsFileWarning(config, {
        env: { XDG_STATE_HOME: '/x' },
        uid: 0,
        exists: files(['/var/lib/phone-reputation/lists.csv']),
      }),
    ).toContain('is at /var/lib/phone-reputation/lists.csv');
  });

  it('says nothing once the default now in use exists, when LISTS_FILE or Redis is set, or when there is no former file', () => {
    const both = files(['/srv/phone/lists.csv', '/home/ops/.local/state/phone-reputation/lists.csv']);
    expect(formerListsFileWarning(config, { env: { HOME: '/home/ops' }, uid: 1000, exists: both })).toBeUndefined();
    const set = loadConfig({ STATE_DIR: '/srv/phone', LISTS_FILE: '/elsewhere.csv' });
    expect(formerListsFileWarning(set, { env: { HOME: '/home/ops' }, uid: 1000, exists: both })).toBeUndefined();
    expect(
      formerListsFileWarning(config, { env: { HOME: '/home/ops' }, uid: 1000, exists: files([]) }),
    ).toBeUndefined();
    // The systemd unit's STATE_DIR is the former default of root: the same file, nothing to say.
    const unit = loadConfig({ STATE_DIR: '/var/lib/phone-reputation' });
    expect(
      formerListsFileWarning(unit, { env: {}, uid: 0, exists: files(['/var/lib/phone-reputation/lists.csv']) }),
    ).toBeUndefined();
  });
});
