// The tokens file beside the lists file: two stores on one directory stand for the service and
// the CLI (or two instances sharing a folder). A change made by one is awaited in the other
// through its onChange (fs.watch or the poll), never slept for.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/redis.js';
import {
  openFileTokenStore,
  openTokenStore,
  TokenInputError,
  TokensFileError,
  type TokenStore,
} from './token-store.js';

const NOW = Date.parse('2026-11-28T13:47:12.345Z');
const HOUR = 3_600_000;
const opened: TokenStore[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/** A store on `path`, and a way to await its next change. */
async function openWatched(path: string): Promise<{ store: TokenStore; nextChange: () => Promise<void> }> {
  let waiters: Array<() => void> = [];
  const store = await openFileTokenStore(path, {
    watch: true,
    onChange: () => {
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
  });
  opened.push(store);
  return { store, nextChange: () => new Promise((resolve) => waiters.push(resolve)) };
}

const tokensPath = (): string => join(mkdtempSync(join(tmpdir(), 'phone-rep-tokens-')), 'tokens.json');

describe('the tokens file', () => {
  it('a token created by one process is accepted by another that follows the file', async () => {
    const path = tokensPath();
    const service = await openWatched(path);
    const cli = await openFileTokenStore(path, { watch: false });
    opened.push(cli);
    expect(service.store.anyInForce(NOW)).toBe(false);

    const seen = service.nextChange();
    const { secret, token } = await cli.create({ label: 'Kitchen phone' }, NOW);
    await seen;
    expect(service.store.anyInForce(NOW)).toBe(true);
    expect(await service.store.authenticate(secret, NOW)).toMatchObject({ id: token.id, label: 'Kitchen phone' });
  });

  it('keeps only the hash, in a file only its owner reads', async () => {
    const path = tokensPath();
    const store = await openFileTokenStore(path, { watch: false });
    opened.push(store);
    const { secret, token } = await store.create({ label: 'PBX', expiresAt: '2027-01-01' }, NOW);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(secret);
    expect(JSON.parse(text)).toMatchObject({
      format: 'phone-rep-tokens',
      version: 1,
      tokens: [{ id: token.id, label: 'PBX', expiresAt: '2027-01-01T00:00:00.000Z', hash: expect.any(String) }],
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(store.list()).toEqual([
      { id: token.id, label: 'PBX', createdAt: new Date(NOW).toISOString(), expiresAt: '2027-01-01T00:00:00.000Z' },
    ]);
  });

  it('refuses unknown, revoked and expired tokens', async () => {
    const path = tokensPath();
    const service = await openWatched(path);
    const cli = await openFileTokenStore(path, { watch: false });
    opened.push(cli);
    const kept = await service.store.create({ label: 'kept' }, NOW);
    const expiring = await service.store.create({ label: 'expiring', expiresAt: '2026-11-28T14:00:00Z' }, NOW);
    const revoked = await service.store.create({ label: 'revoked' }, NOW);
    await cli.refresh();

    expect(await service.store.authenticate('prt_not-a-token-of-this-deployment', NOW)).toBeNull();
    expect(await service.store.authenticate('', NOW)).toBeNull();
    expect(await service.store.authenticate(expiring.secret, NOW)).not.toBeNull();
    expect(await service.store.authenticate(expiring.secret, Date.parse('2026-11-28T14:00:00Z'))).toBeNull();

    const seen = service.nextChange();
    expect(await cli.revoke(revoked.token.id, NOW + 1000)).toBe(true);
    await seen;
    expect(await service.store.authenticate(revoked.secret, NOW + 2000)).toBeNull();
    expect(service.store.list().find((token) => token.id === revoked.token.id)?.revokedAt).toBe(
      new Date(NOW + 1000).toISOString(),
    );
    // Revoked again: the first revocation's time stays; an unknown id is no revocation.
    expect(await cli.revoke(revoked.token.id, NOW + 5000)).toBe(true);
    expect(await cli.revoke('tok_0000000000', NOW)).toBe(false);
    await service.store.refresh();
    expect(service.store.list().find((token) => token.id === revoked.token.id)?.revokedAt).toBe(
      new Date(NOW + 1000).toISOString(),
    );
    expect(await service.store.authenticate(kept.secret, NOW)).toMatchObject({ label: 'kept' });
    expect(service.store.countInForce(NOW)).toBe(2);
  });

  it('notes the last use to the hour, writing the file at most once an hour per token', async () => {
    const path = tokensPath();
    const store = await openFileTokenStore(path, { watch: false });
    opened.push(store);
    const { secret, token } = await store.create({ label: 'phone' }, NOW - 2 * HOUR);
    const writtenAt = (): number => Number(statSync(path, { bigint: true }).mtimeNs);

    expect(await store.authenticate(secret, NOW)).toMatchObject({ lastUsedAt: '2026-11-28T13:00:00.000Z' });
    await store.refresh();
    const first = writtenAt();
    const ino = statSync(path).ino;
    for (const later of [NOW + 60_000, NOW + 10 * 60_000, Date.parse('2026-11-28T13:59:59.999Z')])
      expect(await store.authenticate(secret, later)).toMatchObject({ lastUsedAt: '2026-11-28T13:00:00.000Z' });
    await store.refresh();
    // Not written again within the hour: the same file (a write renames a new one over it).
    expect(statSync(path).ino).toBe(ino);
    expect(writtenAt()).toBe(first);

    expect(await store.authenticate(secret, Date.parse('2026-11-28T14:00:00.000Z'))).toMatchObject({
      lastUsedAt: '2026-11-28T14:00:00.000Z',
    });
    await store.refresh();
    expect(statSync(path).ino).not.toBe(ino);
    const reader = await openFileTokenStore(path, { watch: false });
    opened.push(reader);
    expect(reader.list()).toEqual([{ ...token, lastUsedAt: '2026-11-28T14:00:00.000Z' }]);
  });

  it('keeps a use noted here when it reads a file written before that use landed', async () => {
    const path = tokensPath();
    const store = await openFileTokenStore(path, { watch: false });
    opened.push(store);
    const { secret } = await store.create({ label: 'phone' }, NOW - 2 * HOUR);
    const before = readFileSync(path, 'utf8');
    expect(await store.authenticate(secret, NOW)).toMatchObject({ lastUsedAt: '2026-11-28T13:00:00.000Z' });
    // The use is written behind the answer: await it in the file, then put the older file back,
    // as a reload that read the file before the write landed would see it.
    await waitFor(() => readFileSync(path, 'utf8').includes('2026-11-28T13:00:00.000Z'));
    writeFileSync(path, before);
    await store.refresh();
    expect(store.list()[0]?.lastUsedAt).toBe('2026-11-28T13:00:00.000Z');
  });

  it('refuses a bad label or expiry, storing nothing', async () => {
    const path = tokensPath();
    const store = await openFileTokenStore(path, { watch: false });
    opened.push(store);
    await expect(store.create({ label: 'a\nb' }, NOW)).rejects.toBeInstanceOf(TokenInputError);
    await expect(store.create({ label: 'ok', expiresAt: '2020-01-01' }, NOW)).rejects.toMatchObject({
      problem: { field: 'expiresAt' },
    });
    expect(store.list()).toEqual([]);
    expect(() => statSync(path)).toThrow();
  });

  it('two processes creating tokens at once lose none (the lock and the read under it)', async () => {
    const path = tokensPath();
    const one = await openFileTokenStore(path, { watch: false });
    const two = await openFileTokenStore(path, { watch: false });
    opened.push(one, two);
    await Promise.all(
      Array.from({ length: 10 }, (_, at) => (at % 2 === 0 ? one : two).create({ label: `phone ${at}` }, NOW)),
    );
    const reader = await openFileTokenStore(path, { watch: false });
    opened.push(reader);
    expect(
      reader
        .list()
        .map((token) => token.label)
        .sort(),
    ).toEqual(Array.from({ length: 10 }, (_, at) => `phone ${at}`).sort());
  });

  it('a file that does not parse stops the opening, naming the file; later, the tokens held stay', async () => {
    const path = tokensPath();
    writeFileSync(path, '{"format":"something else"}');
    await expect(openFileTokenStore(path, { watch: false })).rejects.toBeInstanceOf(TokensFileError);

    const other = tokensPath();
    const errors: string[] = [];
    const logger = {
      info: () => undefined,
      warn: () => undefined,
      error: (_obj: object, msg: string) => errors.push(msg),
    };
    const service = { store: await openFileTokenStore(other, { watch: false, logger }) };
    opened.push(service.store);
    const { secret } = await service.store.create({ label: 'phone' }, NOW);
    writeFileSync(other, 'not json');
    await service.store.refresh();
    await service.store.refresh();
    // Logged once, not at every read (the poll reads every second).
    expect(errors).toEqual(['tokens: the store could not be read; the tokens held stay']);
    expect(await service.store.authenticate(secret, NOW)).not.toBeNull();
    // A change refuses to overwrite it.
    await expect(service.store.create({ label: 'second' }, NOW)).rejects.toThrow(/fix it before changing the tokens/);
    expect(readFileSync(other, 'utf8')).toBe('not json');
  });

  it('lives beside the lists file when no Redis is configured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-tokens-'));
    const store = await openTokenStore(
      { listsFile: join(dir, 'lists.csv'), redisKeyPrefix: 'phonerep:' },
      { watch: false },
    );
    opened.push(store);
    expect(store.kind).toBe('file');
    expect(store.location).toBe(join(dir, 'tokens.json'));
  });
});
