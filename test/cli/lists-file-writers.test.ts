// Writers of the lists file side by side, as shipped (bin/phone-rep.js over dist/): the admin API
// and the CLI while the file is touched every 50 ms (no acknowledged rule lost); a lock held by
// another live process is waited for, one left by a killed process taken over at once; a lock
// held from another pid namespace or another host name (a container sharing the folder, made
// here with `unshare`) is judged by its lease alone; an export of 30,000 rules through a pipe
// read slowly arrives whole.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readListCsv } from '../../src/domain/lists/list-csv.js';
import { openFileListStore } from '../../src/infra/lists/file-list-store.js';
import { startTestServer } from '../../harness/servers.js';
import { watchOutput } from '../../harness/processes.js';
import { loadNumberingPlan } from '../../src/infra/arcep/load-numbering-plan.js';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));
const DIST_STORE = new URL('../../dist/infra/lists/file-list-store.js', import.meta.url).href;
// The real parser: a prefix rule is read as the parser reads its callers (rules.ts).
const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};
const HEADER = 'rule,list,label,note,expiresAt,createdAt';
const TOKEN = 'an-admin-token-of-at-least-32-characters';
const storedRules = (file: string): string[] =>
  readListCsv(readFileSync(file, 'utf8'), { context, trustNormalForm: true }).map((rule) => rule.rule);

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: tmpdir(), env: { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', ...env }, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const exitOf = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) => child.once('close', (code) => resolve(code)));

// Another container, as far as the lock can tell: a user namespace (no privilege needed) with a
// pid namespace, a UTS namespace (its own host name), or both. `--kill-child`: a SIGKILL of
// `unshare` kills the process inside too. Where user namespaces are not allowed, the tests below
// are skipped (and say so).
const UNSHARE = ['--user', '--map-root-user', '--kill-child'];
const unshareWorks = spawnSync('unshare', [...UNSHARE, '--pid', '--uts', 'true']).status === 0;
const OTHER_HOST = 'another-container';

describe('writers of the lists file', { timeout: 120_000 }, () => {
  it('60 PUTs through the admin API and CLI adds beside them, the file touched every 50 ms: every acknowledged rule is in the file and in force', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-writers-'));
    const file = join(dir, 'lists.csv');
    writeFileSync(
      file,
      `${HEADER}\n${Array.from({ length: 3000 }, (_, at) => `+3319${String(at).padStart(5, '0')}*,block,,,,2026-01-01T00:00:00.000Z`).join('\n')}\n`,
    );
    const server = await startTestServer({ env: { LISTS_FILE: file, ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0' } });
    const stop = { now: false };
    const toucher = (async () => {
      while (!stop.now) {
        const now = new Date();
        utimesSync(file, now, now);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    try {
      const cli = Array.from({ length: 4 }, (_, at) => `+33180${at}*`);
      const cliRuns = Promise.all(
        cli.map((rule) => run(['list', 'add', rule, '--list', 'block'], { LISTS_FILE: file })),
      );
      const acknowledged: string[] = [];
      const spellings = Array.from({ length: 60 }, (_, at) => `+33170${String(at).padStart(4, '0')}*`);
      for (let at = 0; at < spellings.length; at += 6) {
        await Promise.all(
          spellings.slice(at, at + 6).map(async (rule) => {
            const response = await fetch(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent(rule)}`, {
              method: 'PUT',
              headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
              body: JSON.stringify({ list: 'block' }),
            });
            if (response.status === 201) acknowledged.push(rule);
            await response.body?.cancel();
          }),
        );
      }
      const cliResults = await cliRuns;
      expect(cliResults.map((result) => [result.code, result.stderr])).toEqual(cli.map(() => [0, '']));
      acknowledged.push(...cli);
      expect(acknowledged).toHaveLength(64);
      stop.now = true;
      await toucher;
      const inFile = new Set(storedRules(file));
      expect(acknowledged.filter((rule) => !inFile.has(rule))).toEqual([]);
      // In force: the rules the server holds (after a read of the file as it is now).
      await server.deps.lists?.refresh();
      const held = (await (
        await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as Array<{ rule: string }>;
      const inForce = new Set(held.map((rule) => rule.rule));
      expect(acknowledged.filter((rule) => !inForce.has(rule))).toEqual([]);
    } finally {
      stop.now = true;
      await toucher;
      await server.close();
    }
  });

  it('a lock held by another live process is waited for while refreshed; one left by a killed process is taken over at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-writers-'));
    const file = join(dir, 'lists.csv');
    // A child that takes the lock (a lease of 1 s, refreshed), says so, and releases it when its stdin closes.
    const holder = (): ChildProcess =>
      spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { takeLock } = await import(${JSON.stringify(DIST_STORE)}); const lock = await takeLock(${JSON.stringify(`${file}.lock`)}, 1000); process.stdout.write('held\\n'); process.stdin.resume(); process.stdin.on('end', async () => { await lock.release(); process.stdout.write('released\\n'); process.exit(0); });`,
        ],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      );

    const live = holder();
    const liveExit = exitOf(live);
    const liveOutput = watchOutput(live);
    await liveOutput.printed(/held/);
    const store = await openFileListStore({
      path: file,
      context,
      watch: false,
      lockLeaseMs: 1000,
      lockWaitMs: 120_000,
    });
    let done = false;
    const written = store
      .put({ rule: '+33162*', list: 'block', createdAt: '2026-01-01T00:00:00.000Z' })
      .then(() => (done = true));
    // Three refreshes by the other process: past its lease three times, and the write still waits.
    const mtimes = new Set<number>();
    while (mtimes.size < 4) {
      mtimes.add(statSync(`${file}.lock`).mtimeMs);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(done).toBe(false);
    live.stdin?.end();
    await written;
    expect(await liveExit).toBe(0);
    expect(liveOutput.output()).toContain('released');
    expect(storedRules(file)).toEqual(['+33162*']);

    // Killed while holding it: the lock file stays, naming a pid that is gone.
    const killed = holder();
    await watchOutput(killed).printed(/held/);
    const exited = exitOf(killed);
    killed.kill('SIGKILL');
    await exited;
    expect(existsSync(`${file}.lock`)).toBe(true);
    // A lease of an hour: the write goes through because the owner is known dead, not because its lease ran out.
    const patient = await openFileListStore({
      path: file,
      context,
      watch: false,
      lockLeaseMs: 3_600_000,
      lockWaitMs: 3_600_000,
    });
    await patient.put({ rule: '+33163*', list: 'block', createdAt: '2026-01-01T00:00:00.000Z' });
    expect(storedRules(file)).toEqual(['+33162*', '+33163*']);
    await store.close();
    await patient.close();
  });

  it.skipIf(!unshareWorks).each([
    ['another pid namespace and another host name', ['--pid', '--uts']],
    ['another host name, the same pid namespace', ['--uts']],
    ['another pid namespace, the same host name', ['--pid']],
  ])(
    'a lock held from %s is waited for while refreshed; its holder killed, it is taken over only once its lease has run out',
    async (_where, namespaces) => {
      const dir = mkdtempSync(join(tmpdir(), 'phone-rep-writers-'));
      const file = join(dir, 'lists.csv');
      const lockPath = `${file}.lock`;
      const renamed = namespaces.includes('--uts');
      const script = `const { takeLock } = await import(${JSON.stringify(DIST_STORE)}); const lock = await takeLock(${JSON.stringify(lockPath)}, 1000); process.stdout.write('held\\n'); process.stdin.resume(); process.stdin.on('end', async () => { await lock.release(); process.stdout.write('released\\n'); process.exit(0); });`;
      const holder = (): ChildProcess =>
        spawn(
          'unshare',
          [
            ...UNSHARE,
            ...namespaces,
            'sh',
            '-c',
            `${renamed ? `hostname ${OTHER_HOST} && ` : ''}exec "$0" --input-type=module -e "$1"`,
            process.execPath,
            script,
          ],
          { stdio: ['pipe', 'pipe', 'pipe'] },
        );

      const live = holder();
      const liveExit = exitOf(live);
      const liveOutput = watchOutput(live);
      await liveOutput.printed(/held/);
      // The owner record says where it was taken: another host name, or another pid namespace (where it is pid 1).
      const owner = JSON.parse(readFileSync(lockPath, 'utf8')) as { host: string; pid: number; pidNs: string };
      const ourPidNs = await readlink('/proc/self/ns/pid');
      expect(owner.host).toBe(renamed ? OTHER_HOST : hostname());
      if (namespaces.includes('--pid')) {
        expect(owner.pid).toBe(1);
        expect(owner.pidNs).not.toBe(ourPidNs);
      } else {
        expect(owner.pidNs).toBe(ourPidNs);
      }

      const store = await openFileListStore({
        path: file,
        context,
        watch: false,
        lockLeaseMs: 1000,
        lockWaitMs: 120_000,
      });
      let done = false;
      const written = store
        .put({ rule: '+33162*', list: 'block', createdAt: '2026-01-01T00:00:00.000Z' })
        .then(() => (done = true));
      // Three refreshes by the other container: past its lease three times, and the write still waits.
      const mtimes = new Set<number>();
      while (mtimes.size < 4) {
        mtimes.add(statSync(lockPath).mtimeMs);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(done).toBe(false);
      live.stdin?.end();
      await written;
      expect(await liveExit).toBe(0);
      expect(liveOutput.output()).toContain('released');
      expect(storedRules(file)).toEqual(['+33162*']);

      // Killed while holding it: the lock file stays. Its pid means nothing here (another pid
      // namespace or another host), so it is not taken at once: with a lease of an hour, a write
      // that waits a second is refused, naming the lock...
      const killed = holder();
      await watchOutput(killed).printed(/held/);
      const exited = exitOf(killed);
      killed.kill('SIGKILL');
      await exited;
      expect(existsSync(lockPath)).toBe(true);
      const cautious = await openFileListStore({
        path: file,
        context,
        watch: false,
        lockLeaseMs: 3_600_000,
        lockWaitMs: 1000,
      });
      await expect(
        cautious.put({ rule: '+33164*', list: 'block', createdAt: '2026-01-01T00:00:00.000Z' }),
      ).rejects.toThrow(/locked by another writer/);
      // ... and with its lease of 1 s, it is taken over once the lease has run out.
      const patient = await openFileListStore({
        path: file,
        context,
        watch: false,
        lockLeaseMs: 1000,
        lockWaitMs: 120_000,
      });
      await patient.put({ rule: '+33163*', list: 'block', createdAt: '2026-01-01T00:00:00.000Z' });
      expect(storedRules(file)).toEqual(['+33162*', '+33163*']);
      await Promise.all([store.close(), cautious.close(), patient.close()]);
    },
  );

  it('an export of 30,000 rules through a pipe read slowly arrives whole, exit 0; a reader that leaves makes it exit non-zero', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-writers-'));
    const file = join(dir, 'lists.csv');
    const rules = Array.from({ length: 30_000 }, (_, at) => `+3361${String(at).padStart(7, '0')}`);
    writeFileSync(
      file,
      `${HEADER}\n${rules.map((rule) => `${rule},block,A label,a note,,2026-01-01T00:00:00.000Z`).join('\n')}\n`,
    );
    const env = { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1', LISTS_FILE: file };

    const child = spawn(process.execPath, [BIN, 'list', 'export'], {
      cwd: tmpdir(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = exitOf(child);
    const chunks: Buffer[] = [];
    const stdout = child.stdout;
    if (stdout === null) throw new Error('no stdout');
    // A slow reader: each chunk read, then a pause before the next.
    stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      stdout.pause();
      setTimeout(() => stdout.resume(), 25);
    });
    expect(await exited).toBe(0);
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    expect(lines[0]).toBe('rule,list,label,note,expiresAt,labelPublic');
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(30_002);
    expect(lines.slice(1, -1).map((line) => line.split(',')[0])).toEqual(rules);

    const leaving = spawn(process.execPath, [BIN, 'list', 'export'], {
      cwd: tmpdir(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const leavingExit = exitOf(leaving);
    leaving.stdout?.once('data', () => leaving.stdout?.destroy());
    expect(await leavingExit).not.toBe(0);
  });
});
