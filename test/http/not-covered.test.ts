// A number a source does not cover, through the real app and the real adapters over HTTP
// (issue 20, "a source that was not asked says so"): every such slot says
// `{"status": "skipped", "reason": "not_covered"}`, no upstream site is asked, and nothing is
// written to any cache (the per-slot cache, Redis, the front cache) for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CachedSourceResult, SourceResultCache } from '../../src/domain/ports/source-cache.js';
import { fetchDocumented } from '../support/contracts.js';
import { connectAdmin, deleteKeys, listKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

const SKIPPED = { status: 'skipped', reason: 'not_covered' };
// A US, a UK and a Belgian number (each valid for libphonenumber), none of the French plan.
const FOREIGN = ['+12024561111', '+447911123456', '+32470000000'];

interface Answer {
  status: number;
  headers: Headers;
  body: {
    data: { score?: number | null; risk?: string; sources?: Record<string, Record<string, unknown>> };
    meta: { sources: Record<string, unknown>; scoreSource?: string | null };
  };
}

async function get(server: TestServer, path: string): Promise<Answer> {
  const answer = await fetchDocumented(server, path);
  return { status: answer.status, headers: answer.headers, body: JSON.parse(answer.text) as Answer['body'] };
}

/** The engine's cache with every read and write recorded. */
function watching(log: { reads: string[]; writes: string[] }) {
  return (cache: SourceResultCache): SourceResultCache => ({
    get: (key) => (log.reads.push(key), cache.get(key)),
    set: (key: string, value: CachedSourceResult, ttl: number) => (log.writes.push(key), cache.set(key, value, ttl)),
    ...(cache.peek === undefined ? {} : { peek: (key: string) => (log.reads.push(key), cache.peek?.(key)) }),
  });
}

describe('a number no source covers (default config: no tellows key)', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  const log = { reads: [] as string[], writes: [] as string[] };
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({ scenarios: { '0612000777': KNOWN_NUMBER } });
    server = await startTestServer({
      env: { ...sites.env(), RATE_LIMIT_MAX: '0' },
      overrides: { decorateSourceCache: watching(log) },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it.each(FOREIGN)(
    'answers %s with 200, every slot skipped and empty, no site asked, no cache touched',
    async (number) => {
      for (const route of ['', '/score']) {
        const { status, headers, body } = await get(server, `/api/phone/${encodeURIComponent(number)}${route}`);
        expect(status).toBe(200);
        expect(body.meta.sources).toEqual({ primary: SKIPPED, community: SKIPPED, signals: SKIPPED });
        // Not held as fresh anywhere, so never served from a cache as if someone had been asked.
        expect(headers.get('cache-control')).toBe('no-store');
        expect(headers.get('etag')).toBeNull();
        if (route === '/score') {
          expect(body.data).toMatchObject({ score: null, risk: 'unknown' });
          expect(body.meta.scoreSource).toBeNull();
        } else {
          expect(body.data.sources?.primary).toEqual({ score: null, searches: 0, commentsCount: 0, commentList: [] });
          expect(body.data.sources?.community).toMatchObject({ dangerPercent: null, visits: null, commentList: [] });
          expect(body.data.sources?.signals).toMatchObject({ spamScore: null, reportsCount: null, commentList: [] });
        }
      }
      expect(sites.total()).toBe(0);
      expect(log.reads).toEqual([]);
      expect(log.writes).toEqual([]);
    },
  );

  it.each(FOREIGN)(
    'says on /cid that %s was not checked because no source covers it, in both languages',
    async (number) => {
      for (const [query, line] of [
        ['', 'Non vérifié (étranger)'],
        ['?lang=en', 'Not checked (foreign)'],
      ] as const) {
        const answer = await fetchDocumented(server, `/api/phone/${encodeURIComponent(number)}/cid${query}`);
        expect(answer.status).toBe(200);
        expect(answer.text).toBe(line);
      }
      expect(sites.total()).toBe(0);
    },
  );

  it('still asks and caches a French number as usual', async () => {
    const victim = await get(server, '/api/phone/0612000777/score');
    expect(victim.status).toBe(200);
    expect(victim.body.data).toMatchObject({ score: 8, risk: 'suspicious' });
    expect(victim.body.meta.sources).toMatchObject({
      primary: { status: 'ok' },
      community: { status: 'ok' },
      signals: { status: 'ok' },
    });
    // The control: this test would see a write.
    expect(log.writes.length).toBeGreaterThanOrEqual(3);
    expect(sites.count('tellowsWeb')).toBe(1);
  });
});

describe('a foreign number with a tellows key: only tellows covers it', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  const log = { reads: [] as string[], writes: [] as string[] };
  beforeAll(async () => {
    sites = await startFakeUpstreamSites();
    server = await startTestServer({
      env: { ...sites.env(), RATE_LIMIT_MAX: '0', TELLOWS_API_KEY: 'test-key' },
      overrides: { decorateSourceCache: watching(log) },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('asks the tellows API alone, caches only its slot, and the others say skipped', async () => {
    const { status, body } = await get(server, '/api/phone/%2B12024561111');
    expect(status).toBe(200);
    expect(body.meta.sources.primary).toMatchObject({ status: 'not_found', cache: 'miss' });
    expect(body.meta.sources.community).toEqual(SKIPPED);
    expect(body.meta.sources.signals).toEqual(SKIPPED);
    expect(sites.count('tellowsApi')).toBe(1);
    expect(sites.count('numeroinconnu') + sites.count('telguarder') + sites.count('tellowsWeb')).toBe(0);
    expect(log.writes).toHaveLength(1);
    expect(log.writes[0]).toContain(':primary:');
    // One read of the one covered slot: the others are neither read nor peeked.
    expect(log.reads).toHaveLength(1);
    expect(log.reads[0]).toContain(':primary:');
  });
});

describe('a number no source covers, with Redis', () => {
  const prefix = uniqueKeyPrefix('not-covered');
  const admin = connectAdmin();
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites();
    server = await startTestServer({
      env: { ...sites.env(), RATE_LIMIT_MAX: '0', REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix },
    });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('writes no key under the prefix, and a French number right after does', async () => {
    // The operator lists' keys are written when the instance starts, not by a lookup.
    const atStart = (await listKeys(admin, prefix)).sort();
    expect(atStart.every((key) => key.startsWith(`${prefix}{lists}:`))).toBe(true);
    for (const number of FOREIGN) {
      const { status, body } = await get(server, `/api/phone/${encodeURIComponent(number)}`);
      expect(status).toBe(200);
      expect(body.meta.sources).toEqual({ primary: SKIPPED, community: SKIPPED, signals: SKIPPED });
    }
    expect((await listKeys(admin, prefix)).sort()).toEqual(atStart);
    expect(sites.total()).toBe(0);
    // The control: a covered number's slots do reach Redis under this prefix.
    await get(server, '/api/phone/0612000778');
    await waitFor(async () => (await listKeys(admin, `${prefix}cache:`)).length >= 3);
  });
});
