// SpamBlocker's Instant Query against the real server, doing what the app does and nothing more
// (test/support/spamblocker.ts says where each step comes from in aj3423/SpamBlocker's source):
// take the served config, split the incoming number into {cc} and {domestic}, paste them into
// the URL unencoded, send the app's headers, and read the answer with the config's regular
// expressions by the app's rules.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeQrSvg } from '../support/qr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insideLegalHoursClock } from '../../harness/legal-hours.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { scoredSources } from '../../harness/scored-sources.js';
import {
  parseIncomingNumber,
  parseQueryResult,
  resolveNumberTags,
  SPAMBLOCKER_HEADERS,
  type QueryResult,
} from '../support/spamblocker.js';

interface QueryApi {
  desc: string;
  enabled: boolean;
  actions: Array<{
    type: string;
    url?: string;
    header?: string;
    negativeSig?: string;
    positiveSig?: string;
    categorySig?: string;
  }>;
}

/** One incoming call, as the app screens it with the config `api` served by `server`. */
async function screenCall(
  server: TestServer,
  api: QueryApi,
  rawNumber: string,
): Promise<QueryResult & { url: string }> {
  const [intercept, download, parse, filter, importer] = api.actions;
  expect([intercept?.type, download?.type, parse?.type, filter?.type, importer?.type]).toEqual([
    'ParseIncomingNumber',
    'HttpDownload',
    'ParseQueryResult',
    'FilterSpamResult',
    'ImportToSpamDB',
  ]);
  const url = resolveNumberTags(download?.url ?? '', parseIncomingNumber(rawNumber));
  // The config names this deployment by PUBLIC_URL; the test's server stands in for it.
  const answer = await fetch(url.replace('http://placeholder.invalid', server.baseUrl), {
    headers: SPAMBLOCKER_HEADERS,
  });
  const body = await answer.text();
  if (answer.status !== 200) return { url, determined: false, isSpam: false, category: null };
  return {
    url,
    ...parseQueryResult(body, {
      negativeSig: parse?.negativeSig ?? '',
      positiveSig: parse?.positiveSig ?? '',
      categorySig: parse?.categorySig ?? '',
    }),
  };
}

describe('SpamBlocker instant query', () => {
  let server: TestServer;
  let api: QueryApi;
  beforeAll(async () => {
    server = await startTestServer({
      env: { VERDICT_NPV: 'block', RATE_LIMIT_MAX: '0', PUBLIC_URL: 'http://placeholder.invalid' },
      // The NPV words, not the legal hours' (which the day the test runs would decide).
      overrides: {
        sources: scoredSources({ '+33612345678': 8, '+33698765432': 2, '+4930123456': 9 }),
        now: insideLegalHoursClock(),
      },
    });
    api = (await (await fetch(`${server.baseUrl}/integrations/spamblocker/query.json`)).json()) as QueryApi;
  });
  afterAll(async () => server.close());

  const screen = (rawNumber: string): Promise<QueryResult & { url: string }> => screenCall(server, api, rawNumber);

  it('serves the app’s own Api JSON, filled with PUBLIC_URL and a wait below the app’s race', () => {
    expect(api.enabled).toBe(true);
    expect(api.actions[1]?.url).toBe('http://placeholder.invalid/api/phone/{cc}{domestic}/verdict?wait=3500&cid=fr');
    expect(api.actions[1]?.header).toBe('');
  });

  it('a suspicious caller is spam, with the /cid line as its category', async () => {
    const result = await screen('+33612345678');
    expect(result.url).toBe('http://placeholder.invalid/api/phone/33612345678/verdict?wait=3500&cid=fr');
    expect(result).toMatchObject({ determined: true, isSpam: true, category: 'SPAM? 8/9 Démarchage' });
  });

  it('the same caller arriving in national form (no +) is screened the same', async () => {
    const result = await screen('0612345678');
    expect(result.url).toContain('/api/phone/330612345678/verdict');
    expect(result).toMatchObject({ determined: true, isSpam: true, category: 'SPAM? 8/9 Démarchage' });
  });

  it('an NPV caller is spam when VERDICT_NPV=block', async () => {
    expect(await screen('+33162001234')).toMatchObject({
      determined: true,
      isSpam: true,
      category: 'Appel automatisé (NPV)',
    });
  });

  it('a trustworthy caller is determined not spam', async () => {
    expect(await screen('+33698765432')).toMatchObject({ determined: true, isSpam: false, category: 'Fiable 2/9' });
  });

  it('a foreign caller is looked up from its {cc}{domestic}', async () => {
    const result = await screen('+4930123456');
    expect(result.url).toContain('/api/phone/4930123456/verdict');
    expect(result).toMatchObject({ determined: true, isSpam: true });
  });

  it('a withheld caller gives the app no verdict (it sends the phone’s country code alone)', async () => {
    const result = await screen('');
    expect(result.url).toContain('/api/phone/33/verdict');
    expect(result).toMatchObject({ determined: false, isSpam: false });
  });

  it('an unknown caller gives the app no verdict', async () => {
    expect(await screen('+33655555555')).toMatchObject({ determined: false, isSpam: false });
  });
});

