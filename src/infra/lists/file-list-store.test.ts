// The lists file: the atomic write, the lock (its owner token, its lease, a stale one taken over
// without a stall), a symbolic link kept, a bad file named at start and its refused rule logged
// as a hash, and no acknowledged write lost to a reload while the file is touched.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { readlink } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readListCsv } from '../../domain/lists/list-csv.js';
import { createKeyedHasher } from '../hash.js';
import { ListsFileError, openFileListStore, takeLock, writeFileAtomically } from './file-list-store.js';
import { loadNumberingPlan } from '../arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../../domain/numbering/parse-phone-number.js';

const dir = mkdtempSync(join(tmpdir(), 'phone-rep-file-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
const fresh = (): string => {
  count += 1;
  const sub = join(dir, `case-${count}`);
  mkdirSync(sub, { recursive: true });
  return join(sub, 'lists.csv');
};
// The real parser: a prefix rule is read as the parser reads its callers (rules.ts).
const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};
const HEADER = 'rule,list,label,note,expiresAt,createdAt';
const stored = (path: string) =>
  readListCsv(readFileSync(path, 'utf8'), { context, trustNormalForm: true }).map((rule) => rule.rule);
const rule = (spelling: string) => ({ rule: spelling, list: 'block' as const, createdAt: '2026-01-01T00:00:00.000Z' });

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not met in time: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('writeFileAtomically', () => {
  it('writes chunks one after the other, replaces the old file, and leaves no temporary file', async () => {
    const path = join(dir, 'sub', 'lists.csv');
    await writeFileAtomically(path, 'old\n');
    const chunks = ['rule,list\n', '+33162*,block\n', '', `${'+33612345678,allow,Élise\n'.repeat(5000)}`];
    await writeFileAtomically(path, chunks);
    expect(readFileSync(path, 'utf8')).toBe(chunks.join(''));
    expect(readdirSync(join(dir, 'sub'))).toEqual(['lists.csv']);
  });
});

describe('the lock', () => {
  // A lease of an hour: a write that does not stall proves the lock was taken over at once, not after its lease.
  const noLease = { lockLeaseMs: 3_600_000, lockWaitMs: 3_600_000 };

  it.each([
    ['the earlier format (a pid alone)', () => `${process.pid}\n`],
    [
      'an owner of this host with this pid, not one of this process’s locks',
      async () =>
        JSON.stringify({
          token: 'left-by-an-earlier-process',
          host: hostname(),
          pid: process.pid,
          pidNs: await readlink('/proc/self/ns/pid').catch(() => ''),
        }),
    ],
  ])('a lock holding this process’s own pid in %s is taken over at once', async (_name, content) => {
    const path = fresh();
    const store = await openFileListStore({ path, context, watch: false, ...noLease });
    writeFileSync(`${path}.lock`, await content());
    await store.put(rule('+33162*'));
    expect(stored(path)).toEqual(['+33162*']);
    expect(existsSync(`${path}.lock`)).toBe(false);
    await store.close();
  });

  it('a lock of a dead process of this host is taken over at once', async () => {
    const path = fresh();
    const store = await openFileListStore({ path, context, watch: false, ...noLease });
    // A pid beyond Linux's pid_max: no process has it.
    writeFileSync(
      `${path}.lock`,
      JSON.stringify({
        token: 't',
        host: hostname(),
        pid: 4_194_305,
        pidNs: await readlink('/proc/self/ns/pid').catch(() => ''),
      }),
    );
    await store.put(rule('+33163*'));
    expect(stored(path)).toEqual(['+33163*']);
    await store.close();
  });

  it('a lock of another host (or another pid namespace) is kept for its lease, then taken over', async () => {
    const path = fresh();
    const store = await openFileListStore({ path, context, watch: false, lockLeaseMs: 2000, lockWaitMs: 60_000 });
    writeFileSync(
      `${path}.lock`,
      JSON.stringify({ token: 't', host: 'another-container', pid: process.pid, pidNs: 'pid:[1]' }),
    );
    const written = store.put(rule('+33164*'));
    let done = false;
    void written.then(() => (done = true));
    // Held while its mtime is fresh: touched here as its owner's refresh would.
    for (let refreshes = 0; refreshes < 5; refreshes += 1) {
      const now = new Date();
      utimesSync(`${path}.lock`, now, now);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(done).toBe(false);
    }
    await written;
    expect(stored(path)).toEqual(['+33164*']);
    await store.close();
  });

  it('a lock held is refreshed while held, so a waiter does not take it over after its lease', async () => {
    const path = fresh();
    const store = await openFileListStore({ path, context, watch: false, lockLeaseMs: 1000, lockWaitMs: 60_000 });
    const held = await takeLock(`${path}.lock`, 1000, 60_000);
    const mtimes = new Set<number>();
    const written = store.put(rule('+33165*'));
    let done = false;
    void written.then(() => (done = true));
    // Four refreshes: a lease run out twice over, and the waiter still waits.
    await waitFor(() => {
      mtimes.add(statSync(`${path}.lock`).mtimeMs);
      return mtimes.size >= 5;
    }, 'the lock refreshed four times');
    expect(done).toBe(false);
    expect(await held.stillHeld()).toBe(true);
    await held.release();
    await written;
    expect(stored(path)).toEqual(['+33165*']);
    await store.close();
  });

  it('a write that cannot get the lock fails with a reason instead of hanging', async () => {
    const path = fresh();
    const store = await openFileListStore({ path, context, watch: false, lockLeaseMs: 60_000, lockWaitMs: 300 });
    writeFileSync(`${path}.lock`, JSON.stringify({ token: 't', host: 'another-container', pid: 1, pidNs: 'pid:[1]' }));
    await expect(store.put(rule('+33166*'))).rejects.toThrow(
      /the lists file is locked by another writer .*pid 1 on another-container/,
    );
    await store.close();
  });
});

describe('the file', () => {
  it('a LISTS_FILE that is a symbolic link stays one: the write goes to its target', async () => {
    const target = fresh();
    writeFileSync(target, `${HEADER}\n+33162*,block,,,,2026-01-01T00:00:00.000Z\n`);
    const linkDir = mkdtempSync(join(dir, 'link-'));
    const link = join(linkDir, 'lists.csv');
    symlinkSync(target, link);
    const store = await openFileListStore({ path: link, context, watch: false });
    await store.put(rule('+33163*'));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(stored(target)).toEqual(['+33162*', '+33163*']);
    expect(readdirSync(linkDir)).toEqual(['lists.csv']);
    await store.close();
  });

  it('a file that does not parse stops the open, naming the file, the line and the reason', async () => {
    const path = fresh();
    writeFileSync(
      path,
      `${HEADER}\n+33162*,block,,,,2026-01-01T00:00:00.000Z\n+33163*,maybe,,,,2026-01-01T00:00:00.000Z\n`,
    );
    const opened = openFileListStore({ path, context, watch: false });
    await expect(opened).rejects.toBeInstanceOf(ListsFileError);
    await expect(opened).rejects.toThrow(`the lists file ${path} does not parse: line 3: list:`);
  });

  it('a hand edit whose rule is refused is logged with the rule as its keyed hash, never in clear', async () => {
    const path = fresh();
    const lines: string[] = [];
    const logger = {
      info: () => undefined,
      warn: () => undefined,
      error: (obj: object, msg: string) => lines.push(`${JSON.stringify(obj)} ${msg}`),
    };
    const hashKey = createKeyedHasher('a secret of the test');
    const store = await openFileListStore({ path, context, logger, hashKey, watch: false });
    await store.put(rule('+33162*'));
    writeFileSync(path, `${HEADER}\n06 12 34 56 7,block,,,,2026-01-01T00:00:00.000Z\n`);
    await store.refresh();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`line 2`);
    expect(lines[0]).toContain(hashKey('06 12 34 56 7'));
    expect(lines[0]).not.toMatch(/06 12 34|\d{4,}\*?[^\d]*is neither/);
    expect(lines[0]).not.toContain('12 34 56');
    expect(store.match('+33162000000')?.rule).toBe('+33162*');
    await store.close();
  });
});

