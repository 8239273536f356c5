// `phone-rep token …` in-process, on a lists directory of the test's own: create prints the
// secret once (on stdout alone), a service following the same file accepts it, list shows every
// token without secret or hash, revoke refuses it from then on; --spamblocker prints the two
// configs for PUBLIC_URL, and is refused without it before anything is created.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openFileTokenStore } from '../../infra/reports/token-store.js';
import { spamBlockerQueryApi, spamBlockerReportApi } from '../../spamblocker-configs.js';
import type { CliIo } from '../command.js';
import { runCli } from '../main.js';

function capture(env: Record<string, string>): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (line) => out.push(line), err: (line) => err.push(line), env }, out, err };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function listsDir(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-token-cli-'));
  dirs.push(dir);
  return { dir, env: { LISTS_FILE: join(dir, 'lists.csv') } };
}

const USAGE = [
  'usage: phone-rep token create --label LABEL [--expires DATE] [--spamblocker]',
  '       phone-rep token list',
  '       phone-rep token revoke ID',
].join('\n');

describe('phone-rep token', () => {
  it('creates a token a running service accepts, lists it without secret, and revokes it', async () => {
    const { dir, env } = listsDir();
    // The service, following the file: each change the CLI makes is awaited, never slept for.
    let changed: () => void = () => undefined;
    const nextChange = (): Promise<void> => new Promise((resolve) => (changed = resolve));
    const service = await openFileTokenStore(join(dir, 'tokens.json'), { watch: true, onChange: () => changed() });
    try {
      const created = nextChange();
      const create = capture(env);
      expect(await runCli(['token', 'create', '--label', 'Kitchen phone', '--expires', '2099-01-01'], create.io)).toBe(
        0,
      );
      expect(create.out).toHaveLength(1);
      const [secret = ''] = create.out;
      expect(secret).toMatch(/^prt_[A-Za-z0-9_-]{43}$/);
      expect(create.err).toEqual([
        expect.stringMatching(
          new RegExp(
            `^created tok_[0-9a-f]{10} "Kitchen phone", expires 2099-01-01T00:00:00.000Z \\(file ${join(dir, 'tokens.json')}\\)$`,
          ),
        ),
        'The token above is shown this once and will not be shown again: only its hash is kept.',
      ]);
      expect(readFileSync(join(dir, 'tokens.json'), 'utf8')).not.toContain(secret);
      await created;
      const accepted = await service.authenticate(secret);
      expect(accepted).toMatchObject({ label: 'Kitchen phone' });
      const id = accepted?.id ?? '';
      // Its use, noted to the hour, written behind the answer.
      await service.refresh();

      const list = capture(env);
      expect(await runCli(['token', 'list'], list.io)).toBe(0);
      expect(list.out).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${id}  in force  "Kitchen phone"  created \\S+  expires 2099-01-01T00:00:00.000Z  last used \\S+$`,
          ),
        ),
      ]);
      expect(list.out.join('\n')).not.toContain(secret);
      // Nor its hash, which the file holds.
      const { tokens: stored } = JSON.parse(readFileSync(join(dir, 'tokens.json'), 'utf8')) as {
        tokens: Array<{ hash: string }>;
      };
      expect(stored[0]?.hash).toMatch(/^[0-9a-f]{64}$/);
      expect([...list.out, ...list.err].join('\n')).not.toContain(stored[0]?.hash ?? 'no hash');
      expect(list.err).toEqual([`1 token, 1 in force (file ${join(dir, 'tokens.json')})`]);

      const revoked = nextChange();
      const revoke = capture(env);
      expect(await runCli(['token', 'revoke', id], revoke.io)).toBe(0);
      expect(revoke.out).toEqual([`revoked: ${id} "Kitchen phone" (file ${join(dir, 'tokens.json')})`]);
      await revoked;
      expect(await service.authenticate(secret)).toBeNull();
      const after = capture(env);
      expect(await runCli(['token', 'list'], after.io)).toBe(0);
      expect(after.out[0]).toMatch(new RegExp(`^${id}  revoked  "Kitchen phone"  .*  revoked \\S+$`));
    } finally {
      await service.close();
    }
  });

  it('refuses a bad label, expiry or id (exit 2) and changes nothing', async () => {
    const { dir, env } = listsDir();
    const cases: Array<[string[], string]> = [
      [['token', 'create'], '--label is required (what the token is for: "Kitchen phone")'],
      [
        ['token', 'create', '--label', 'a'.repeat(61)],
        '--label: a label is at most 60 characters (this one 61); no token was created',
      ],
      [
        ['token', 'create', '--label', 'x', '--expires', '2001-01-01'],
        '--expires: 2001-01-01 is in the past; no token was created',
      ],
      [
        ['token', 'revoke', 'tok_nothex'],
        'ID: "tok_nothex" is no token id (tok_ and 10 hex digits, as token list shows)',
      ],
    ];
    for (const [argv, message] of cases) {
      const run = capture(env);
      expect(await runCli(argv, run.io)).toBe(2);
      expect(run.err).toEqual([message]);
    }
    const unknown = capture(env);
    expect(await runCli(['token', 'revoke', 'tok_0000000000'], unknown.io)).toBe(2);
    expect(unknown.err).toEqual([`no token tok_0000000000 (file ${join(dir, 'tokens.json')})`]);
    for (const argv of [['token'], ['token', 'bogus'], ['token', 'revoke'], ['token', 'list', 'extra']]) {
      const run = capture(env);
      expect(await runCli(argv, run.io)).toBe(2);
      expect(run.err).toEqual([USAGE]);
    }
    const list = capture(env);
    expect(await runCli(['token', 'list'], list.io)).toBe(0);
    expect(list.out).toEqual([]);
  });

  it('--spamblocker prints the Report API config with the token and the query config, for PUBLIC_URL', async () => {
    const { env } = listsDir();
    const run = capture({ ...env, PUBLIC_URL: 'https://phones.example.org/' });
    expect(await runCli(['token', 'create', '--label', 'Léa', '--spamblocker'], run.io)).toBe(0);
    const [secret = '', blank, reportTitle, report = '', blank2, queryTitle, query = ''] = run.out;
    expect(run.out).toHaveLength(7);
    expect([blank, blank2]).toEqual(['', '']);
    expect(reportTitle).toMatch(/^SpamBlocker Report API/);
    expect(queryTitle).toMatch(/^SpamBlocker Instant Query API/);
    expect(JSON.parse(report)).toEqual(spamBlockerReportApi('https://phones.example.org', secret));
    expect(JSON.parse(query)).toEqual(spamBlockerQueryApi('https://phones.example.org'));
  });

  it('--spamblocker without PUBLIC_URL is refused, naming it, before any token is created', async () => {
    const { env } = listsDir();
    const run = capture(env);
    expect(await runCli(['token', 'create', '--label', 'x', '--spamblocker'], run.io)).toBe(2);
    expect(run.out).toEqual([]);
    expect(run.err).toEqual([
      '--spamblocker: the configs need the address the phones reach this deployment at: set PUBLIC_URL (https://phones.example.org); no token was created',
    ]);
    const list = capture(env);
    expect(await runCli(['token', 'list'], list.io)).toBe(0);
    expect(list.err).toEqual([expect.stringMatching(/^0 tokens, 0 in force/)]);
  });
});
