// The command table and its dispatch, in-process: the help made from the table is today's text,
// an unknown command names the table, and runCommand turns each kind of mistake into its exit
// code and lines, for the commands that parse their options and for those that take them as typed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIo } from './command.js';
import { COMMANDS, runCli } from './main.js';

function capture(env: Record<string, string> = {}): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (line) => out.push(line), err: (line) => err.push(line), env }, out, err };
}

const LIST_USAGE = [
  'usage: phone-rep list add RULE --list allow|block [--label TEXT [--public-label]] [--note TEXT] [--expires ISO-8601] [--force]',
  '       phone-rep list remove RULE',
  '       phone-rep list show',
  '       phone-rep list check NUMBER',
  '       phone-rep list import FILE|-',
  '       phone-rep list export',
].join('\n');

const dir = mkdtempSync(join(tmpdir(), 'phone-rep-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the command table', () => {
  it("prints the help made from each command's usage and summary", async () => {
    const run = capture();
    expect(await runCli(['help'], run.io)).toBe(0);
    expect(run.out.join('\n').split('\n')).toEqual([
      'Usage:',
      '  phone-rep lookup <number> [--json] [--url URL]     one number: its facts, verdict and sources, or the API JSON',
      "  phone-rep info <number> [--json]                   one number's facts from the local numbering plan, no network",
      '  phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]',
      '                                                     one row per distinct number of a list',
      '  phone-rep serve                                    start the HTTP server',
      "  phone-rep canary [number…]                         check the real upstream pages' markers",
      '  phone-rep data <update [--force]|info>             refresh / show the ARCEP numbering data',
      '                                                     (update: 0 done, 4 done but MAJRIO kept, 1 nothing changed;',
      '                                                     --force installs a MAJNUM over 5 % shorter than the one in use)',
      '  phone-rep list add RULE --list allow|block [--label TEXT [--public-label]] [--note TEXT] [--expires ISO-8601] [--force]',
      '  phone-rep list remove RULE',
      '  phone-rep list show',
      '  phone-rep list check NUMBER',
      '  phone-rep list import FILE|-',
      '  phone-rep list export',
      "                                                     the operator's allow and block lists (docs/lists.md)",
      '  phone-rep token create --label LABEL [--expires DATE] [--spamblocker]',
      '  phone-rep token list',
      '  phone-rep token revoke ID',
      "                                                     the reporters' tokens, one per phone or PBX (docs/reports.md)",
      '  phone-rep backup [FILE]                            everything of record (lists, tokens, votes, dismissals) in one file or on stdout',
      "  phone-rep restore FILE|-                           puts a backup back: lists, tokens, votes and dismissals become exactly the file's",
      '',
      'lookup and batch run in-process by default; --url sends the requests to a running server instead.',
      "When every source fails, lookup still prints the number's facts and batch still fills its facts columns.",
      'Exit codes: 0 found, 2 invalid input, 3 every upstream failed, 1 other errors.',
      'phone-rep --version prints the version.',
    ]);
  });

  it("prints package.json's version for --version, exit 0", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const run = capture();
      expect(await runCli([flag], run.io)).toBe(0);
      expect(run.out).toEqual([`phone-rep ${version}`]);
    }
  });

  it("answers an unknown or missing command with the table's names, exit 2", async () => {
    for (const argv of [[], ['nope']]) {
      const run = capture();
      expect(await runCli(argv, run.io)).toBe(2);
      expect(run.err).toEqual([
        `usage: phone-rep <${COMMANDS.map((command) => command.name).join('|')}> …  (phone-rep help for more)`,
      ]);
    }
  });

  it('holds each name once', () => {
    const names = COMMANDS.map((command) => command.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('a usage mistake', () => {
  it('is its message, then the usage, exit 2, for an unknown option or a missing argument', async () => {
    const unknown = capture();
    expect(await runCli(['info', '0612345678', '--url', 'x'], unknown.io)).toBe(2);
    expect(unknown.err).toEqual([
      expect.stringContaining("Unknown option '--url'"),
      'usage: phone-rep info <number> [--json]',
    ]);
    const missing = capture();
    expect(await runCli(['lookup'], missing.io)).toBe(2);
    expect(missing.err).toEqual([
      'lookup takes exactly one number',
      'usage: phone-rep lookup <number> [--json] [--url URL]',
    ]);
  });

  it('is the usage alone for an action its table does not hold, or a flag out of place', async () => {
    for (const argv of [
      ['data'],
      ['data', 'foo'],
      ['data', 'info', '--force'],
      ['data', '--force'],
      ['data', 'update', '--force', '--force'],
    ]) {
      const run = capture();
      expect(await runCli(argv, run.io)).toBe(2);
      expect(run.err).toEqual(['usage: phone-rep data <update [--force]|info>']);
    }
    for (const [argv, usage] of [
      [['restore'], 'usage: phone-rep restore FILE|-'],
      [['restore', 'a.json', 'b.json'], 'usage: phone-rep restore FILE|-'],
      [['backup', 'a.json', 'b.json'], 'usage: phone-rep backup [FILE]'],
    ] as const) {
      const run = capture();
      expect(await runCli([...argv], run.io)).toBe(2);
      expect(run.err).toEqual([usage]);
    }
    for (const argv of [['list'], ['list', 'bogus'], ['list', 'add'], ['list', 'show', 'extra']]) {
      const run = capture();
      expect(await runCli(argv, run.io)).toBe(2);
      expect(run.err).toEqual([LIST_USAGE]);
    }
  });

  it('is a value refused on its own merits without the usage, and an unreadable input with it', async () => {
    const env = { LISTS_FILE: join(dir, 'lists.csv') };
    const refused = capture(env);
    expect(await runCli(['list', 'add', '+33612345678'], refused.io)).toBe(2);
    expect(refused.err).toEqual(['--list allow|block is required']);
    const unreadable = capture(env);
    expect(await runCli(['list', 'import', join(dir, 'missing.csv')], unreadable.io)).toBe(2);
    expect(unreadable.err).toEqual([`cannot read ${join(dir, 'missing.csv')}: ENOENT`, LIST_USAGE]);
    const noStdin = capture();
    expect(await runCli(['batch', '-'], noStdin.io)).toBe(2);
    expect(noStdin.err).toEqual([
      'no standard input to read',
      'usage: phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]',
    ]);
  });
});

describe('a configuration error', () => {
  it('is its message alone, exit 1, whichever command loads the config', async () => {
    for (const argv of [['data', 'info'], ['list', 'show'], ['canary']]) {
      const run = capture({ TRUST_PROXY: 'true' });
      expect(await runCli(argv, run.io)).toBe(1);
      expect(run.err).toHaveLength(1);
      expect(run.err[0]).toMatch(/^Invalid configuration:\n/);
    }
  });
});
