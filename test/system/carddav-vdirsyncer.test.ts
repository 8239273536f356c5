// A real CardDAV client, Debian's vdirsyncer, syncs the blocklist address book into a folder:
// every card it stores is vCard 3.0, the numbers are exactly the feed's, a second sync with
// nothing changed copies nothing, and a rule added in between arrives with the next sync.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { InMemoryOperatorLists } from '../../harness/operator-lists.js';
import { scoredSources } from '../../harness/scored-sources.js';
import type { BlocklistFeed } from '../../src/infra/blocklist/blocklist-feed.js';

const run = promisify(execFile);
const VDIRSYNCER = '/usr/bin/vdirsyncer';
const PASSWORD = 'vdirsyncer password';

/** vdirsyncer with the test's config; its log (stderr at INFO) and output together. */
async function vdirsyncer(config: string, ...args: string[]): Promise<string> {
  const { stdout, stderr } = await run(VDIRSYNCER, ['-c', config, '-v', 'INFO', ...args], {
    timeout: 30_000,
    env: { ...process.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' },
  });
  return `${stdout}\n${stderr}`;
}

/** A vCard's content lines, unfolded (RFC 2426 §2.6; vdirsyncer stores them with its own line endings). */
function unfold(card: string): string[] {
  return card
    .replace(/\r?\n[ \t]/g, '')
    .split(/\r?\n/)
    .filter((line) => line !== '');
}

interface StoredCard {
  version: string | undefined;
  uid: string | undefined;
  fn: string | undefined;
  categories: string | undefined;
  tels: string[];
}

function parseVcard3(text: string): StoredCard {
  const lines = unfold(text);
  expect(lines[0]).toBe('BEGIN:VCARD');
  expect(lines[lines.length - 1]).toBe('END:VCARD');
  const value = (name: string): string | undefined =>
    lines.find((line) => line.split(/[;:]/)[0] === name)?.replace(/^[^:]*:/, '');
  for (const line of lines) expect(line, 'a content line is NAME[;params]:value').toMatch(/^[A-Z-]+(;[^:]*)?:.*$/);
  return {
    version: value('VERSION'),
    uid: value('UID'),
    fn: value('FN'),
    categories: value('CATEGORIES'),
    tels: lines.filter((line) => line.startsWith('TEL')).map((line) => line.replace(/^[^:]*:/, '')),
  };
}

async function storedCards(folder: string): Promise<StoredCard[]> {
  const names = (await readdir(folder)).filter((name) => name.endsWith('.vcf'));
  return Promise.all(names.map(async (name) => parseVcard3(await readFile(join(folder, name), 'utf8'))));
}

const feedTels = (feed: BlocklistFeed): string[] =>
  feed
    .snapshot()
    .entries.map((entry) => `+${entry.digits}${entry.wildcard ? '*' : ''}`)
    .sort();

describe('the blocklist address book, synced by vdirsyncer', () => {
  const lists = new InMemoryOperatorLists([
    { rule: '+33170*', list: 'block', label: 'Plateforme' },
    { rule: '+33170000001', list: 'allow' },
    { rule: '+33612345678', list: 'block', label: 'Arnaque; CPF, relances' },
  ]);
  let server: TestServer;
  let feed: BlocklistFeed;
  let directory: string;
  let config: string;
  let cards: string;

  beforeAll(async () => {
    server = await startTestServer({
      // The test's own lookups are recorded (FEED_RECORD_FROM: docs/integrations/blocklist-feed.md).
      env: { FEED_PASSWORD: PASSWORD, VERDICT_NPV: 'block', RATE_LIMIT_MAX: '0', FEED_RECORD_FROM: '127.0.0.1' },
      overrides: {
        sources: scoredSources({ '+33698765432': 8 }),
        operatorLists: lists,
        feedRefreshIntervalMs: 3_600_000,
      },
    });
    const built = server.deps.blocklistFeed;
    if (built === undefined) throw new Error('the feed is on with FEED_PASSWORD');
    feed = built;
    expect((await fetch(`${server.baseUrl}/api/phone/0698765432/verdict`)).status).toBe(200);
    await feed.refresh();
    directory = await mkdtemp(join(tmpdir(), 'phonerep-vdirsyncer-'));
    cards = join(directory, 'cards');
    config = join(directory, 'config');
    await writeFile(
      config,
      [
        '[general]',
        `status_path = "${join(directory, 'status')}/"`,
        '',
        '[pair blocklist]',
        'a = "blocklist_remote"',
        'b = "blocklist_local"',
        'collections = null',
        'conflict_resolution = "a wins"',
        '',
        '[storage blocklist_remote]',
        'type = "carddav"',
        `url = "${server.baseUrl}/carddav/blocklist/"`,
        'username = "blocklist"',
        `password = "${PASSWORD}"`,
        'read_only = true',
        '',
        '[storage blocklist_local]',
        'type = "filesystem"',
        `path = "${cards}/"`,
        'fileext = ".vcf"',
        '',
      ].join('\n'),
    );
    await run('mkdir', ['-p', cards]);
    await vdirsyncer(config, 'discover');
  });
  afterAll(async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('stores every card as vCard 3.0 with exactly the feed’s numbers, copies nothing again when nothing changed, and picks up an added rule', async () => {
    const first = await vdirsyncer(config, 'sync');
    expect(first).toMatch(/Copying \(uploading\) item \S+ to blocklist_local/);
    const stored = await storedCards(cards);
    expect(stored).toHaveLength(feed.snapshot().cards.length);
    for (const card of stored) {
      expect(card.version).toBe('3.0');
      expect(card.categories).toBe('SPAM');
      expect(card.fn).not.toBe('');
      expect(card.uid).toMatch(/^pr-/);
      expect(card.tels.length).toBeGreaterThan(0);
      expect(card.tels.length).toBeLessThanOrEqual(9);
    }
    expect(stored.flatMap((card) => card.tels).sort()).toEqual(feedTels(feed));
    expect(stored.some((card) => card.fn === 'Arnaque\\; CPF\\, relances')).toBe(true);

    const second = await vdirsyncer(config, 'sync');
    expect(second).not.toMatch(/Copying|Updating|Deleting/);

    lists.add({ rule: '+33699000000', list: 'block', label: 'Ajouté entre deux' });
    await feed.refresh();
    const third = await vdirsyncer(config, 'sync');
    expect(third).toMatch(/(Copying \(uploading\)|Updating) item \S+ to blocklist_local/);
    const after = (await storedCards(cards)).flatMap((card) => card.tels).sort();
    expect(after).toContain('+33699000000');
    expect(after).toEqual(feedTels(feed));
  });
});