// The operator's lists (docs/lists.md) decide before the sources: a caller the sources score 2
// is spam when blocked, one they score 9 is not spam when allowed, each with its rule's label as
// the category, and no source is asked.
describe('SpamBlocker instant query, callers on the operator’s lists', () => {
  let server: TestServer;
  let api: QueryApi;
  let listsDir: string;
  const sources = scoredSources({ '+33612345670': 2, '+33612345688': 9, '+33612345699': 9, '+33698000001': 2 });
  const sourceCalls = (): number => sources.primary.calls + sources.community.calls + sources.signals.calls;
  beforeAll(async () => {
    listsDir = mkdtempSync(join(tmpdir(), 'spamblocker-lists-'));
    const listsFile = join(listsDir, 'lists.csv');
    writeFileSync(
      listsFile,
      [
        'rule,list,label,note,expiresAt,createdAt,labelPublic',
        '+33612345670,block,Robot,,,2026-11-26T00:00:00.000Z,true',
        '+33612345699,allow,Fournisseur,,,2026-11-26T00:00:00.000Z,true',
        '+33698*,block,,,,2026-11-26T00:00:00.000Z,',
        '',
      ].join('\n'),
    );
    server = await startTestServer({
      env: { LISTS_FILE: listsFile, RATE_LIMIT_MAX: '0', PUBLIC_URL: 'http://placeholder.invalid' },
      overrides: { sources },
    });
    api = (await (await fetch(`${server.baseUrl}/integrations/spamblocker/query.json`)).json()) as QueryApi;
  });
  afterAll(async () => {
    await server?.close();
    if (listsDir !== undefined) rmSync(listsDir, { recursive: true, force: true });
  });

  it('a caller on the block list is spam with the rule’s label, whatever the sources say (score 2), and no source is asked', async () => {
    const before = sourceCalls();
    expect(await screenCall(server, api, '+33612345670')).toMatchObject({
      determined: true,
      isSpam: true,
      category: 'Robot',
    });
    expect(sourceCalls()).toBe(before);
  });

  it('a caller inside a blocked prefix without a label is spam, named as blocked by the administrator', async () => {
    const before = sourceCalls();
    expect(await screenCall(server, api, '0698000001')).toMatchObject({
      determined: true,
      isSpam: true,
      category: 'Bloqué par l’administrateur',
    });
    expect(sourceCalls()).toBe(before);
  });

  it('a caller on the allow list is determined not spam with the rule’s label, whatever the sources say (score 9), and no source is asked', async () => {
    const before = sourceCalls();
    expect(await screenCall(server, api, '+33612345699')).toMatchObject({
      determined: true,
      isSpam: false,
      category: 'Fournisseur',
    });
    expect(sourceCalls()).toBe(before);
  });

  it('a caller off the lists the sources score 9 is spam by their score (the control: they are asked)', async () => {
    const before = sourceCalls();
    expect(await screenCall(server, api, '+33612345688')).toMatchObject({
      determined: true,
      isSpam: true,
      category: 'SPAM? 9/9 Démarchage',
    });
    expect(sourceCalls()).toBeGreaterThan(before);
  });
});

