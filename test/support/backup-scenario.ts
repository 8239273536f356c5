// `phone-rep backup` and `phone-rep restore` in-process (runCli) on the stores `env` names (the
// files beside LISTS_FILE, or Redis), with a running instance's stores following them: the
// scenarios shared by the file and the Redis tests of src/cli/commands/*backup.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { listsLocationOf, loadConfig } from '../../src/config/config.js';
import { reportSettingsOf } from '../../src/composition.js';
import type { ReportVote } from '../../src/domain/ports/caller-reports.js';
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
  close(): Promise<void>;
}

export async function openInstance(env: Record<string, string>, watch = true): Promise<Instance> {
  const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', ...env });
  const tokens = await openTokenStore(listsLocationOf(config), { watch });
  const reports = await openReportStore(listsLocationOf(config), { settings: reportSettingsOf(config), watch });
  return {
    tokens,
    reports,
    close: async () => {
      await reports.close();
      await tokens.close();
    },
  };
}

const byKey = (votes: ReportVote[]): ReportVote[] =>
  [...votes].sort((a, b) => (`${a.e164} ${a.tokenId}` < `${b.e164} ${b.tokenId}` ? -1 : 1));

async function createToken(env: Record<string, string>, label: string): Promise<string> {
  const [secret = ''] = (await ok(['token', 'create', '--label', label], env)).out;
  return secret;
}

/**
 * A backup then a restore puts back the tokens (a secret given before the backup works again,
 * one made since does not) and the votes, replacing what changed since; the running instance
 * goes over to them. Leaves the backup in `backupFile` for the scenarios below.
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

    const made = await ok(['backup', backupFile], env);
    expect(made.err.join('\n')).toMatch(/^backed up 0 rules \(.*\), 2 tokens \(.*\), 3 votes \(.*\) to /);
    const text = readFileSync(backupFile, 'utf8');
    const file = JSON.parse(text) as { version: number; tokens: Array<Record<string, string>>; reports: unknown[] };
    expect(file.version).toBe(2);
    expect(file.tokens.map((token) => token.hash)).toEqual([
      expect.stringMatching(/^[0-9a-f]{64}$/),
      expect.stringMatching(/^[0-9a-f]{64}$/),
    ]);
    for (const secret of [kitchen, pbx]) expect(text).not.toContain(secret);
    expect(file.reports).toHaveLength(3);
    await instance.tokens.refresh();
    const tokensBackedUp = instance.tokens.storedTokens();
    expect(tokensBackedUp.find((token) => token.id === pbxId)?.revokedAt).toEqual(expect.any(String));

    // Changes after the backup: the kitchen's token revoked, a new one made, a vote replaced, one added.
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

    const restored = await ok(['restore', backupFile], env);
    expect(restored.out[1]).toMatch(/^restored 2 tokens, replacing the 3 held \(/);
    expect(restored.out[2]).toMatch(
      /^restored 3 votes, replacing the 4 held; 0 past REPORT_RETENTION_DAYS left out \(/,
    );

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

/** A vote past REPORT_RETENTION_DAYS at restore time is left out (the backup kept it past its time). */
export async function expectExpiredVotesDropped(env: Record<string, string>, backupFile: string): Promise<void> {
  const file = JSON.parse(readFileSync(backupFile, 'utf8')) as { reports: Array<Record<string, unknown>> };
  const [first] = file.reports;
  const old = { ...first, e164: '+33612999999', at: new Date(Date.now() - 181 * DAY_MS).toISOString() };
  const edited = `${backupFile}.old-vote.json`;
  writeFileSync(edited, JSON.stringify({ ...file, reports: [...file.reports, old] }));
  const restored = await ok(['restore', edited], env);
  expect(restored.out[2]).toMatch(/^restored 3 votes, replacing the 3 held; 1 past REPORT_RETENTION_DAYS left out \(/);
  const instance = await openInstance(env, false);
  try {
    expect(instance.reports.votes('+33612999999')).toEqual([]);
    expect(instance.reports.allVotes()).toHaveLength(3);
  } finally {
    await instance.close();
  }
}

/** A backup of version 1 (lists only) restores the lists and leaves the tokens and votes as they are. */
export async function expectVersionOneRestores(env: Record<string, string>, dir: string): Promise<void> {
  const before = await openInstance(env, false);
  const tokens = before.tokens.storedTokens();
  const votes = byKey(before.reports.allVotes());
  await before.close();
  expect(tokens.length).toBeGreaterThan(0);
  expect(votes.length).toBeGreaterThan(0);
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
  ]);
  expect((await ok(['list', 'check', '0162001234'], env)).out.join('\n')).toMatch(/block by rule \+33162\*/);
  const after = await openInstance(env, false);
  try {
    expect(after.tokens.storedTokens()).toEqual(tokens);
    expect(byKey(after.reports.allVotes())).toEqual(votes);
  } finally {
    await after.close();
  }
}
