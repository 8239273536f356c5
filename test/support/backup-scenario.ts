// `phone-rep backup` and `phone-rep restore` in-process (runCli) on the stores `env` names (the
// files beside LISTS_FILE, or Redis), with a running instance's stores following them (and its
// dismissals, read from the store on every use as the console does): the scenarios shared by the
// file and the Redis tests of src/cli/commands/*backup.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { listsLocationOf, loadConfig } from '../../src/config/config.js';
import { reportSettingsOf } from '../../src/composition.js';
import type { ReportVote } from '../../src/domain/ports/caller-reports.js';
import { openOnRedis } from '../../src/infra/lists/open-list-store.js';
import type { RedisClient } from '../../src/infra/redis/redis-client.js';
import { openReportDismissals, type ReportDismissals } from '../../src/infra/reports/report-dismissals.js';
import { openReportStore, type ReportStore } from '../../src/infra/reports/report-store.js';
import { openTokenStore, type TokenStore } from '../../src/infra/reports/token-store.js';
import type { CliIo } from '../../src/cli/command.js';
import { runCli } from '../../src/cli/main.js';
import { waitFor } from './redis.js';

const DAY_MS = 86_400_000;

export interface Ran {
  code: number;
  out: string[];
  err: string[];
}

export async function cli(args: string[], env: Record<string, string>): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (line) => out.push(line), err: (line) => err.push(line), env };
  const code = await runCli(args, io);
  return { code, out, err };
}

export async function ok(args: string[], env: Record<string, string>): Promise<Ran> {
  const ran = await cli(args, env);
  expect(ran.code, ran.err.join('\n')).toBe(0);
  return ran;
}

/** The stores `env` names, as a running instance opens them (following changes made elsewhere). */
export interface Instance {
  tokens: TokenStore;
  reports: ReportStore;
  dismissals: ReportDismissals;
  close(): Promise<void>;
}

export async function openInstance(env: Record<string, string>, watch = true): Promise<Instance> {
  const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', ...env });
  const location = listsLocationOf(config);
  const tokens = await openTokenStore(location, { watch });
  const reports = await openReportStore(location, { settings: reportSettingsOf(config), watch });
  // The service gives the dismissals its shared client; here, one of the instance's own.
  const client: RedisClient | undefined =
    location.redis === undefined
      ? undefined
      : await openOnRedis(location.redis, location, undefined, (opened) => Promise.resolve(opened));
  const dismissals = openReportDismissals(location, {
    retentionDays: config.REPORT_RETENTION_DAYS,
    ...(client === undefined ? {} : { redisClient: client }),
  });
  expect(dismissals.kind).toBe(location.redis === undefined ? 'file' : 'redis');
  return {
    tokens,
    reports,
    dismissals,
    close: async () => {
      await client?.quit();
      await reports.close();
      await tokens.close();
    },
  };
}

/** The dismissals in force now, E.164 → ISO 8601. */
async function dismissalsOf(instance: Instance): Promise<Record<string, string>> {
  const marks = [...(await instance.dismissals.read(Date.now()))].sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(marks.map(([e164, at]) => [e164, new Date(at).toISOString()]));
}

const byKey = (votes: ReportVote[]): ReportVote[] =>
  [...votes].sort((a, b) => (`${a.e164} ${a.tokenId}` < `${b.e164} ${b.tokenId}` ? -1 : 1));

async function createToken(env: Record<string, string>, label: string): Promise<string> {
  const [secret = ''] = (await ok(['token', 'create', '--label', label], env)).out;
  return secret;
}

/**
 * A backup then a restore puts back the tokens (a secret given before the backup works again,
 * one made since does not), the votes and the operator's dismissals, replacing what changed
 * since; the running instance goes over to them. Leaves the backup in `backupFile` for the
 * scenarios below.
 */
