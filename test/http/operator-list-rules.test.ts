// Issue 44 through the real server on loopback: what a rule is stored as (national prefixes of
// overseas ranges, a trunk 0 after the calling code, an expiry that is no calendar date), and a
// malformed caller under a blocked prefix (docs/lists.md).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${TOKEN}` };

async function putRule(
  server: TestServer,
  rule: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent(rule)}`, {
    method: 'PUT',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function text(server: TestServer, path: string): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${server.baseUrl}${path}`);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

async function storedRules(server: TestServer): Promise<Array<{ rule: string }>> {
  return (await (await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: AUTH })).json()) as Array<{
    rule: string;
  }>;
}

describe('what a rule is stored as', () => {
  let server: TestServer;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    server = await startTestServer({
      env: { LISTS_FILE: file, ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(() => server.close());

  it('a national prefix of an overseas range is stored as the callers are read, and blocks them (finding 5)', async () => {
    expect(await putRule(server, '0692*', { list: 'block' })).toMatchObject({
      status: 201,
      json: { rule: { rule: '+262692*' } },
    });
    expect(await putRule(server, '0262*', { list: 'block' })).toMatchObject({
      status: 201,
      json: { rule: { rule: '+262262*' } },
    });
    expect((await text(server, '/api/phone/0692123456/verdict')).body).toBe('block\n');
    expect((await text(server, '/api/phone/+262262123456/verdict')).body).toBe('block\n');
    const report = (await (await fetch(`${server.baseUrl}/api/phone/0692123456`)).json()) as {
      meta: { list: unknown };
    };
    expect(report.meta.list).toEqual({ list: 'block', rule: '+262692*', label: null });
  });

  it('a national prefix spanning calling codes is refused with the reason, and nothing is stored (finding 5)', async () => {
    const before = await storedRules(server);
    const refused = await putRule(server, '06*', { list: 'block' });
    expect(refused).toMatchObject({ status: 400, json: { field: 'rule' } });
    expect(String(refused.json.detail)).toContain('several calling codes');
    expect(await storedRules(server)).toEqual(before);
  });

  it('a trunk 0 after the calling code is dropped: +33 (0)1 62* and 0033 0162* are +33162* (finding 12)', async () => {
    expect(await putRule(server, '+33 (0)1 62*', { list: 'block' })).toMatchObject({
      status: 201,
      json: { rule: { rule: '+33162*' } },
    });
    expect(await putRule(server, '0033 0162*', { list: 'block' })).toMatchObject({
      status: 200,
      json: { rule: { rule: '+33162*' }, replaced: true },
    });
    expect((await text(server, '/api/phone/0162001234/verdict')).body).toBe('block\n');
    const refused = await putRule(server, '+33 00*', { list: 'block', force: true });
    expect(refused).toMatchObject({ status: 400, json: { field: 'rule' } });
    expect(String(refused.json.detail)).toContain('can match no number');
  });

  it('an expiry that names no calendar day is refused, not rolled over (finding 24)', async () => {
    const before = await storedRules(server);
    const refused = await putRule(server, '+33163*', { list: 'block', expiresAt: '2031-02-30' });
    expect(refused).toMatchObject({ status: 400, json: { field: 'expiresAt' } });
    expect(String(refused.json.detail)).toContain('2031-02-30');
    const imported = await fetch(`${server.baseUrl}/admin/lists/import`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'text/csv' },
      body: 'rule,list,label,note,expiresAt\n+33164*,block,,,2031-02-30\n',
    });
    expect(imported.status).toBe(400);
    expect(await imported.json()).toMatchObject({ field: 'expiresAt', line: 2 });
    expect(await storedRules(server)).toEqual(before);
  });
});

describe('a caller with a wrong digit count under a blocked prefix (finding 6)', () => {
  let server: TestServer;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    server = await startTestServer({
      env: { LISTS_FILE: file, ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    expect((await putRule(server, '+225*', { list: 'block', label: 'Pays' })).status).toBe(201);
    expect((await putRule(server, '0162*', { list: 'block' })).status).toBe(201);
    expect((await putRule(server, '+44*', { list: 'allow' })).status).toBe(201);
  });
  afterAll(() => server.close());

  it.each([
    ['+225 01 02 03', '+225*'],
    ['00225010203040506', '+225*'],
    ['sip:+22501@pbx', '+225*'],
    ['2250102030405060', '+225*'],
    ['0162 00 12 3', '+33162*'],
    ['01 62 00 12 34 56', '+33162*'],
    ['+33 (0)1 62 00 12', '+33162*'],
  ])('%s is answered block on /verdict and /cid, and its 400 carries meta.list', async (spelling, rule) => {
    const encoded = encodeURIComponent(spelling);
    const verdict = await text(server, `/api/phone/${encoded}/verdict`);
    expect(verdict.body).toBe('block\n');
    expect(verdict.headers.get('x-operator-list')).toBe('block');
    expect((await text(server, `/api/phone/${encoded}/verdict?cid=en`)).body).toMatch(/^block\n.+\n$/);
    expect((await text(server, `/api/phone/${encoded}/cid?lang=en`)).body).not.toMatch(/invalid|unknown/i);
    for (const path of [`/api/phone/${encoded}`, `/api/phone/${encoded}/score`]) {
      const answer = await fetch(`${server.baseUrl}${path}`);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ code: 'invalid_number', meta: { list: { list: 'block', rule } } });
    }
  });

  it('an allowed prefix does not vouch for a malformed number, nor does an unlisted range block one', async () => {
    for (const spelling of ['+44 20 12', '+226 01 02']) {
      const encoded = encodeURIComponent(spelling);
      expect((await text(server, `/api/phone/${encoded}/verdict`)).headers.get('x-operator-list')).toBeNull();
      const answer = (await (await fetch(`${server.baseUrl}/api/phone/${encoded}`)).json()) as Record<string, unknown>;
      expect(answer).toMatchObject({ code: 'invalid_number' });
      expect(answer.meta).toBeUndefined();
    }
  });
});

