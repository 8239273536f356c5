// `phone-rep backup` and `phone-rep restore` as the shipped command (bin/phone-rep.js over
// dist/), on the file store and on a Redis of the test's own (a child redis-server, so the test
// may flush it): a backup then a restore puts back every rule with every field, replacing what
// was there; after a Redis loss a restore brings every rule back and a running instance serves
// them; a file of another format or version is refused and changes nothing.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.js';
import { waitFor } from '../support/redis.js';

const BIN = fileURLToPath(new URL('../../bin/phone-rep.js', import.meta.url));
const TOKEN = 'an-admin-token-of-at-least-32-characters';
const BEARER = { authorization: `Bearer ${TOKEN}` };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      // The test's own state directory: the default lists file is never the user's.
      {
        cwd: tmpdir(),
        env: {
          PATH: process.env.PATH ?? '',
          NODE_NO_WARNINGS: '1',
          XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? tmpdir(),
          ...env,
        },
        timeout: 120_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function ok(args: string[], env: Record<string, string>): Promise<Run> {
  const result = await run(args, env);
  expect(result, result.stderr).toMatchObject({ code: 0 });
  return result;
}

// Every field a rule may hold, a private and a public label, a note with a comma and quotes, an
// expired rule (kept: it is of record, it simply does not apply) and one that expires later.
const LISTS_FILE_TEXT = `rule,list,label,note,expiresAt,createdAt,labelPublic
+33162*,block,NPV,"ARCEP NPV range, ""demarchage""",,2026-11-26T02:36:57.950Z,true
+33612345678,allow,Dr Martin,our GP,,2026-11-26T02:37:19.534Z,
+33163*,block,Old campaign,,2020-01-01T00:00:00.000Z,2019-06-01T00:00:00.000Z,
+225*,block,,,2099-01-01T00:00:00.000Z,2026-11-27T10:00:00.000Z,
+33612000001,allow,,,,2026-11-27T11:00:00.000Z,
`;

interface BackupRule {
  rule: string;
  list: string;
  label?: string;
  labelPublic?: boolean;
  note?: string;
  createdAt: string;
  expiresAt?: string;
}

const rulesOf = (text: string): BackupRule[] => (JSON.parse(text) as { lists: { rules: BackupRule[] } }).lists.rules;

const EXPECTED: BackupRule[] = [
  { rule: '+225*', list: 'block', createdAt: '2026-11-27T10:00:00.000Z', expiresAt: '2099-01-01T00:00:00.000Z' },
  {
    rule: '+33162*',
    list: 'block',
    label: 'NPV',
    labelPublic: true,
    note: 'ARCEP NPV range, "demarchage"',
    createdAt: '2026-11-26T02:36:57.950Z',
  },
  {
    rule: '+33163*',
    list: 'block',
    label: 'Old campaign',
    createdAt: '2019-06-01T00:00:00.000Z',
    expiresAt: '2020-01-01T00:00:00.000Z',
  },
  { rule: '+33612000001', list: 'allow', createdAt: '2026-11-27T11:00:00.000Z' },
  { rule: '+33612345678', list: 'allow', label: 'Dr Martin', note: 'our GP', createdAt: '2026-11-26T02:37:19.534Z' },
];

/** A few changes after the backup: one rule removed, one replaced, one added. */
async function changeAfterBackup(env: Record<string, string>): Promise<void> {
  await ok(['list', 'remove', '+33162*'], env);
  await ok(['list', 'add', '+33612345678', '--list', 'block', '--label', 'Changed'], env);
  await ok(['list', 'add', '+33199*', '--list', 'block'], env);
}

const WRONG_FILES: Array<[string, string, RegExp]> = [
  [
    'a CSV export',
    'rule,list,label,note,expiresAt,labelPublic\n+33199*,block,,,,\n',
    /: not a phone-reputation-backup file \(it is not JSON\); nothing was restored/,
  ],
  [
    'another format',
    JSON.stringify({ format: 'other-backup', version: 1, lists: { rules: [] } }),
    /: not a phone-reputation-backup file \(its format is "other-backup"\); nothing was restored/,
  ],
  [
    'a later version',
    JSON.stringify({
      format: 'phone-reputation-backup',
      version: 4,
      createdAt: '2030-01-01T00:00:00Z',
      lists: { rules: [] },
    }),
    /of version 4; this phone-rep restores versions 1, 2 and 3; nothing was restored/,
  ],
];

// Every run loads the numbering plan: tens of seconds for a handful of runs on a loaded machine.
describe('phone-rep backup and restore on the lists file', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-backup-'));
  const env = { LISTS_FILE: join(dir, 'lists.csv') };
  const backupFile = join(dir, 'backup.json');

  it('round-trips every rule with every field, replacing the rules changed since', async () => {
    writeFileSync(env.LISTS_FILE, LISTS_FILE_TEXT);
    const made = await ok(['backup', backupFile], env);
    expect(made.stderr).toMatch(
      /^backed up 5 rules \(file .*lists\.csv\), 0 tokens \(file .*tokens\.json\), 0 votes \(file .*reports\.jsonl\), 0 dismissals \(file .*reports-dismissed\.json\) to .*backup\.json\n$/,
    );
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    const backup = JSON.parse(readFileSync(backupFile, 'utf8')) as Record<string, unknown>;
    expect(backup).toMatchObject({
      format: 'phone-reputation-backup',
      version: 3,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(rulesOf(readFileSync(backupFile, 'utf8'))).toEqual(EXPECTED);

    await changeAfterBackup(env);
    const restored = await ok(['restore', backupFile], env);
    expect(restored.stdout).toMatch(
      /^restored 5 rules from the backup of .*, replacing the 5 held \(file .*lists\.csv\)\nrestored 0 tokens, replacing the 0 held \(file .*tokens\.json\)\nrestored 0 votes, replacing the 0 held; 0 past REPORT_RETENTION_DAYS left out \(file .*reports\.jsonl\)\nrestored 0 dismissals, replacing the 0 held; 0 past REPORT_RETENTION_DAYS left out \(file .*reports-dismissed\.json\)\n$/,
    );
    // Without FILE, the backup goes to stdout: the rules are the first backup's, exactly.
    expect(rulesOf((await ok(['backup'], env)).stdout)).toEqual(EXPECTED);
    expect((await ok(['list', 'check', '0162001234'], env)).stdout).toMatch(/block by rule \+33162\*/);
  });

  it.each(WRONG_FILES)('refuses %s and changes nothing', async (_what, text, message) => {
    const before = readFileSync(env.LISTS_FILE, 'utf8');
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, text);
    const refused = await run(['restore', wrong], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(message);
    expect(readFileSync(env.LISTS_FILE, 'utf8')).toBe(before);
  });
});

describe('phone-rep backup and restore on Redis', { timeout: 300_000 }, () => {
  let redis: OwnRedis;
  let admin: Redis;
  let env: Record<string, string>;
  let instance: TestServer | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'phone-rep-backup-redis-'));
  const backupFile = join(dir, 'backup.json');

  const startInstance = async (): Promise<TestServer> =>
    startTestServer({ env, overrides: { sources: healthyFakeSources() } });
  const served = async (server: TestServer): Promise<BackupRule[]> => {
    const response = await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: BEARER });
    return ((await response.json()) as BackupRule[]).sort((a, b) => (a.rule < b.rule ? -1 : 1));
  };
  const verdict = async (server: TestServer, number: string): Promise<string> =>
    (await fetch(`${server.baseUrl}/api/phone/${number}/verdict`)).text();
  /** The rules the instance holds, once they are `want` (it follows Redis' changes within a second). */
  async function expectServed(server: TestServer, want: BackupRule[]): Promise<void> {
    await waitFor(async () => JSON.stringify(await served(server)) === JSON.stringify(want), 10_000).catch(
      () => undefined,
    );
    expect(await served(server)).toEqual(want);
  }

  beforeAll(async () => {
    redis = await startOwnRedis({ persistent: false });
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    env = {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: 'phonerep:',
      HASH_SECRET: 'test-secret-0123456789',
      ADMIN_TOKEN: TOKEN,
      RATE_LIMIT_MAX: '0',
    };
    // The rules reach Redis as a restore of the file store's backup: the format is the same whatever the store.
    const seed = join(dir, 'seed.csv');
    writeFileSync(seed, LISTS_FILE_TEXT);
    await ok(['backup', join(dir, 'seed.json')], { LISTS_FILE: seed });
    await ok(['restore', join(dir, 'seed.json')], env);
    instance = await startInstance();
  });
  afterAll(async () => {
    await instance?.close();
    admin.disconnect();
    await redis.close();
  });

  it('round-trips every rule, and a running instance goes over to the restored rules', async () => {
    if (instance === undefined) throw new Error('no instance');
    await expectServed(instance, EXPECTED);
    const made = await ok(['backup', backupFile], env);
    expect(made.stderr).toMatch(
      /^backed up 5 rules \(Redis phonerep:\{lists\}:rules\), 0 tokens \(Redis phonerep:\{tokens\}:records\), 0 votes \(Redis phonerep:\{reports\}:n:\*\), 0 dismissals \(Redis phonerep:\{reports\}:dismissed\) to /,
    );
    expect(rulesOf(readFileSync(backupFile, 'utf8'))).toEqual(EXPECTED);

    await changeAfterBackup(env);
    const changed = async (): Promise<string[]> =>
      (await served(instance as TestServer)).map((rule) => `${rule.rule} ${rule.list}`);
    await waitFor(async () => (await changed()).includes('+33199* block'), 10_000).catch(() => undefined);
    expect(await changed()).toEqual([
      '+225* block',
      '+33163* block',
      '+33199* block',
      '+33612000001 allow',
      '+33612345678 block',
    ]);
    const versionBefore = Number(await admin.get('phonerep:{lists}:version'));
    const restored = await ok(['restore', backupFile], env);
    expect(restored.stdout).toMatch(/replacing the 5 held \(Redis phonerep:\{lists\}:rules\)\n/);
    // One change for the whole restore: every instance goes from the old rules to the new ones at once.
    expect(Number(await admin.get('phonerep:{lists}:version'))).toBe(versionBefore + 1);
    await expectServed(instance, EXPECTED);
    expect(await verdict(instance, '0162001234')).toBe('block\n');
    expect(await verdict(instance, '0612345678')).toBe('allow\n');
    expect(await admin.pttl('phonerep:{lists}:rules')).toBe(-1);
  });

  it('after a Redis loss, a restore brings every rule back and a started instance serves them', async () => {
    await instance?.close();
    instance = undefined;
    await admin.flushall();
    expect((await ok(['list', 'show'], env)).stderr).toMatch(/^0 rules \(Redis/);
    await ok(['restore', backupFile], env);
    expect(await admin.pttl('phonerep:{lists}:rules')).toBe(-1);
    instance = await startInstance();
    await expectServed(instance, EXPECTED);
    expect(await verdict(instance, '0162001234')).toBe('block\n');
    expect(await verdict(instance, encodeURIComponent('+2250707070707'))).toBe('block\n');
    expect(rulesOf((await ok(['backup'], env)).stdout)).toEqual(EXPECTED);
  });

  it.each(WRONG_FILES)('refuses %s and changes nothing', async (_what, text, message) => {
    const before = {
      version: await admin.get('phonerep:{lists}:version'),
      rules: await admin.hgetall('phonerep:{lists}:rules'),
    };
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, text);
    const refused = await run(['restore', wrong], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(message);
    expect({
      version: await admin.get('phonerep:{lists}:version'),
      rules: await admin.hgetall('phonerep:{lists}:rules'),
    }).toEqual(before);
  });
});
