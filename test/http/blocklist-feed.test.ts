// The blocklist feed over real HTTP: what a Fritz!Box, a CardDAV contacts app and SpamBlocker's
// CSV workflow receive, and what they are refused.
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { InMemoryOperatorLists } from '../../harness/operator-lists.js';
import { evidenceOf, InMemoryCallerReports } from '../../harness/caller-reports.js';
import { scoredSources } from '../../harness/scored-sources.js';
import { importedRuleMatches, parseCsvLikeSpamBlocker } from '../support/spamblocker.js';
import { spamBlockerPattern } from '../../src/domain/blocklist/feed-formats.js';
import type { BlocklistFeed } from '../../src/infra/blocklist/blocklist-feed.js';
import type { OperatorLists } from '../../src/domain/ports/operator-lists.js';
import { connectAdmin, deleteKeys, listKeys, TEST_REDIS_URL, uniqueKeyPrefix, waitFor } from '../support/redis.js';

const PASSWORD = 'correct horse battery';
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const GOOD = basic('blocklist', PASSWORD);

const PROPFIND_BODY =
  '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getetag/><d:displayname/></d:prop></d:propfind>';
const multigetBody = (hrefs: readonly string[]): string =>
  `<?xml version="1.0" encoding="utf-8"?><C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/><C:address-data/></D:prop>${hrefs.map((href) => `<D:href>${href}</D:href>`).join('')}</C:addressbook-multiget>`;

/** The hrefs of a multistatus' responses, and each one's text of an element. */
function responsesOf(xml: string): Array<{ href: string; etag: string | undefined; data: string | undefined }> {
  return [...xml.matchAll(/<d:response>(.*?)<\/d:response>/gs)].map(([, inner = '']) => ({
    href: /<d:href>(.*?)<\/d:href>/s.exec(inner)?.[1] ?? '',
    etag: /<d:getetag>(.*?)<\/d:getetag>/s.exec(inner)?.[1]?.replace(/&quot;/g, '"'),
    data: /<card:address-data>(.*?)<\/card:address-data>/s
      .exec(inner)?.[1]
      ?.replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
  }));
}

/** Every TEL of a vCard stream. */
function telsOf(vcards: string): string[] {
  return [...vcards.matchAll(/^TEL[^:\r\n]*:(.+?)\r?$/gm)].map((match) => match[1] ?? '').sort();
}

const lists = new InMemoryOperatorLists([
  { rule: '+33170*', list: 'block', label: 'Plateforme de démarchage' },
  { rule: '+33612345678', list: 'block', label: 'Arnaque CPF' },
  { rule: '+33170000001', list: 'allow', label: 'Mairie' },
  { rule: '+33611111111', list: 'allow' },
]);

// Reported as spam by this deployment's reporters (docs/reports.md): listed, unless allowed.
const reports = new InMemoryCallerReports({
  '+33655555555': evidenceOf('spam', { fraud: 2, advertising: 1 }),
  '+33611111111': evidenceOf('spam', { fraud: 4 }),
  '+33655555556': evidenceOf('suspect', { fraud: 1 }),
});