describe('a label is public only when the operator says so', () => {
  const servers: TestServer[] = [];
  async function serverWith(env: Record<string, string>): Promise<TestServer> {
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    const server = await startTestServer({
      env: { LISTS_FILE: file, ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0', ...env },
      overrides: { sources: healthyFakeSources() },
    });
    servers.push(server);
    expect((await putRule(server, '0612345678', { list: 'allow', label: 'Dr Martin' })).json).toMatchObject({
      rule: { rule: '+33612345678', label: 'Dr Martin' },
    });
    expect(
      (await putRule(server, '0612345679', { list: 'allow', label: 'Pharmacie', labelPublic: true })).json,
    ).toMatchObject({ rule: { label: 'Pharmacie', labelPublic: true } });
    expect((await putRule(server, '+225*', { list: 'block', label: 'Ex' })).status).toBe(201);
    return server;
  }
  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  const metaList = async (server: TestServer, path: string): Promise<unknown> =>
    ((await (await fetch(`${server.baseUrl}${path}`)).json()) as { meta?: { list: unknown } }).meta?.list;

  it('to anyone: a private label is left out of /cid and meta.list, a public one is shown', async () => {
    const server = await serverWith({});
    expect((await text(server, '/api/phone/0612345678/cid')).body).toBe('Autorisé par l’administrateur');
    expect((await text(server, '/api/phone/0612345678/verdict?cid=en')).body).toBe(
      'allow\nAllowed by the administrator\n',
    );
    expect(await metaList(server, '/api/phone/0612345678')).toEqual({
      list: 'allow',
      rule: '+33612345678',
      label: null,
    });
    expect(await metaList(server, '/api/phone/0612345678/score')).toEqual({
      list: 'allow',
      rule: '+33612345678',
      label: null,
    });
    expect((await text(server, '/api/phone/0612345679/cid')).body).toBe('Pharmacie');
    expect(await metaList(server, '/api/phone/0612345679')).toEqual({
      list: 'allow',
      rule: '+33612345679',
      label: 'Pharmacie',
    });
    // A malformed caller under a blocked prefix: the 400's meta.list hides the label too.
    expect(await metaList(server, `/api/phone/${encodeURIComponent('+225 01 02')}`)).toEqual({
      list: 'block',
      rule: '+225*',
      label: null,
    });
    expect((await text(server, `/api/phone/${encodeURIComponent('+225 01 02')}/cid?lang=en`)).body).toBe(
      'Blocked by the administrator',
    );
    // The admin API and the export keep the flag.
    const exported = await text(server, '/admin/lists/export');
    expect(exported.status).toBe(401);
    const csv = await (await fetch(`${server.baseUrl}/admin/lists/export`, { headers: AUTH })).text();
    expect(csv.split('\n')[0]).toBe('rule,list,label,note,expiresAt,labelPublic');
    expect(csv).toContain('+33612345679,allow,Pharmacie,,,true\n');
    expect(csv).toContain('+33612345678,allow,Dr Martin,,,\n');
  });

  it('to a PBX (a RATE_LIMIT_EXEMPT address): /verdict and /cid keep the label, the JSON answers still hide it', async () => {
    const server = await serverWith({ RATE_LIMIT_EXEMPT: '127.0.0.1,::1' });
    expect((await text(server, '/api/phone/0612345678/cid')).body).toBe('Dr Martin');
    expect((await text(server, '/api/phone/0612345678/verdict?cid=en')).body).toBe('allow\nDr Martin\n');
    expect((await text(server, `/api/phone/${encodeURIComponent('+225 01 02')}/cid`)).body).toBe('Ex');
    expect(await metaList(server, '/api/phone/0612345678')).toEqual({
      list: 'allow',
      rule: '+33612345678',
      label: null,
    });
  });

  it('a labelPublic that is no boolean is refused, and nothing is stored', async () => {
    const server = servers[0];
    if (server === undefined) throw new Error('the first test starts a server');
    const before = await storedRules(server);
    expect(await putRule(server, '0612345670', { list: 'allow', label: 'X', labelPublic: 'yes' })).toMatchObject({
      status: 400,
    });
    const imported = await fetch(`${server.baseUrl}/admin/lists/import`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'text/csv' },
      body: 'rule,list,label,note,expiresAt,labelPublic\n+33612345670,allow,X,,,yes\n',
    });
    expect(imported.status).toBe(400);
    expect(await imported.json()).toMatchObject({ field: 'labelPublic', line: 2 });
    expect(await storedRules(server)).toEqual(before);
  });
});

describe('a rule stored under a spelling read differently now', () => {
  it('is still removed by its own spelling', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
    writeFileSync(file, 'rule,list,label,note,expiresAt,createdAt\n+33692*,block,,,,2026-01-01T00:00:00.000Z\n');
    const server = await startTestServer({
      env: { LISTS_FILE: file, ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      expect((await storedRules(server)).map((rule) => rule.rule)).toEqual(['+33692*']);
      expect(
        (
          await fetch(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent('+33692*')}`, {
            method: 'DELETE',
            headers: AUTH,
          })
        ).status,
      ).toBe(204);
      expect(await storedRules(server)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
