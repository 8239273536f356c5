// `phone-rep list` as the shipped command (bin/phone-rep.js over dist/), on a lists file of the
// test's own: two processes importing 1,000 distinct rules each at the same time lose none (the
// lock file and the re-read under it); a process killed with SIGKILL in the middle of a large
// import leaves a file that parses, holding either the old rules or the new ones, and the next
// command takes over the dead process's lock.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readListCsv } from '../../src/domain/lists/list-csv.js';
import { createPhoneNumberParser } from '../../src/domain/numbering/parse-phone-number.js';
import { testNumberingPlan } from '../../harness/servers.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));
const context = { parsePhoneNumber: createPhoneNumberParser(testNumberingPlan(), 'FR'), defaultRegion: 'FR' };

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

function csvOf(rules: string[], list: string): string {
  return `rule,list,label,note,expiresAt\n${rules.map((rule) => `${rule},${list},,,`).join('\n')}\n`;
}

const storedRules = (file: string) => readListCsv(readFileSync(file, 'utf8'), { context, trustNormalForm: true });

// Every run loads the numbering plan: tens of seconds for a handful of runs on a loaded machine.
describe('phone-rep list on the file', { timeout: 300_000 }, () => {
  it('add, check (which rule and why), export, and a bad import refused naming its line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-lists-cli-'));
    const env = { LISTS_FILE: join(dir, 'lists.csv') };
    expect(
      (await run(['list', 'add', '0162*', '--list', 'block', '--label', 'NPV', '--public-label'], env)).stdout,
    ).toMatch(/^added: \+33162\* block "NPV" \(public\)/);
    // Issue 44: an overseas range under its own calling code; an expiry that is no calendar date.
    expect((await run(['list', 'add', '0692*', '--list', 'block'], env)).stdout).toMatch(/^added: \+262692\* block/);
    const badDate = await run(['list', 'add', '+33163*', '--list', 'block', '--expires', '2031-02-30'], env);
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toMatch(/--expires: .*2031-02-30/);
    expect((await run(['list', 'add', '01 62 00 12 34', '--list', 'allow'], env)).stdout).toMatch(
      /^added: \+33162001234 allow/,
    );
    const check = await run(['list', 'check', '0162001234'], env);
    expect(check.stdout).toMatch(/allow by rule \+33162001234/);
    expect(check.stdout).toMatch(/\+33162\* \(block\), which does not apply: it is shorter/);
    const replaced = await run(['list', 'add', '+33162*', '--list', 'block'], env);
    expect(replaced.stdout).toMatch(/^replaced: \+33162\*/);
    const tooShort = await run(['list', 'add', '+3*', '--list', 'block'], env);
    expect(tooShort.code).toBe(2);
    writeFileSync(
      join(dir, 'bad.csv'),
      'rule,list,label,note,expiresAt\n+33163*,block,,,\n+33164*,block,,,2001-01-01\n',
    );
    const bad = await run(['list', 'import', join(dir, 'bad.csv')], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/line 3: expiresAt: .* is in the past; nothing was imported/);
    const exported = await run(['list', 'export'], env);
    expect(exported.stdout.split('\n').sort()).toEqual([
      '',
      '+262692*,block,,,,',
      '+33162*,block,,,,',
      '+33162001234,allow,,,,',
      'rule,list,label,note,expiresAt,labelPublic',
    ]);
  });

  it('two processes importing 1,000 distinct rules each at the same time lose none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-lists-cli-'));
    const env = { LISTS_FILE: join(dir, 'lists.csv') };
    const first = Array.from({ length: 1000 }, (_, at) => `+33610${String(at).padStart(4, '0')}*`);
    const second = Array.from({ length: 1000 }, (_, at) => `+33620${String(at).padStart(4, '0')}*`);
    writeFileSync(join(dir, 'a.csv'), csvOf(first, 'block'));
    writeFileSync(join(dir, 'b.csv'), csvOf(second, 'allow'));
    const results = await Promise.all([
      run(['list', 'import', join(dir, 'a.csv')], env),
      run(['list', 'import', join(dir, 'b.csv')], env),
    ]);
    expect(results.map((result) => result.code)).toEqual([0, 0]);
    const rules = storedRules(env.LISTS_FILE);
    expect(rules).toHaveLength(2000);
    expect(new Set(rules.map((rule) => rule.rule))).toEqual(new Set([...first, ...second]));
  });

  it('a process killed in the middle of a large import leaves the old rules or the new ones, never a torn file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-lists-cli-'));
    const file = join(dir, 'lists.csv');
    const env = { LISTS_FILE: file };
    const old = Array.from({ length: 100 }, (_, at) => `+33630${String(at).padStart(4, '0')}*`);
    writeFileSync(join(dir, 'old.csv'), csvOf(old, 'block'));
    expect((await run(['list', 'import', join(dir, 'old.csv')], env)).code).toBe(0);
    const large = Array.from({ length: 60_000 }, (_, at) => `+3364${String(at).padStart(6, '0')}*`);
    writeFileSync(join(dir, 'large.csv'), csvOf(large, 'block'));

    const child = spawn(process.execPath, [BIN, 'list', 'import', join(dir, 'large.csv')], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // The import holds the lock while it writes: kill it then.
    const lock = `${file}.lock`;
    while (!existsSync(lock)) {
      if (child.exitCode !== null) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    child.kill('SIGKILL');
    await exited;

    const rules = storedRules(file).map((rule) => rule.rule);
    expect([old.length, old.length + large.length]).toContain(rules.length);
    expect(new Set(rules)).toEqual(new Set(rules.length === old.length ? old : [...old, ...large]));
    // The dead process's lock is taken over by the next command.
    const after = await run(['list', 'add', '+33199*', '--list', 'block'], env);
    expect(after.code).toBe(0);
    expect(storedRules(file).map((rule) => rule.rule)).toContain('+33199*');
  });
});
