// Every group of keys used together (a script, a MULTI, an MGET) must sit in one hash slot of a
// Redis Cluster, whatever REDIS_KEY_PREFIX is: the slot of every key, prefix applied, computed
// with cluster-key-slot (what ioredis' Cluster client routes by), must be its group's tag's.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS } from '../../config/config.js';
import { hashTagOf, REDIS_KEY_GROUPS, type KeyBuilder, type KeyGroup } from './keys.js';

/**
 * The groups whose keys are each used alone (no script, MULTI or multi-key command takes two of
 * them), so they carry no tag and a cluster spreads them. A new group without a tag fails the
 * test until it is added here, with what makes it safe.
 */
const USED_ALONE = [
  'cache', // GET, SET, DEL of one entry
  'locks', // SET NX, the renew and release scripts: one key each
  'rateLimit', // the sliding-log script: one key
];

const PREFIXES = [
  CONFIG_DEFAULTS.REDIS_KEY_PREFIX, // the real default, `phonerep:`
  'test:keys:0123456789:',
  'team-a/phone', // no separator of its own
  'odd{', // a brace of the prefix's own: the tag it opens ends in the key, the same for the whole group
];

/** Sample parts of a key: an upstream, a number, a day, a token id; some holding braces, which a tag placed first ignores. */
const PART_SETS: ReadonlyArray<readonly string[]> = [
  ['tellows', '+33612345678', '2026-11-28'],
  ['numeroinconnu', 'tok_{abc}', '{x}'],
  ['telguarder', '}', '{'],
];

/** The key `builder` makes from `parts` (a name as it is). */
function keyOf(builder: KeyBuilder, parts: readonly string[]): string {
  return typeof builder === 'string' ? builder : builder(...parts.slice(0, Math.max(builder.length, 1)));
}

const groups = Object.entries(REDIS_KEY_GROUPS) as Array<[string, KeyGroup]>;

describe('the Redis keys a cluster accepts', () => {
  it('lists every builder in a group (the module exports no key outside REDIS_KEY_GROUPS)', async () => {
    const module = (await import('./keys.js')) as Record<string, unknown>;
    const inGroups = new Set(groups.map(([, group]) => group.keys));
    for (const [name, value] of Object.entries(module)) {
      if (!name.endsWith('_KEYS')) continue;
      expect(inGroups.has(value as KeyGroup['keys']), `${name} is in REDIS_KEY_GROUPS`).toBe(true);
    }
  });

  it('gives a tag to every group but those used alone', () => {
    expect(
      groups
        .filter(([, group]) => group.tag === null)
        .map(([name]) => name)
        .sort(),
    ).toEqual([...USED_ALONE].sort());
  });

  for (const [name, group] of groups.filter(([, candidate]) => candidate.tag !== null)) {
    it(`puts every key of ${name} in the slot of its tag, under any prefix`, () => {
      for (const prefix of PREFIXES) {
        for (const parts of PART_SETS) {
          // One tag per group, or per first part (an upstream).
          const tag = typeof group.tag === 'function' ? group.tag(parts[0] ?? '') : (group.tag ?? '');
          const keys = Object.values(group.keys).map((builder) => keyOf(builder, parts));
          const full = keys.map((key) => `${prefix}${key}`);
          for (const key of keys) expect(key.startsWith(tag), `${key} starts with ${tag}`).toBe(true);
          const slot = calculateSlot.generateMulti(full);
          expect(slot, `${full.join(', ')} share one slot`).not.toBe(-1);
          if (!prefix.includes('{')) {
            // The slot is the tag's alone: the prefix does not move it.
            expect(slot).toBe(calculateSlot(tag.slice(1, -1)));
            for (const key of full) expect(hashTagOf(key)).toBe(tag.slice(1, -1));
          }
        }
      }
    });
  }

  it('would catch a group that disagrees (the check can fail)', () => {
    const prefix = CONFIG_DEFAULTS.REDIS_KEY_PREFIX;
    expect(calculateSlot.generateMulti([`${prefix}lists:rules`, `${prefix}lists:version`])).toBe(-1);
    expect(calculateSlot.generateMulti([`${prefix}{lists}:rules`, `${prefix}{lists}:version`])).not.toBe(-1);
  });

  for (const name of USED_ALONE) {
    it(`leaves the keys of ${name} untagged, so a cluster spreads them over its slots`, () => {
      const prefix = CONFIG_DEFAULTS.REDIS_KEY_PREFIX;
      const group: KeyGroup = REDIS_KEY_GROUPS[name as keyof typeof REDIS_KEY_GROUPS];
      for (const builder of Object.values(group.keys)) {
        const full = ['a1', 'b2', 'c3', 'd4'].map(
          (part) => `${prefix}${typeof builder === 'string' ? builder : builder(part)}`,
        );
        for (const key of full) expect(hashTagOf(key), `${key} has no tag`).toBe(key);
        expect(new Set(full.map((key) => calculateSlot(key))).size).toBeGreaterThan(1);
      }
    });
  }

  it('names every key through keys.ts: each production file sending Redis commands imports it', () => {
    const src = join(import.meta.dirname, '..', '..');
    // Files sending commands on keys given to them: the client, the scripts' helpers, the stream follower.
    const givenKeys = new Set([
      'infra/redis/redis-client.ts',
      'infra/redis/scripts.ts',
      'infra/redis/change-stream-follower.ts',
    ]);
    const sends =
      /\b(?:redis|pipeline|multi)\s*\.\s*(?:multi|pipeline|eval|evalsha|mget|mset|get|set|del|unlink|exists|h[a-z]+|z[a-z]+|x[a-z]+|s[a-z]*add|incr|incrby|decr|expire|pexpire|pexpireat|rename|scan|publish|phonerep[A-Za-z]+)\(|\b(?:hitSlidingLog|takeBudgetShare)\(/;
    const senders: string[] = [];
    const visit = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) visit(path);
        else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
          const name = relative(src, path).split('\\').join('/');
          const text = readFileSync(path, 'utf8');
          if (!givenKeys.has(name) && sends.test(text)) senders.push(name);
        }
      }
    };
    visit(src);
    expect(senders.length).toBeGreaterThanOrEqual(8); // the stores above: the scan finds them
    for (const name of senders) {
      const text = readFileSync(join(src, name), 'utf8');
      expect(/from '(?:\.\/|\.\.\/redis\/)keys\.js'/.test(text), `${name} names its keys through redis/keys.ts`).toBe(
        true,
      );
    }
  });

  it('reads a hash tag as Redis Cluster does', () => {
    expect(hashTagOf('{lists}:rules')).toBe('lists');
    expect(hashTagOf('p:{polite:tellows}:budget')).toBe('polite:tellows');
    expect(hashTagOf('cache:abc')).toBe('cache:abc');
    expect(hashTagOf('{}:x{y}')).toBe('{}:x{y}'); // an empty first tag: the whole key
    expect(hashTagOf('a{b')).toBe('a{b');
    for (const key of ['{lists}:rules', 'p:{polite:x}:y', 'cache:abc', '{}:x{y}', 'a{b', 'x{y}{z}'])
      expect(calculateSlot(key)).toBe(calculateSlot(hashTagOf(key)));
  });
});
