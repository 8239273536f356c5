// Issue 20, item 6 (cases a, b and e) seen through the whole service: the real app with the real
// adapters, HTTP client and engine, asked over real HTTP, with loopback sites speaking each
// site's real format (the adapters' own fixture pages, one value altered at a time).
// - 6a: a value out of its range (danger 1000, visits -7, comments 1e3, 20-digit searches, a
//   reports count that is no count) ends that slot as error(parse), or error(invalid_json) in the
//   tellows API, with the slot's empty fields, the other slots ok, and nothing of it cached.
// - 6b: a redirect to another port of the same host, https or http, ends as error(redirect)
//   without a connection to that port.
// - 6e: a 1 MiB page of deeply nested tags ends as error(parse), the other slots ok.
// The parsers' and the HTTP client's unit tests cover the same rules value by value.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CachedSourceResult, SourceResultCache } from '../../src/domain/ports/source-cache.js';
import { emptySourceData, SOURCE_SLOTS, type SourceSlot } from '../../src/domain/report.js';
import { fetchDocumented } from '../support/contracts.js';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { fixtureText, type Site } from '../../harness/upstream-sites.js';
import { waitUntilServing } from './support/answers.js';

const SLOTS: readonly SourceSlot[] = SOURCE_SLOTS;

/** Each site's "known number" fixture: what the site serves unless a test alters it. */
const NORMAL_FIXTURES: Record<Site, string> = {
  tellowsApi: 'api-normal.json',
  tellowsWeb: 'page-normal.html',
  numeroinconnu: 'normal.html',
  telguarder: 'normal.html',
};

const normalPage = (site: Site): string => fixtureText(site, NORMAL_FIXTURES[site]);

/** The fixture page with exactly one piece replaced; fails if the piece is not in it (the test would prove nothing). */
function altered(site: Site, from: string, to: string): string {
  const page = normalPage(site);
  const at = page.indexOf(from);
  if (at < 0 || page.indexOf(from, at + 1) >= 0)
    throw new Error(`${site} fixture holds "${from}" ${at < 0 ? 'nowhere' : 'more than once'}`);
  return page.slice(0, at) + to + page.slice(at + from.length);
}

interface Sites extends LoopbackServer {
  /** The page each site serves for every number, changeable between lookups. */
  pages: Record<Site, string>;
  count(site: Site): number;
}

// The three sites on one loopback server, routed as harness/upstream-sites.ts routes them
// (telguarder's search POST answers a 302 to the number's page), serving whatever page the test
// set. Bytes are served as the fixture file holds them (fixtureText reads Latin-1, one byte a char).
async function startSites(): Promise<Sites> {
  const pages: Record<Site, string> = {
    tellowsApi: normalPage('tellowsApi'),
    tellowsWeb: normalPage('tellowsWeb'),
    numeroinconnu: normalPage('numeroinconnu'),
    telguarder: normalPage('telguarder'),
  };
  const counts: Record<Site, number> = { tellowsApi: 0, tellowsWeb: 0, numeroinconnu: 0, telguarder: 0 };
  const serve = (site: Site, response: Parameters<LoopbackHandler>[1]): void => {
    counts[site] += 1;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(Buffer.from(pages[site], 'latin1'));
  };
  const server = await startLoopbackServer((request, response) => {
    const path = request.url.split('?')[0] ?? '';
    if (request.method === 'POST' && path === '/fr/search') {
      const digits = new URLSearchParams(request.body).get('q') ?? '';
      response.writeHead(302, { location: `/fr/numero/${encodeURIComponent(digits)}` }).end();
    } else if (/^\/fr\/numero\/[^/]+$/.test(path)) serve('telguarder', response);
    else if (/^\/basic\/num\/[^/]+$/.test(path)) serve('tellowsApi', response);
    else if (/^\/num\/[^/]+$/.test(path)) serve('tellowsWeb', response);
    else if (/^\/numero\/[^/]+$/.test(path)) serve('numeroinconnu', response);
    else response.writeHead(404).end();
  });
  return { ...server, pages, count: (site) => counts[site] };
}