describe('blocklist feed', () => {
  let server: TestServer;
  let feed: BlocklistFeed;
  beforeAll(async () => {
    server = await startTestServer({
      // The test's own client is the one whose lookups the feed records (FEED_RECORD_FROM).
      env: { FEED_PASSWORD: PASSWORD, VERDICT_NPV: 'block', RATE_LIMIT_MAX: '0', FEED_RECORD_FROM: '127.0.0.1' },
      overrides: {
        sources: scoredSources({ '+33698765432': 8, '+33611111111': 9, '+33622222222': 2 }),
        operatorLists: lists,
        callerReports: reports,
        feedRefreshIntervalMs: 3_600_000,
      },
    });
    const built = server.deps.blocklistFeed;
    if (built === undefined) throw new Error('the feed is on with FEED_PASSWORD');
    feed = built;
    // Looked up here: a suspicious caller (block), an allowed one the sources call spam, a trustworthy one.
    for (const number of ['0698765432', '0611111111', '0622222222'])
      expect((await fetch(`${server.baseUrl}/api/phone/${number}/verdict`)).status).toBe(200);
    await feed.refresh();
  });
  afterAll(async () => server.close());

  const request = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${server.baseUrl}${path}`, { redirect: 'manual', ...init });

  it('holds the operator rules, the NPV ranges and the numbers looked up whose verdict was block, never an allowed one', () => {
    const tels = feed.snapshot().entries.map((entry) => `+${entry.digits}${entry.wildcard ? '*' : ''}`);
    expect(tels).toContain('+33612345678');
    expect(tels).toContain('+33162*');
    expect(tels).toContain('+33698765432');
    expect(tels).not.toContain('+33611111111');
    expect(tels).not.toContain('+33622222222');
    expect(tels).not.toContain('+33170*');
    // The block range is split around the allowed number in it.
    expect(tels).toContain('+33170000000*');
    expect(
      tels.some(
        (tel) => '+33170000001'.startsWith(tel.replace('*', '')) && (tel.endsWith('*') || tel === '+33170000001'),
      ),
    ).toBe(false);
  });

  it('lists the numbers reported as spam with the reports’ line in the CSV, never an allowed one nor one below the bar', async () => {
    const csv = await (await request('/feed/blocklist.csv', { headers: { authorization: GOOD } })).text();
    const row = csv.split('\n').find((line) => line.includes('33655555555'));
    expect(row).toContain('SIGNALÉ 3× Arnaque');
    expect(csv).not.toContain('33611111111');
    expect(csv).not.toContain('33655555556');
  });

  it('replays a Fritz!Box sync: PROPFIND Depth 1 → 401 → with Basic 207, then REPORT addressbook-multiget → 401 → 207 with every card', async () => {
    // PhoneBlock's published CardDAV traffic notes (haumacher/phoneblock, CARDDAV-OPTIMIZATION-PLAN.md,
    // "Auth-Loop (FritzBox macht kein preemptive Auth)"): a Fritz!Box sends PROPFIND and REPORT on
    // the address book collection, each first without credentials (401) and then with Basic
    // (207). The notes give the sequence, not the bodies: these are RFC 6352's usual ones.
    const headers = { 'content-type': 'text/xml; charset=utf-8', 'user-agent': 'AVM FRITZ!Box', depth: '1' };
    const challenge = await request('/carddav/blocklist/', { method: 'PROPFIND', headers, body: PROPFIND_BODY });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toMatch(/^Basic realm="blocklist"/);
    await challenge.arrayBuffer();

    const listing = await request('/carddav/blocklist/', {
      method: 'PROPFIND',
      headers: { ...headers, authorization: GOOD },
      body: PROPFIND_BODY,
    });
    expect(listing.status).toBe(207);
    const listed = responsesOf(await listing.text());
    const snapshot = feed.snapshot();
    expect(listed.map((response) => response.href)).toEqual([
      '/carddav/blocklist/',
      ...snapshot.cards.map((card) => `/carddav/blocklist/${card.name}`),
    ]);
    expect(listed.slice(1).map((response) => response.etag)).toEqual(snapshot.cards.map((card) => card.etag));

    const hrefs = listed.slice(1).map((response) => response.href);
    const reportHeaders = { 'content-type': 'text/xml; charset=utf-8', 'user-agent': 'AVM FRITZ!Box', depth: '1' };
    const reportChallenge = await request('/carddav/blocklist/', {
      method: 'REPORT',
      headers: reportHeaders,
      body: multigetBody(hrefs),
    });
    expect(reportChallenge.status).toBe(401);
    await reportChallenge.arrayBuffer();
    const report = await request('/carddav/blocklist/', {
      method: 'REPORT',
      headers: { ...reportHeaders, authorization: GOOD },
      body: multigetBody(hrefs),
    });
    expect(report.status).toBe(207);
    const cards = responsesOf(await report.text());
    expect(cards.map((card) => card.href)).toEqual(hrefs);
    const vcards = cards.map((card) => card.data ?? '').join('');
    expect(telsOf(vcards)).toEqual(
      snapshot.entries.map((entry) => `+${entry.digits}${entry.wildcard ? '*' : ''}`).sort(),
    );
    for (const card of cards) {
      expect(card.data).toMatch(/^BEGIN:VCARD\r\nVERSION:3\.0\r\n/);
      expect(card.data).toContain('\r\nCATEGORIES:SPAM\r\n');
      expect((card.data ?? '').match(/^TEL/gm)?.length).toBeLessThanOrEqual(9);
    }
  });

  it('answers a multiget of every card the same whatever its XML spelling, and a reordered one in the order asked', async () => {
    const hrefs = feed.snapshot().cards.map((card) => `/carddav/blocklist/${card.name}`);
    const headers = { 'content-type': 'text/xml; charset=utf-8', depth: '1', authorization: GOOD };
    const otherSpelling = `<?xml version="1.0"?>\n<card:addressbook-multiget xmlns:x="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">\n <x:prop> <x:getetag/> <card:address-data/> </x:prop>\n${hrefs.map((href) => ` <x:href>${href}</x:href>\n`).join('')}</card:addressbook-multiget>`;
    const [first, second, reversed] = await Promise.all(
      [multigetBody(hrefs), otherSpelling, multigetBody([...hrefs].reverse())].map(async (body) => {
        const answer = await request('/carddav/blocklist/', { method: 'REPORT', headers, body });
        expect(answer.status).toBe(207);
        return answer.text();
      }),
    );
    expect(second).toBe(first);
    expect(responsesOf(reversed ?? '').map((card) => card.href)).toEqual([...hrefs].reverse());
    expect(
      responsesOf(reversed ?? '')
        .map((card) => card.data)
        .sort(),
    ).toEqual(
      responsesOf(first ?? '')
        .map((card) => card.data)
        .sort(),
    );
  });

  it('answers each card with its ETag, and 304 to If-None-Match', async () => {
    const card = feed.snapshot().cards[0];
    if (card === undefined) throw new Error('no card');
    const first = await request(`/carddav/blocklist/${card.name}`, { headers: { authorization: GOOD } });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe(card.etag);
    expect(await first.text()).toBe(card.vcard);
    const again = await request(`/carddav/blocklist/${card.name}`, {
      headers: { authorization: GOOD, 'if-none-match': card.etag },
    });
    expect(again.status).toBe(304);
  });

  it('keeps the collection tag while the content is the same and changes it with the content', async () => {
    const before = feed.snapshot();
    expect((await feed.refresh()).ctag).toBe(before.ctag);
    lists.add({ rule: '+33699000000', list: 'block', label: 'Ajouté' });
    try {
      const after = await feed.refresh();
      expect(after.ctag).not.toBe(before.ctag);
      const propfind = await request('/carddav/blocklist/', {
        method: 'PROPFIND',
        headers: { authorization: GOOD, depth: '0' },
        body: '<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>',
      });
      expect(await propfind.text()).toContain(`<cs:getctag>${after.ctag}</cs:getctag>`);
    } finally {
      lists.remove('+33699000000');
      await feed.refresh();
    }
  });

  it('serves the same content as one .vcf file and as the CSV SpamBlocker imports', async () => {
    const snapshot = feed.snapshot();
    const vcf = await request('/feed/blocklist.vcf', { headers: { authorization: GOOD } });
    expect(vcf.headers.get('content-type')).toBe('text/vcard; charset=utf-8');
    const vcfText = await vcf.text();
    expect(vcfText).toBe(snapshot.cards.map((card) => card.vcard).join(''));

    const csv = await request('/feed/blocklist.csv', { headers: { authorization: GOOD } });
    const rows = parseCsvLikeSpamBlocker(await csv.text());
    expect(rows.every((row) => row.isBlacklist === 'true' && row.description !== '')).toBe(true);
    const patterns = rows.map((row) => row.pattern ?? '');
    expect([...patterns].sort()).toEqual(snapshot.entries.map(spamBlockerPattern).sort());
    // The rule SpamBlocker makes of them blocks a listed caller, an NPV caller and a looked-up one, never an allowed one.
    expect(importedRuleMatches(patterns, '+33612345678')).toBe(true);
    expect(importedRuleMatches(patterns, '+33162001234')).toBe(true);
    expect(importedRuleMatches(patterns, '+33698765432')).toBe(true);
    expect(importedRuleMatches(patterns, '+33170000001')).toBe(false);
    expect(importedRuleMatches(patterns, '+33611111111')).toBe(false);
  });

  it('serves the SpamBlocker workflow that downloads the CSV with the caller’s own credentials', async () => {
    const answer = await request('/integrations/spamblocker/workflow.json', { headers: { authorization: GOOD } });
    const workflow = (await answer.json()) as {
      desc: string;
      actions: Array<{ type: string; url?: string; header?: string; description?: string }>;
    };
    expect(workflow.actions.map((action) => action.type)).toEqual(['HttpDownload', 'ParseCSV', 'ImportAsRegexRule']);
    // Built for 127.0.0.1 without PUBLIC_URL: it says so; the rule's own description (what Replace finds it by) stays.
    expect(workflow.desc).toBe('phone-reputation blocklist (loopback address: set PUBLIC_URL)');
    expect(answer.headers.get('x-public-url-warning')).toMatch(
      /loopback address, which a phone cannot reach: set PUBLIC_URL/,
    );
    expect(workflow.actions[2]?.description).toBe('phone-reputation blocklist');
    expect(workflow.actions[0]?.url).toBe(`${server.baseUrl}/feed/blocklist.csv`);
    expect(workflow.actions[0]?.header).toBe(`Authorization: ${GOOD}`);
  });

  it('points /.well-known/carddav at /carddav/ and says it is an address book server', async () => {
    const redirect = await request('/.well-known/carddav');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/carddav/');
    const options = await request('/carddav/', { method: 'OPTIONS' });
    expect(options.headers.get('dav')).toContain('addressbook');
    const home = await request('/carddav/', {
      method: 'PROPFIND',
      headers: { authorization: GOOD, depth: '0' },
      body: '<propfind xmlns="DAV:"><prop><current-user-principal/><addressbook-home-set xmlns="urn:ietf:params:xml:ns:carddav"/></prop></propfind>',
    });
    const text = await home.text();
    expect(text).toContain('<d:current-user-principal><d:href>/carddav/</d:href></d:current-user-principal>');
    expect(text).toContain('<card:addressbook-home-set><d:href>/carddav/</d:href></card:addressbook-home-set>');
  });

  it('refuses a body that is not a whole WebDAV document with 400, and a large multiget parsed in slices is answered whole', async () => {
    const headers = { authorization: GOOD, 'content-type': 'text/xml', depth: '1' };
    for (const body of [
      PROPFIND_BODY.slice(0, -20),
      multigetBody(['/carddav/blocklist/x.vcf']).slice(0, -10),
      '<a/><b/>',
    ]) {
      const refused = await request('/carddav/blocklist/', {
        method: body.includes('multiget') ? 'REPORT' : 'PROPFIND',
        headers,
        body,
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ type: '/problems/bad-request' });
    }
    // A thousand hrefs (about 60 KiB), most of them unknown: each answered, in the order asked.
    const hrefs = [
      ...feed.snapshot().cards.map((card) => `/carddav/blocklist/${card.name}`),
      ...Array.from({ length: 1000 }, (_, index) => `/carddav/blocklist/none-${index}.vcf`),
    ].slice(0, 1000);
    const answer = await request('/carddav/blocklist/', { method: 'REPORT', headers, body: multigetBody(hrefs) });
    expect(answer.status).toBe(207);
    expect(responsesOf(await answer.text()).map((response) => response.href)).toEqual(hrefs);
  });

  it('refuses a wrong password with 401 and a writing method with 403 and a DAV error', async () => {
    for (const authorization of [basic('blocklist', 'wrong password'), basic('someone', PASSWORD), 'Bearer x']) {
      const refused = await request('/feed/blocklist.csv', { headers: { authorization } });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(await refused.text()).not.toContain('+33');
    }
    const card = feed.snapshot().cards[0];
    for (const [method, path] of [
      ['PUT', `/carddav/blocklist/${card?.name ?? 'x.vcf'}`],
      ['DELETE', '/carddav/blocklist/'],
      ['PROPPATCH', '/carddav/blocklist/'],
      ['MKCOL', '/carddav/new/'],
    ] as const) {
      const refused = await request(path, {
        method,
        headers: { authorization: GOOD, 'content-type': 'text/vcard' },
        ...(method === 'PUT' ? { body: 'BEGIN:VCARD\r\nEND:VCARD\r\n' } : {}),
      });
      if (path === '/carddav/new/') {
        expect(refused.status, `${method} ${path}`).toBe(404);
        continue;
      }
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(await refused.text()).toContain('<d:need-privileges>');
    }
  });
});

describe('blocklist feed: off and rate limited', () => {
  it('is not there without FEED_PASSWORD: a 404 problem that names FEED_PASSWORD, and records nothing', async () => {
    const server = await startTestServer({ overrides: { sources: scoredSources({ '+33698765432': 8 }) } });
    try {
      expect(server.deps.blocklistFeed).toBeUndefined();
      const paths = [
        ['GET', '/feed/blocklist.csv'],
        ['GET', '/feed/blocklist.vcf'],
        ['PROPFIND', '/carddav/'],
        ['REPORT', '/carddav/blocklist/'],
        ['GET', '/carddav/blocklist/x.vcf'],
        ['GET', '/integrations/spamblocker/workflow.json'],
        ['GET', '/.well-known/carddav'],
      ] as const;
      for (const [method, path] of paths) {
        const answer = await fetch(`${server.baseUrl}${path}`, {
          method,
          headers: { authorization: GOOD },
          redirect: 'manual',
        });
        expect(answer.status, path).toBe(404);
        expect(answer.headers.get('content-type'), path).toBe('application/problem+json; charset=utf-8');
        expect(await answer.json(), path).toMatchObject({
          status: 404,
          type: '/problems/route-not-found',
          detail: expect.stringContaining('setting FEED_PASSWORD'),
        });
      }
      const head = await fetch(`${server.baseUrl}/feed/blocklist.csv`, { method: 'HEAD' });
      expect(head.status).toBe(404);
      // Any other path is still the bare 404.
      expect(await (await fetch(`${server.baseUrl}/feed/other.csv`)).json()).not.toHaveProperty('detail');
    } finally {
      await server.close();
    }
  });

  it('counts failed attempts against the rate limit, so past it even the right password gets 429', async () => {
    const server = await startTestServer({
      env: { FEED_PASSWORD: PASSWORD, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '60' },
      overrides: { sources: scoredSources({}) },
    });
    try {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 3; attempt += 1)
        statuses.push(
          (
            await fetch(`${server.baseUrl}/feed/blocklist.csv`, {
              headers: { authorization: basic('blocklist', `guess ${attempt}`) },
            })
          ).status,
        );
      statuses.push((await fetch(`${server.baseUrl}/feed/blocklist.csv`, { headers: { authorization: GOOD } })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await server.close();
    }
  });
});

/** A GET from a loopback address of its own (Linux answers all of 127.0.0.0/8): another client. */
function getFrom(localAddress: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = http.get(url, { localAddress, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject);
  });
}

describe('blocklist feed: whose lookups are recorded (issue 44, finding 9)', () => {
  const SCORES = { '+33698765432': 8, '+33698765433': 8 };
  const recordedAfter = async (
    env: Record<string, string>,
    lookups: ReadonlyArray<[from: string, number: string]>,
  ): Promise<string[]> => {
    const server = await startTestServer({
      env: { FEED_PASSWORD: PASSWORD, RATE_LIMIT_MAX: '0', ...env },
      overrides: {
        sources: scoredSources(SCORES),
        operatorLists: new InMemoryOperatorLists([]),
        feedRefreshIntervalMs: 3_600_000,
      },
    });
    try {
      for (const [from, number] of lookups)
        expect(await getFrom(from, `${server.baseUrl}/api/phone/${number}/verdict`)).toBe(200);
      const snapshot = await server.deps.blocklistFeed?.refresh();
      return (snapshot?.entries ?? [])
        .filter((entry) => entry.source === 'recent')
        .map((entry) => `+${entry.digits}`)
        .sort();
    } finally {
      await server.close();
    }
  };

  it('records the lookups of the RATE_LIMIT_EXEMPT clients only, never a stranger’s', async () => {
    expect(
      await recordedAfter({ RATE_LIMIT_EXEMPT: '127.0.0.2' }, [
        ['127.0.0.2', '0698765432'],
        ['127.0.0.3', '0698765433'],
      ]),
    ).toEqual(['+33698765432']);
  });

  it('records the lookups of the clients FEED_RECORD_FROM names instead, and nobody’s without either', async () => {
    expect(
      await recordedAfter({ RATE_LIMIT_EXEMPT: '127.0.0.2', FEED_RECORD_FROM: '127.0.0.3' }, [
        ['127.0.0.2', '0698765432'],
        ['127.0.0.3', '0698765433'],
      ]),
    ).toEqual(['+33698765433']);
    expect(
      await recordedAfter({}, [
        ['127.0.0.2', '0698765432'],
        ['127.0.0.3', '0698765433'],
      ]),
    ).toEqual([]);
    expect(
      await recordedAfter({ RATE_LIMIT_EXEMPT: '127.0.0.2', FEED_RECORD_FROM: 'none' }, [['127.0.0.2', '0698765432']]),
    ).toEqual([]);
  });
});

describe('blocklist feed: what the lists allow, and a rebuild that fails (issue 44, findings 3 and 4)', () => {
  it('never lists a blocked range holding an allowed number, and answers 503 rather than a stale feed while rebuilds fail', async () => {
    const rules = new InMemoryOperatorLists([
      { rule: '+33612345678*', list: 'block' },
      { rule: '+33612345678', list: 'allow', label: 'Boss' },
      { rule: '+33170*', list: 'block' },
    ]);
    let broken = false;
    const lists: OperatorLists = {
      match: (e164, now) => rules.match(e164, now),
      version: (now) => rules.version(now),
      activeRules: (now) => {
        if (broken) throw new RangeError('Maximum call stack size exceeded');
        return rules.activeRules(now);
      },
    };
    const server = await startTestServer({
      env: { FEED_PASSWORD: PASSWORD, RATE_LIMIT_MAX: '0' },
      overrides: { sources: scoredSources({}), operatorLists: lists, feedRefreshIntervalMs: 3_600_000 },
    });
    try {
      const feed = server.deps.blocklistFeed;
      if (feed === undefined) throw new Error('the feed is on with FEED_PASSWORD');
      await feed.refresh();
      const csv = await (
        await fetch(`${server.baseUrl}/feed/blocklist.csv`, { headers: { authorization: GOOD } })
      ).text();
      const vcf = await (
        await fetch(`${server.baseUrl}/feed/blocklist.vcf`, { headers: { authorization: GOOD } })
      ).text();
      expect(csv).toContain('33170.*');
      expect(csv).not.toContain('33612345678');
      expect(telsOf(vcf)).toEqual(['+33170*']);

      // A rebuild fails: the feed says so instead of serving what it held.
      broken = true;
      rules.add({ rule: '+33170000001', list: 'allow' });
      await feed.refresh();
      for (const path of ['/feed/blocklist.csv', '/feed/blocklist.vcf', '/carddav/blocklist/']) {
        const refused = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: GOOD } });
        expect(refused.status, path).toBe(503);
        expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(refused.headers.get('retry-after')).toBe('60');
      }
      const report = await fetch(`${server.baseUrl}/carddav/blocklist/`, {
        method: 'PROPFIND',
        headers: { authorization: GOOD, depth: '1' },
        body: PROPFIND_BODY,
      });
      expect(report.status).toBe(503);
      // Without credentials it is still a 401: a failing feed tells a stranger nothing.
      expect((await fetch(`${server.baseUrl}/feed/blocklist.csv`)).status).toBe(401);

      broken = false;
      await feed.refresh();
      const fixed = await fetch(`${server.baseUrl}/feed/blocklist.csv`, { headers: { authorization: GOOD } });
      expect(fixed.status).toBe(200);
      expect(await fixed.text()).not.toContain('33170.*');
    } finally {
      await server.close();
    }
  });
});

describe('blocklist feed: an allowed number is kept nowhere (issue 44, finding 14)', () => {
  it('never records an allowed number in the shared record, even looked up in JSON by a trusted client with a score that says block', async () => {
    const prefix = uniqueKeyPrefix('feed-allowed');
    const admin = connectAdmin();
    const server = await startTestServer({
      env: {
        FEED_PASSWORD: PASSWORD,
        RATE_LIMIT_MAX: '0',
        FEED_RECORD_FROM: '127.0.0.1',
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        LISTS_FILE: join(mkdtempSync(join(tmpdir(), 'phonerep-feed-')), 'lists.csv'),
      },
      overrides: {
        sources: scoredSources({ '+33611111111': 9, '+33698765432': 8 }),
        operatorLists: new InMemoryOperatorLists([{ rule: '+33611111111', list: 'allow', label: 'Boss' }]),
        feedRefreshIntervalMs: 3_600_000,
      },
    });
    try {
      await waitFor(() => server.deps.redis?.health() === 'ok');
      // The allowed number first: its record, if any, is written before the blocked one's.
      for (const number of ['0611111111', '0698765432'])
        expect((await fetch(`${server.baseUrl}/api/phone/${number}`)).status).toBe(200);
      await waitFor(async () => (await admin.zscore(`${prefix}{blocked}:log`, '+33698765432')) !== null);
      expect(await admin.zscore(`${prefix}{blocked}:log`, '+33611111111')).toBeNull();
      // No key of the deployment names it (the caches key on a keyed hash).
      const keys = await listKeys(admin, prefix);
      expect(keys).toContain(`${prefix}{blocked}:caller:+33698765432`);
      expect(keys.filter((key) => key.includes('611111111'))).toEqual([]);
    } finally {
      await server.close();
      await deleteKeys(admin, prefix);
      admin.disconnect();
    }
  });
});