export async function expectRoundTrip(env: Record<string, string>, backupFile: string): Promise<void> {
  const instance = await openInstance(env);
  try {
    const kitchen = await createToken(env, 'Kitchen phone');
    const pbx = await createToken(env, 'Office PBX');
    const now = Date.now();
    await instance.tokens.refresh();
    const kitchenId = (await instance.tokens.authenticate(kitchen))?.id ?? 'none';
    const pbxId = (await instance.tokens.authenticate(pbx))?.id ?? 'none';
    expect([kitchenId, pbxId]).toEqual([expect.stringMatching(/^tok_/), expect.stringMatching(/^tok_/)]);
    // The uses just noted are written before the CLI reads the store.
    await instance.tokens.refresh();
    await ok(['token', 'revoke', pbxId], env);
    const votes: ReportVote[] = [
      { e164: '+33612345678', tokenId: kitchenId, rating: 'fraud', at: now - 3 * DAY_MS, comment: 'faux conseiller' },
      { e164: '+33612345678', tokenId: pbxId, rating: 'advertising', at: now - DAY_MS },
      { e164: '+33162000001', tokenId: kitchenId, rating: 'legitimate', at: now },
    ];
    for (const vote of votes) expect((await instance.reports.record(vote)).ok).toBe(true);
    // The operator reviewed the number with two votes and took it out of the review.
    await instance.dismissals.dismiss('+33612345678', now);
    const dismissedBackedUp = { '+33612345678': new Date(now).toISOString() };

    const made = await ok(['backup', backupFile], env);
    expect(made.err.join('\n')).toMatch(
      /^backed up 0 rules \(.*\), 2 tokens \(.*\), 3 votes \(.*\), 1 dismissal \((file .*reports-dismissed\.json|Redis .*\{reports\}:dismissed)\) to /,
    );
    const text = readFileSync(backupFile, 'utf8');
    const file = JSON.parse(text) as {
      version: number;
      tokens: Array<Record<string, string>>;
      reports: unknown[];
      dismissals: unknown[];
    };
    expect(file.version).toBe(3);
    expect(file.dismissals).toEqual([{ e164: '+33612345678', at: new Date(now).toISOString() }]);
    expect(file.tokens.map((token) => token.hash)).toEqual([
      expect.stringMatching(/^[0-9a-f]{64}$/),
      expect.stringMatching(/^[0-9a-f]{64}$/),
    ]);
    for (const secret of [kitchen, pbx]) expect(text).not.toContain(secret);
    expect(file.reports).toHaveLength(3);
    await instance.tokens.refresh();
    const tokensBackedUp = instance.tokens.storedTokens();
    expect(tokensBackedUp.find((token) => token.id === pbxId)?.revokedAt).toEqual(expect.any(String));

    // Changes after the backup: the kitchen's token revoked, a new one made, a vote replaced, one
    // added, the dismissed number put back in review and another dismissed.
    await ok(['token', 'revoke', kitchenId], env);
    const later = await createToken(env, 'Later phone');
    await instance.tokens.refresh();
    const laterToken = await instance.tokens.authenticate(later);
    expect(laterToken).not.toBeNull();
    expect((await instance.reports.record({ ...votes[2], rating: 'fraud', at: now } as ReportVote)).ok).toBe(true);
    expect(
      (await instance.reports.record({ e164: '+33612000002', tokenId: laterToken?.id ?? '', rating: 'ping', at: now }))
        .ok,
    ).toBe(true);
    expect(await instance.dismissals.undismiss('+33612345678', Date.now())).toBe(true);
    await instance.dismissals.dismiss('+33612000002', Date.now());
    expect(Object.keys(await dismissalsOf(instance))).toEqual(['+33612000002']);

    const restored = await ok(['restore', backupFile], env);
    expect(restored.out[1]).toMatch(/^restored 2 tokens, replacing the 3 held \(/);
    expect(restored.out[2]).toMatch(
      /^restored 3 votes, replacing the 4 held; 0 past REPORT_RETENTION_DAYS left out \(/,
    );
    expect(restored.out[3]).toMatch(
      /^restored 1 dismissal, replacing the 1 held; 0 past REPORT_RETENTION_DAYS left out \(/,
    );
    // The number dismissed before the backup is out of the review again, at its time; the one
    // dismissed since is back in it.
    expect(await dismissalsOf(instance)).toEqual(dismissedBackedUp);

    // The running instance goes over to the restored tokens and votes (it follows the store).
    await waitFor(() => JSON.stringify(byKey(instance.reports.allVotes())) === JSON.stringify(byKey(votes)));
    await waitFor(() => instance.tokens.list().length === 2);
    expect(byKey(instance.reports.allVotes())).toEqual(byKey(votes));
    expect(instance.tokens.storedTokens()).toEqual(tokensBackedUp);
    // Phones keep their secrets: the kitchen's works again, the one made after the backup does not.
    expect(await instance.tokens.authenticate(kitchen)).toMatchObject({ id: kitchenId, label: 'Kitchen phone' });
    expect(await instance.tokens.authenticate(pbx)).toBeNull();
    expect(await instance.tokens.authenticate(later)).toBeNull();
    // And so does a store opened afresh (what a restarted instance reads).
    const fresh = await openInstance(env, false);
    try {
      expect(byKey(fresh.reports.allVotes())).toEqual(byKey(votes));
      expect(fresh.tokens.storedTokens()).toEqual(tokensBackedUp);
    } finally {
      await fresh.close();
    }
  } finally {
    await instance.close();
  }
}

/**
 * A vote or a dismissal past REPORT_RETENTION_DAYS at restore time is left out (the backup kept
 * it past its time).
 */
export async function expectExpiredVotesDropped(env: Record<string, string>, backupFile: string): Promise<void> {
  const file = JSON.parse(readFileSync(backupFile, 'utf8')) as {
    reports: Array<Record<string, unknown>>;
    dismissals: unknown[];
  };
  const [first] = file.reports;
  const longAgo = new Date(Date.now() - 181 * DAY_MS).toISOString();
  const old = { ...first, e164: '+33612999999', at: longAgo };
  const edited = `${backupFile}.old-vote.json`;
  writeFileSync(
    edited,
    JSON.stringify({
      ...file,
      reports: [...file.reports, old],
      dismissals: [...file.dismissals, { e164: '+33612999999', at: longAgo }],
    }),
  );
  const restored = await ok(['restore', edited], env);
  expect(restored.out[2]).toMatch(/^restored 3 votes, replacing the 3 held; 1 past REPORT_RETENTION_DAYS left out \(/);
  expect(restored.out[3]).toMatch(
    /^restored 1 dismissal, replacing the 1 held; 1 past REPORT_RETENTION_DAYS left out \(/,
  );
  const instance = await openInstance(env, false);
  try {
    expect(instance.reports.votes('+33612999999')).toEqual([]);
    expect(instance.reports.allVotes()).toHaveLength(3);
    expect(Object.keys(await dismissalsOf(instance))).toEqual(['+33612345678']);
  } finally {
    await instance.close();
  }
}

/**
 * A backup of version 1 (lists only) restores the lists and leaves the tokens, votes and
 * dismissals as they are.
 */
export async function expectVersionOneRestores(env: Record<string, string>, dir: string): Promise<void> {
  const before = await openInstance(env, false);
  const tokens = before.tokens.storedTokens();
  const votes = byKey(before.reports.allVotes());
  const dismissed = await dismissalsOf(before);
  await before.close();
  expect(tokens.length).toBeGreaterThan(0);
  expect(votes.length).toBeGreaterThan(0);
  expect(Object.keys(dismissed).length).toBeGreaterThan(0);
  const oldFile = `${dir}/version-1.json`;
  writeFileSync(
    oldFile,
    `${JSON.stringify(
      {
        format: 'phone-reputation-backup',
        version: 1,
        createdAt: '2026-11-28T09:00:00.000Z',
        lists: { rules: [{ rule: '+33162*', list: 'block', label: 'NPV', createdAt: '2026-11-26T02:36:57.950Z' }] },
      },
      null,
      2,
    )}\n`,
  );
  const restored = await ok(['restore', oldFile], env);
  expect(restored.out).toEqual([
    expect.stringMatching(/^restored 1 rule from the backup of 2026-11-28T09:00:00.000Z, replacing the 0 held \(/),
    'the backup holds no tokens (a file of version 1): the tokens held are left as they are',
    'the backup holds no votes (a file of version 1): the votes held are left as they are',
    'the backup holds no dismissals (a file of version 1 or 2): the dismissals held are left as they are',
  ]);
  expect((await ok(['list', 'check', '0162001234'], env)).out.join('\n')).toMatch(/block by rule \+33162\*/);
  const after = await openInstance(env, false);
  try {
    expect(after.tokens.storedTokens()).toEqual(tokens);
    expect(byKey(after.reports.allVotes())).toEqual(votes);
    expect(await dismissalsOf(after)).toEqual(dismissed);
  } finally {
    await after.close();
  }
}

/**
 * A backup of version 2 (made before the dismissals were backed up) restores the lists, tokens
 * and votes and leaves the dismissals as they are: here, one made after the backup stays.
 */
export async function expectVersionTwoRestores(env: Record<string, string>, backupFile: string): Promise<void> {
  const { dismissals: _dropped, ...versionTwo } = JSON.parse(readFileSync(backupFile, 'utf8')) as Record<
    string,
    unknown
  >;
  const oldFile = `${backupFile}.version-2.json`;
  writeFileSync(oldFile, JSON.stringify({ ...versionTwo, version: 2 }));
  const instance = await openInstance(env, false);
  try {
    await instance.dismissals.dismiss('+33162000001', Date.now());
    const dismissed = await dismissalsOf(instance);
    expect(Object.keys(dismissed)).toEqual(['+33162000001', '+33612345678']);
    const restored = await ok(['restore', oldFile], env);
    expect(restored.out).toEqual([
      expect.stringMatching(/^restored 0 rules from the backup of /),
      expect.stringMatching(/^restored 2 tokens, replacing the 2 held \(/),
      expect.stringMatching(/^restored 3 votes, replacing the 3 held; 0 past REPORT_RETENTION_DAYS left out \(/),
      'the backup holds no dismissals (a file of version 1 or 2): the dismissals held are left as they are',
    ]);
    expect(await dismissalsOf(instance)).toEqual(dismissed);
  } finally {
    await instance.close();
  }
}

/**
 * A file with one bad dismissal is refused whole (exit 2), before any store is touched: the
 * rules, tokens, votes and dismissals are as they were, though the file's other sections differ.
 */
export async function expectBadDismissalRefused(env: Record<string, string>, backupFile: string): Promise<void> {
  const file = JSON.parse(readFileSync(backupFile, 'utf8')) as Record<string, unknown>;
  const bad = `${backupFile}.bad-dismissal.json`;
  writeFileSync(
    bad,
    JSON.stringify({
      ...file,
      lists: { rules: [{ rule: '+33199*', list: 'block', createdAt: '2026-11-28T09:00:00.000Z' }] },
      tokens: [],
      reports: [],
      dismissals: [
        { e164: '+33612000003', at: new Date().toISOString() },
        { e164: '0612000004', at: new Date().toISOString() },
      ],
    }),
  );
  const snapshot = async (): Promise<unknown> => {
    const instance = await openInstance(env, false);
    try {
      return {
        rules: (await ok(['list', 'export'], env)).out,
        tokens: instance.tokens.storedTokens(),
        votes: byKey(instance.reports.allVotes()),
        dismissals: await dismissalsOf(instance),
      };
    } finally {
      await instance.close();
    }
  };
  const before = await snapshot();
  expect(before).toMatchObject({ tokens: expect.arrayContaining([expect.anything()]) });
  const refused = await cli(['restore', bad], env);
  expect(refused.code).toBe(2);
  expect(refused.err.join('\n')).toMatch(/: dismissals\[1\]\.e164 is not a number in E\.164; nothing was restored/);
  expect(refused.out).toEqual([]);
  expect(await snapshot()).toEqual(before);
}