interface SlotMeta {
  status: string;
  reason?: string;
}

interface Answer {
  status: number;
  body: {
    success: boolean;
    data: { sources: Record<SourceSlot, unknown> };
    meta: { sources: Record<SourceSlot, SlotMeta> };
  };
}

/** The engine's per-slot cache, with every key written and read recorded. */
interface WatchedCache {
  writes: string[];
  reads: string[];
  inner?: SourceResultCache;
}

function watching(watched: WatchedCache) {
  return (cache: SourceResultCache): SourceResultCache => {
    watched.inner = cache;
    return {
      get: (key) => (watched.reads.push(key), cache.get(key)),
      set: (key: string, value: CachedSourceResult, ttl: number) => (
        watched.writes.push(key),
        cache.set(key, value, ttl)
      ),
      ...(cache.peek === undefined ? {} : { peek: (key: string) => (watched.reads.push(key), cache.peek?.(key)) }),
    };
  };
}

/** Keys of the slot among `keys` (`v3:<slot>:<hash>`). */
const keysOf = (keys: string[], slot: SourceSlot): string[] => [
  ...new Set(keys.filter((key) => key.split(':')[1] === slot)),
];

describe('hardening: hostile values from upstream sites, end to end (issue 20, item 6)', () => {
  let sites: Sites | undefined;
  let service: TestServer | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  let numberIndex = 0;

  afterEach(async () => {
    await service?.close();
    await sites?.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
    service = undefined;
    sites = undefined;
  });

  async function start(
    env: Record<string, string> = {},
    watched?: WatchedCache,
  ): Promise<{ sites: Sites; service: TestServer }> {
    sites = await startSites();
    service = await startTestServer({
      env: {
        TELLOWS_API_URL: sites.url,
        TELLOWS_WEB_URL: sites.url,
        NUMEROINCONNU_URL: sites.url,
        TELGUARDER_URL: sites.url,
        RATE_LIMIT_MAX: '0',
        ...env,
      },
      ...(watched === undefined ? {} : { overrides: { decorateSourceCache: watching(watched) } }),
    });
    await waitUntilServing(service.app);
    return { sites, service };
  }

  /** A French mobile not asked before in this file. */
  function nextNumber(): string {
    numberIndex += 1;
    return `06110000${String(numberIndex).padStart(2, '0')}`;
  }

  async function lookup(server: TestServer, number: string): Promise<Answer> {
    const path = `/api/phone/${number}`;
    const answer = await fetchDocumented(server, path);
    return { status: answer.status, body: JSON.parse(answer.text) as Answer['body'] };
  }

  /** A 200 whose `slot` failed as `failure` with its empty fields, every other slot ok. */
  function expectOnlySlotFailed(answer: Answer, slot: SourceSlot, failure: SlotMeta): void {
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    expect(answer.body.meta.sources[slot]).toMatchObject(failure);
    expect(answer.body.data.sources[slot]).toEqual(emptySourceData()[slot]);
    for (const other of SLOTS.filter((each) => each !== slot))
      expect(answer.body.meta.sources[other].status, other).toBe('ok');
  }

  describe('6a: a value out of its range is a parse error, never a smaller value, and is not cached', () => {
    const PARSE = { status: 'error', reason: 'parse' };
    const cases: Array<{
      name: string;
      site: Site;
      slot: SourceSlot;
      from: string;
      to: string;
      failure: SlotMeta;
      env?: Record<string, string>;
    }> = [
      {
        name: 'numeroinconnu: a danger of 1000 (not 100 %)',
        site: 'numeroinconnu',
        slot: 'community',
        from: 'class="progress-bar-rank3">48</div>',
        to: 'class="progress-bar-rank3">1000</div>',
        failure: PARSE,
      },
      {
        name: 'numeroinconnu: visits of -7 (not 7)',
        site: 'numeroinconnu',
        slot: 'community',
        from: '<td class="td78">1&nbsp;393',
        to: '<td class="td78">-7',
        failure: PARSE,
      },
      {
        name: 'numeroinconnu: comments 1e3 (not 1)',
        site: 'numeroinconnu',
        slot: 'community',
        from: '<span id="count-comments">6</span>',
        to: '<span id="count-comments">1e3</span>',
        failure: PARSE,
      },
      {
        name: 'tellows page: 20-digit searches (not 0)',
        site: 'tellowsWeb',
        slot: 'primary',
        from: '<strong>Recherches:</strong> 1&nbsp;234',
        to: '<strong>Recherches:</strong> 12345678901234567890',
        failure: PARSE,
      },
      {
        name: 'tellows partner API (with a key): 20-digit searches (not 0), invalid_json as a score of 99 is',
        site: 'tellowsApi',
        slot: 'primary',
        from: '"searches":"1234"',
        to: '"searches":"12345678901234567890"',
        failure: { status: 'error', reason: 'invalid_json' },
        env: { TELLOWS_API_KEY: 'test-key' },
      },
      {
        name: 'telguarder: a reports count of -7 (not 7)',
        site: 'telguarder',
        slot: 'signals',
        from: 'Signalements</div><div class="ai-row-info-value">37</div>',
        to: 'Signalements</div><div class="ai-row-info-value">-7</div>',
        failure: PARSE,
      },
      {
        name: 'telguarder: a 20-digit reports count (not 0)',
        site: 'telguarder',
        slot: 'signals',
        from: 'Signalements</div><div class="ai-row-info-value">37</div>',
        to: 'Signalements</div><div class="ai-row-info-value">12345678901234567890</div>',
        failure: PARSE,
      },
    ];

    it.each(cases)('$name', async ({ site, slot, from, to, failure, env }) => {
      const hostilePage = altered(site, from, to);
      const watched: WatchedCache = { writes: [], reads: [] };
      const { sites: upstream, service: server } = await start(env, watched);

      // The unaltered page is read: the failure below is the altered value's doing.
      const control = await lookup(server, nextNumber());
      expect(control.status).toBe(200);
      for (const each of SLOTS) expect(control.body.meta.sources[each].status, each).toBe('ok');

      upstream.pages[site] = hostilePage;
      const asked = upstream.count(site);
      const victim = nextNumber();
      watched.writes.length = 0;
      watched.reads.length = 0;
      const answer = await lookup(server, victim);
      expectOnlySlotFailed(answer, slot, failure);
      expect(upstream.count(site)).toBe(asked + 1);

      // Nothing written for the failed slot; the two good slots were.
      expect(keysOf(watched.writes, slot)).toEqual([]);
      for (const other of SLOTS.filter((each) => each !== slot))
        expect(keysOf(watched.writes, other), other).toHaveLength(1);
      // The slot's key was read (so it is known) and holds nothing.
      const slotKeys = keysOf(watched.reads, slot);
      expect(slotKeys).toHaveLength(1);
      const cache = watched.inner;
      if (cache === undefined) throw new Error('the engine never built its cache');
      for (const key of slotKeys) expect(await cache.get(key)).toBeUndefined();

      // Asked again, the number still gets the failure, never a value made of the bad one.
      const again = await lookup(server, victim);
      expectOnlySlotFailed(again, slot, failure);
      expect(keysOf(watched.writes, slot)).toEqual([]);
    });
  });

  describe('6b: a redirect is followed only to the same origin (scheme, host and port)', () => {
    /** A bare TCP listener on another loopback port, counting the connections it accepts. */
    async function startConnectionCounter(): Promise<{
      port: number;
      connections: () => number;
      connected: () => Promise<void>;
      close: () => Promise<void>;
    }> {
      let count = 0;
      const waiters: Array<() => void> = [];
      const sockets = new Set<net.Socket>();
      const server = net.createServer((socket) => {
        count += 1;
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
        for (const resolve of waiters.splice(0)) resolve();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      if (typeof address !== 'object' || address === null) throw new Error('no address');
      return {
        port: address.port,
        connections: () => count,
        connected: () => new Promise<void>((resolve) => waiters.push(resolve)),
        close: () =>
          new Promise<void>((resolve) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => resolve());
          }),
      };
    }

    /** numeroinconnu at `http://127.0.0.1:P`, answering its number pages with a redirect to `target(path)`. */
    async function startRedirectingCommunity(target: (path: string) => string): Promise<LoopbackServer> {
      const redirecting = await startLoopbackServer((request, response) => {
        if (request.url.startsWith('/numero/')) response.writeHead(302, { location: target(request.url) }).end();
        else {
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          response.end(Buffer.from(normalPage('numeroinconnu'), 'latin1'));
        }
      });
      cleanups.push(() => redirecting.close());
      return redirecting;
    }

    it.each([
      { scheme: 'https', name: 'an https "upgrade" to another port' },
      { scheme: 'http', name: 'plain http to another port' },
    ])('$name ends as community error(redirect), and the other port sees no connection', async ({ scheme }) => {
      const counter = await startConnectionCounter();
      cleanups.push(() => counter.close());
      const redirecting = await startRedirectingCommunity((path) => `${scheme}://127.0.0.1:${counter.port}${path}`);
      const { service: server } = await start({ NUMEROINCONNU_URL: redirecting.url });

      const answer = await lookup(server, nextNumber());
      expectOnlySlotFailed(answer, 'community', { status: 'error', reason: 'redirect' });
      expect(
        redirecting.received.filter((request) => request.url.startsWith('/numero/')).length,
      ).toBeGreaterThanOrEqual(1);

      // Connections are accepted in order: once this one is seen, any the service made earlier was too.
      const seen = counter.connected();
      const probe = net.connect(counter.port, '127.0.0.1');
      probe.on('error', () => undefined);
      await seen;
      probe.destroy();
      expect(counter.connections()).toBe(1);
    });

    it('a redirect to another page of the same origin is still followed (control)', async () => {
      const redirecting = await startRedirectingCommunity(() => '/elsewhere');
      const { service: server } = await start({ NUMEROINCONNU_URL: redirecting.url });
      const answer = await lookup(server, nextNumber());
      expect(answer.status).toBe(200);
      for (const each of SLOTS) expect(answer.body.meta.sources[each].status, each).toBe('ok');
      expect(redirecting.received.some((request) => request.url === '/elsewhere')).toBe(true);
    });
  });

  describe('6e: a 1 MiB page of deeply nested tags ends as a parse error, the other slots answered', () => {
    const ONE_MIB = 1024 * 1024;
    // The site's own page with nested tags opened right after <body>, up to 1 MiB in all (the
    // body cap, so the fetch reads it whole and the parser meets it).
    function nestedPage(site: Site): string {
      const page = normalPage(site);
      const at = page.indexOf('<body>') + '<body>'.length;
      if (at < '<body>'.length) throw new Error(`${site} fixture has no <body>`);
      const room = ONE_MIB - page.length;
      const nesting = '<div><span>'.repeat(Math.floor(room / '<div><span>'.length));
      return (page.slice(0, at) + nesting + page.slice(at)).padEnd(ONE_MIB, ' ');
    }

    it.each([
      { site: 'numeroinconnu' as const, slot: 'community' as const },
      { site: 'tellowsWeb' as const, slot: 'primary' as const },
      { site: 'telguarder' as const, slot: 'signals' as const },
    ])('served by $site: $slot ends error(parse)', async ({ site, slot }) => {
      const page = nestedPage(site);
      expect(Buffer.byteLength(page, 'latin1')).toBe(ONE_MIB);
      const { sites: upstream, service: server } = await start();
      upstream.pages[site] = page;

      // The behaviour under test is that the parse work is bounded: the slot ends as `parse`
      // (not `timeout`, which it would be had the parse outlasted LOOKUP_TIMEOUT_MS), and the
      // answer comes.
      const answer = await lookup(server, nextNumber());
      expectOnlySlotFailed(answer, slot, { status: 'error', reason: 'parse' });
      expect(upstream.count(site)).toBeGreaterThanOrEqual(1);
      expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
    });
  });
});