describe('SpamBlocker config: the base URL', () => {
  it('says to set PUBLIC_URL when its address was guessed or is a loopback host, in its description and a header', async () => {
    const unset = await startTestServer({
      env: { TRUST_PROXY: 'loopback' },
      overrides: { sources: scoredSources({}) },
    });
    const set = await startTestServer({
      env: { PUBLIC_URL: 'https://phones.example.org' },
      overrides: { sources: scoredSources({}) },
    });
    const loopback = await startTestServer({
      env: { PUBLIC_URL: 'http://localhost:3000' },
      overrides: { sources: scoredSources({}) },
    });
    try {
      const served = async (
        server: TestServer,
        headers: Record<string, string> = {},
      ): Promise<{ desc: string; warning: string | null }> => {
        const answer = await fetch(`${server.baseUrl}/integrations/spamblocker/query.json`, { headers });
        return { desc: ((await answer.json()) as QueryApi).desc, warning: answer.headers.get('x-public-url-warning') };
      };
      // The test's server is reached on 127.0.0.1: a loopback host, which no phone reaches.
      expect(await served(unset)).toEqual({
        desc: `phone-reputation (${new URL(unset.baseUrl).host}; loopback address: set PUBLIC_URL)`,
        warning:
          'This config names a loopback address, which a phone cannot reach: set PUBLIC_URL to the address the phones use.',
      });
      expect(await served(unset, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'phones.example.org' })).toEqual({
        desc: 'phone-reputation (phones.example.org; address guessed: set PUBLIC_URL)',
        warning:
          "This config's address was guessed from the request (Host, or a trusted proxy's X-Forwarded-*): set PUBLIC_URL.",
      });
      expect(await served(set)).toEqual({ desc: 'phone-reputation (phones.example.org)', warning: null });
      expect((await served(loopback)).desc).toBe('phone-reputation (localhost:3000; loopback address: set PUBLIC_URL)');
    } finally {
      await Promise.all([unset.close(), set.close(), loopback.close()]);
    }
  });

  it('comes from the Host header without PUBLIC_URL, and from X-Forwarded-* only when TRUST_PROXY trusts the proxy', async () => {
    const plain = await startTestServer({ overrides: { sources: scoredSources({}) } });
    const proxied = await startTestServer({
      env: { TRUST_PROXY: 'loopback' },
      overrides: { sources: scoredSources({}) },
    });
    try {
      const urlOf = async (server: TestServer, headers: Record<string, string>): Promise<string | undefined> =>
        ((await (await fetch(`${server.baseUrl}/integrations/spamblocker/query.json`, { headers })).json()) as QueryApi)
          .actions[1]?.url;
      const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'phones.example.org' };
      expect(await urlOf(plain, forwarded)).toBe(`${plain.baseUrl}/api/phone/{cc}{domestic}/verdict?wait=3500&cid=fr`);
      expect(await urlOf(proxied, forwarded)).toBe(
        'https://phones.example.org/api/phone/{cc}{domestic}/verdict?wait=3500&cid=fr',
      );
    } finally {
      await plain.close();
      await proxied.close();
    }
  });
});

describe("SpamBlocker config: the QR code of its address (the lookup page's setup section)", () => {
  it("is an SVG image of the config's address, built from the same base URL as the config", async () => {
    const pinned = await startTestServer({
      env: { PUBLIC_URL: 'https://phones.example.org' },
      overrides: { sources: scoredSources({}) },
    });
    const plain = await startTestServer({ overrides: { sources: scoredSources({}) } });
    try {
      const answer = await fetch(`${pinned.baseUrl}/integrations/spamblocker/query-qr.svg`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('x-public-url-warning')).toBeNull();
      const svg = await answer.text();
      expect(svg).toMatch(/^<\?xml [^>]+\?>\n<svg [^>]*viewBox="0 0 \d+ \d+"/);
      // Nothing in it a browser could run.
      expect(svg).not.toMatch(/<script|on\w+=|href=/i);
      expect(decodeQrSvg(svg)).toBe('https://phones.example.org/integrations/spamblocker/query.json');
      // Without PUBLIC_URL, the address the client reached.
      const guessed = await fetch(`${plain.baseUrl}/integrations/spamblocker/query-qr.svg`);
      // The same warning as query.json's: a phone cannot reach a loopback address.
      expect(guessed.headers.get('x-public-url-warning')).toBe(
        (await fetch(`${plain.baseUrl}/integrations/spamblocker/query.json`)).headers.get('x-public-url-warning'),
      );
      expect(guessed.headers.get('x-public-url-warning')).toMatch(/\S/);
      expect(decodeQrSvg(await guessed.text())).toBe(`${plain.baseUrl}/integrations/spamblocker/query.json`);
    } finally {
      await pinned.close();
      await plain.close();
    }
  });
});