describe('a hand edit while a write is made', () => {
  it('is read, and the write made again on it: both the hand-added rule and the written one are kept', async () => {
    const path = fresh();
    let edits = 0;
    const store = await openFileListStore({
      path,
      context,
      watch: false,
      beforeCommit: () => {
        // An editor saves the file (no lock taken) while the write is being made, once.
        if (edits > 0) return;
        edits += 1;
        writeFileSync(
          path,
          `${HEADER}\n+33162*,block,,,,2026-01-01T00:00:00.000Z\n+33199*,allow,By hand,,,2026-01-01T00:00:00.000Z\n`,
        );
      },
    });
    await store.put(rule('+33162*'));
    await store.put(rule('+33163*'));
    expect(stored(path)).toEqual(['+33162*', '+33199*', '+33163*']);
    expect(store.match('+33199000000')?.rule).toBe('+33199*');
    await store.close();
  });
});

describe('writes beside reloads', () => {
  it('with the file touched every 50 ms, every one of 60 acknowledged writes is in the file and in force', async () => {
    const path = fresh();
    const store = await openFileListStore({ path, context, watch: true });
    // 3,000 rules: a reload takes several slices of the event loop, so writes land during reloads.
    await store.importRules(Array.from({ length: 3_000 }, (_, at) => rule(`+3319${String(at).padStart(5, '0')}*`)));
    const stop = { now: false };
    const toucher = (async () => {
      while (!stop.now) {
        const now = new Date();
        utimesSync(path, now, now);
        await new Promise((resolve) => setTimeout(resolve, 50));
        // The poll and fs.watch reload on each touch; a reload in progress meanwhile is the race.
        await store.refresh();
      }
    })();
    const acknowledged: string[] = [];
    const lost = new Set<string>();
    const spellings = Array.from({ length: 60 }, (_, at) => `+33170${String(at).padStart(4, '0')}*`);
    for (let at = 0; at < spellings.length; at += 6) {
      await Promise.all(
        spellings.slice(at, at + 6).map(async (spelling) => {
          await store.put(rule(spelling));
          acknowledged.push(spelling);
          // In force as soon as acknowledged, and still after every reload since.
          for (const earlier of acknowledged)
            if (store.match(`${earlier.slice(0, -1)}00`)?.rule !== earlier) lost.add(earlier);
        }),
      );
    }
    stop.now = true;
    await toucher;
    expect(acknowledged).toHaveLength(60);
    expect([...lost]).toEqual([]);
    const inFile = new Set(stored(path));
    for (const spelling of acknowledged) {
      expect(inFile.has(spelling)).toBe(true);
      expect(store.match(`${spelling.slice(0, -1)}00`)?.rule).toBe(spelling);
    }
    await store.close();
  });
});
