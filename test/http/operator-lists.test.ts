// The operator's allow and block lists through the real server on loopback (docs/lists.md):
// precedence on /verdict, /cid and the JSON meta.list; a listed caller screened with every
// upstream black-holed and no request to them; a change seen on the next request past the front
// cache and its ETags; the lists file edited by hand (picked up; a broken edit refused with the
// old rules kept); the admin API's guard and its refusals, on the API port and alone on a port
// of its own.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { writeFileAtomically } from '../../src/infra/lists/file-list-store.js';
import { MAX_RULES } from '../../src/infra/lists/list-store.js';
import { labelValues } from '../support/contracts.js';
import { capturingLogger } from '../support/loggers.js';
import { healthyFakeSources, waitFor } from '../../harness/lookup.js';
import { startAdminServer, startTestServer, type TestServer } from '../../harness/servers.js';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const HEADER = 'rule,list,label,note,expiresAt,createdAt';

function listsFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'phone-rep-lists-')), 'lists.csv');
}

async function text(
  server: TestServer,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${server.baseUrl}${path}`, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

async function putRule(
  server: TestServer,
  rule: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = AUTH,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent(rule)}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function rules(server: TestServer): Promise<unknown> {
  return (await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: AUTH })).json();
}

describe('precedence through the real server (sources say score 8: block)', () => {
  let server: TestServer;
  const sources = healthyFakeSources();
  beforeAll(async () => {
    const file = listsFile();
    // An expired allow for 0699…: it no longer applies, so the sources' block stands.
    writeFileSync(file, `${HEADER}\n+33699*,allow,Old supplier,,2020-01-01T00:00:00.000Z,2019-01-01T00:00:00.000Z\n`);
    server = await startTestServer({
      env: { LISTS_FILE: file, ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0' },
      overrides: { sources },
    });
    for (const [rule, body] of [
      ['+33162*', { list: 'block' }],
      ['0162001234', { list: 'allow', label: 'Ma banque', labelPublic: true }],
      ['+33612*', { list: 'allow' }],
      ['+336123456*', { list: 'block', label: 'Robot', labelPublic: true }],
      ['+33612345678*', { list: 'block' }],
      ['06 12 34 56 78', { list: 'allow' }],
    ] as const) {
      expect((await putRule(server, rule, body)).status).toBe(201);
    }
  });
  afterAll(() => server.close());

  const cases = [
    {
      name: 'an exact allow inside a blocked prefix',
      number: '0162001234',
      verdict: 'allow',
      cidFr: 'Ma banque',
      cidEn: 'Ma banque',
      list: { list: 'allow', rule: '+33162001234', label: 'Ma banque' },
    },
    {
      name: 'the blocked prefix around it',
      number: '0162001235',
      verdict: 'block',
      cidFr: 'Bloqué par l’administrateur',
      cidEn: 'Blocked by the administrator',
      list: { list: 'block', rule: '+33162*', label: null },
    },
    {
      name: 'a longer block inside an allowed prefix',
      number: '0612345670',
      verdict: 'block',
      cidFr: 'Robot',
      cidEn: 'Robot',
      list: { list: 'block', rule: '+336123456*', label: 'Robot' },
    },
    {
      name: 'the allowed prefix (over a score of 8)',
      number: '0612000001',
      verdict: 'allow',
      cidFr: 'Autorisé par l’administrateur',
      cidEn: 'Allowed by the administrator',
      list: { list: 'allow', rule: '+33612*', label: null },
    },
    {
      name: 'allow beats block at equal length',
      number: '0612345678',
      verdict: 'allow',
      cidFr: 'Autorisé par l’administrateur',
      cidEn: 'Allowed by the administrator',
      list: { list: 'allow', rule: '+33612345678', label: null },
    },
    {
      name: 'an expired rule (the sources decide)',
      number: '0699000001',
      verdict: 'block',
      cidFr: undefined,
      cidEn: undefined,
      list: null,
    },
  ] as const;

  it.each(cases)(
    '$name: /verdict, /cid in both languages and meta.list of the report and the score',
    async ({ number, verdict, cidFr, cidEn, list }) => {
      const answer = await text(server, `/api/phone/${number}/verdict`);
      expect(answer.body).toBe(`${verdict}\n`);
      const fr = await text(server, `/api/phone/${number}/cid`);
      const en = await text(server, `/api/phone/${number}/cid?lang=en`);
      if (cidFr !== undefined) {
        expect(fr.body).toBe(cidFr);
        expect(en.body).toBe(cidEn);
        expect(answer.headers.get('x-operator-list')).toBe(verdict);
        expect(answer.headers.get('cache-control')).toBe('no-store');
      } else {
        expect(fr.body).toMatch(/^SPAM\? 8\/9/);
        expect(answer.headers.get('x-operator-list')).toBeNull();
      }
      for (const path of [`/api/phone/${number}`, `/api/phone/${number}/score`]) {
        const json = (await (await fetch(`${server.baseUrl}${path}`)).json()) as { meta: { list: unknown } };
        expect(json.meta.list).toEqual(list);
      }
    },
  );

  it('the score and the report still say what the sources say', async () => {
    const score = (await (await fetch(`${server.baseUrl}/api/phone/0612000001/score`)).json()) as {
      data: { score: number; risk: string };
    };
    expect(score.data).toMatchObject({ score: 8, risk: 'suspicious' });
  });

  it('counts the answers a list decided, per list, and the rules in force', async () => {
    const metrics = await text(server, '/metrics');
    expect(metrics.body).toMatch(/phone_rep_list_rules\{list="allow"\} 3/);
    expect(metrics.body).toMatch(/phone_rep_list_rules\{list="block"\} 3/);
    expect(metrics.body).toMatch(/phone_rep_list_matches_total\{list="block"\} [1-9]/);
    // No label carries a number or a rule, and no number used here appears anywhere (a bare
    // "0612" would also match a memory figure such as 120612352).
    for (const value of labelValues(metrics.body)) expect(value).not.toMatch(/\+33|\d{6,}/);
    for (const digits of ['162001234', '612345670', '612000001', '699000001', '612345678'])
      expect(metrics.body).not.toContain(digits);
  });
});

describe('a listed caller with every upstream black-holed', () => {
  let server: TestServer;
  let sites: FakeUpstreamSites;
  beforeAll(async () => {
    sites = await startFakeUpstreamSites({
      fallback: {
        tellowsApi: { blackHole: true },
        tellowsWeb: { blackHole: true },
        numeroinconnu: { blackHole: true },
        telguarder: { blackHole: true },
      },
    });
    server = await startTestServer({ env: { ...sites.env(), LISTS_FILE: listsFile(), ADMIN_TOKEN: TOKEN } });
    await putRule(server, '0162*', { list: 'block' });
    await putRule(server, '+33612345678', { list: 'allow', label: 'Fournisseur', labelPublic: true });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  it('is answered at once on both text routes, and no fake site receives a request', async () => {
    const started = performance.now();
    expect((await text(server, '/api/phone/0162001235/verdict')).body).toBe('block\n');
    expect((await text(server, '/api/phone/0612345678/verdict')).body).toBe('allow\n');
    expect((await text(server, '/api/phone/0612345678/cid')).body).toBe('Fournisseur');
    expect((await text(server, '/api/phone/0162001235/cid?lang=en')).body).toBe('Blocked by the administrator');
    // The lookup deadline (LOOKUP_TIMEOUT_MS, 4 s) is what an unlisted number would wait for.
    expect(performance.now() - started).toBeLessThan(server.config.LOOKUP_TIMEOUT_MS);
    expect(sites.total()).toBe(0);
  });
});

describe('a change takes effect on the next request', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { LISTS_FILE: listsFile(), ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(() => server.close());

  it('a verdict served from the front cache, then a rule added, changed, removed', async () => {
    const number = '0612000001';
    await text(server, `/api/phone/${number}/verdict`);
    const cached = await text(server, `/api/phone/${number}/verdict`);
    expect(cached.body).toBe('block\n');
    // Served from the front cache: an ETag and a max-age.
    const etag = cached.headers.get('etag');
    expect(etag).not.toBeNull();
    expect(cached.headers.get('cache-control')).toMatch(/max-age=/);
    const report = await text(server, `/api/phone/${number}`);
    const reportEtag = report.headers.get('etag') ?? '';
    expect((JSON.parse(report.body) as { meta: { list: unknown } }).meta.list).toBeNull();

    await putRule(server, number, { list: 'allow', label: 'Livreur', labelPublic: true });
    const allowed = await text(server, `/api/phone/${number}/verdict`, { headers: { 'if-none-match': etag ?? '' } });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toBe('allow\n');
    const reportAfter = await text(server, `/api/phone/${number}`, { headers: { 'if-none-match': reportEtag } });
    expect(reportAfter.status).toBe(200);
    expect((JSON.parse(reportAfter.body) as { meta: { list: unknown } }).meta.list).toEqual({
      list: 'allow',
      rule: '+33612000001',
      label: 'Livreur',
    });

    const replaced = await putRule(server, number, { list: 'block' });
    expect(replaced).toMatchObject({ status: 200, json: { replaced: true } });
    expect((await text(server, `/api/phone/${number}/cid?lang=en`)).body).toBe('Blocked by the administrator');

    expect(
      (await fetch(`${server.baseUrl}/admin/lists/rules/%2B33612000001`, { method: 'DELETE', headers: AUTH })).status,
    ).toBe(204);
    expect((await text(server, `/api/phone/${number}/cid?lang=en`)).body).toMatch(/^SPAM\? 8\/9/);
    const back = await text(server, `/api/phone/${number}`, { headers: { 'if-none-match': reportEtag } });
    expect(back.status).toBe(304);
  });
});

describe('the lists file', () => {
  let server: TestServer;
  let file: string;
  const log = capturingLogger();
  beforeAll(async () => {
    file = listsFile();
    writeFileSync(file, `${HEADER}\n+33162*,block,,,,2026-01-01T00:00:00.000Z\n`);
    server = await startTestServer({
      env: { LISTS_FILE: file, RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
      logger: log.logger,
    });
  });
  afterAll(() => server.close());

  const verdictOf = async (number: string): Promise<string> =>
    (await text(server, `/api/phone/${number}/verdict`)).body;

  it('a hand edit is picked up without a restart', async () => {
    expect(await verdictOf('0162001235')).toBe('block\n');
    writeFileSync(file, `${HEADER},labelPublic\n+33162*,allow,Edited,,,2026-01-01T00:00:00.000Z,true\n`);
    let seen = '';
    await waitFor(() => log.lines.some((line) => line.msg === 'lists file read' && line.rules === 1), 5000);
    seen = await verdictOf('0162001235');
    expect(seen).toBe('allow\n');
    expect((await text(server, '/api/phone/0162001235/cid')).body).toBe('Edited');
  });

  it('a broken hand edit is refused with a log line naming the line, and the rules in force stay', async () => {
    writeFileSync(
      file,
      `${HEADER}\n+33162*,allow,Edited,,,2026-01-01T00:00:00.000Z\n+33163*,sometimes,,,,2026-01-01T00:00:00.000Z\n`,
    );
    await waitFor(() => log.lines.some((line) => line.level === 50 && line.line === 3), 5000);
    const refusal = log.lines.find((line) => line.level === 50 && line.line === 3);
    expect(String(refusal?.msg)).toMatch(/line 3: list: list is allow or block/);
    expect(await verdictOf('0162001235')).toBe('allow\n');
    // No number in clear in any log line.
    expect(log.raw.join('\n')).not.toMatch(/0162001235|\+33162001235/);
  });

  it('a hand-edited rule that is refused is logged as its keyed hash, never the number in clear', async () => {
    writeFileSync(
      file,
      `${HEADER}\n+33162*,allow,Edited,,,2026-01-01T00:00:00.000Z\n06 12 34 56 7,block,,,,2026-01-01T00:00:00.000Z\n`,
    );
    const refusedRule = (line: Record<string, unknown>): boolean =>
      line.level === 50 && String(line.reason).startsWith('rule:');
    await waitFor(() => log.lines.some(refusedRule), 5000);
    const refusal = log.lines.find(refusedRule);
    expect(String(refusal?.msg)).toContain(
      `line 3: rule: rule hashed ${server.deps.app.hashKey('06 12 34 56 7')} is neither a number`,
    );
    expect(log.raw.join('\n')).not.toMatch(/06 12 34 56 7|\+3361234567/);
  });

  it('a file that does not parse stops the start, naming the file and the line', async () => {
    const broken = listsFile();
    writeFileSync(
      broken,
      `${HEADER}\n+33162*,block,,,,2026-01-01T00:00:00.000Z\n+33163*,sometimes,,,,2026-01-01T00:00:00.000Z\n`,
    );
    await expect(
      startTestServer({ env: { LISTS_FILE: broken }, overrides: { sources: healthyFakeSources() } }),
    ).rejects.toThrow(`the lists file ${broken} does not parse: line 3: list:`);
  });

  it('writes through the service keep a file that parses, with createdAt', async () => {
    await writeFileAtomically(file, `${HEADER}\n`);
    await waitFor(() => log.lines.some((line) => line.msg === 'lists file read' && line.rules === 0), 5000);
    expect(await verdictOf('0162001235')).toBe('block\n');
    expect(readFileSync(file, 'utf8')).toBe(`${HEADER}\n`);
  });
});

describe('the admin API', () => {
  let server: TestServer;
  const log = capturingLogger();
  beforeAll(async () => {
    server = await startTestServer({
      env: { LISTS_FILE: listsFile(), ADMIN_TOKEN: TOKEN, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_S: '60' },
      logger: log.logger,
      overrides: { sources: healthyFakeSources() },
    });
    await putRule(server, '+33162*', { list: 'block', label: 'NPV' });
  });
  afterAll(() => server.close());

  it('is off without ADMIN_TOKEN, and a short token stops the start naming the variable', async () => {
    const off = await startTestServer({
      env: { LISTS_FILE: listsFile() },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      expect((await fetch(`${off.baseUrl}/admin/lists/rules`, { headers: AUTH })).status).toBe(404);
    } finally {
      await off.close();
    }
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow(
      /ADMIN_TOKEN=\(5 characters, not shown\) is not valid: expected a string of 32\+ characters/,
    );
  });

  it('answers no-store, no CORS, and the rules as JSON', async () => {
    const response = await fetch(`${server.baseUrl}/admin/lists/rules`, {
      headers: { ...AUTH, origin: 'https://example.org' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(await response.json()).toEqual([expect.objectContaining({ rule: '+33162*', list: 'block', label: 'NPV' })]);
  });

  it('refuses bad input with a 400 naming the field, and changes nothing', async () => {
    const before = await rules(server);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    for (const [rule, body, field] of [
      ['hello', { list: 'block' }, 'rule'],
      ['+3*', { list: 'block' }, 'rule'],
      ['0*', { list: 'block' }, 'rule'],
      ['+33163*', { list: 'maybe' }, 'list'],
      ['+33163*', { list: 'block', label: 'bad\u0007label' }, 'label'],
      ['+33163*', { list: 'block', label: 'x'.repeat(61) }, 'label'],
      ['+33163*', { list: 'block', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
      ['+33163*', { list: 'block', expiresAt: 'soon' }, 'expiresAt'],
      ['+33163*', { list: 'block', note: 'n'.repeat(5000), expiresAt: future }, 'body'],
    ] as const) {
      const answer = await putRule(server, rule, body);
      expect({ rule, status: answer.status, field: answer.json.field }).toEqual({ rule, status: 400, field });
      expect(String(answer.json.type)).toBe('/problems/bad-request');
    }
    const bad = await fetch(`${server.baseUrl}/admin/lists/import`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'text/csv' },
      body: 'rule,list,label,note,expiresAt\n+33164*,block,,,\n+33165*,block,bad;label,,\n',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ field: 'label', line: 3 });
    expect(await rules(server)).toEqual(before);
  });

  it('imports and exports the CLI CSV', async () => {
    const imported = await fetch(`${server.baseUrl}/admin/lists/import`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'text/csv' },
      body: 'rule,list,label,note,expiresAt\n+33164*,block,,"a, note",\n0612345678,allow,Ami,,\n',
    });
    expect(await imported.json()).toEqual({ added: 2, replaced: 0 });
    const exported = await text(server, '/admin/lists/export', { headers: AUTH });
    expect(exported.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(exported.body.split('\n')[0]).toBe('rule,list,label,note,expiresAt,labelPublic');
    expect(exported.body).toContain('+33164*,block,,"a, note",');
    expect(exported.body).toContain('+33612345678,allow,Ami,,');
  });

  it('exports a label or note a spreadsheet would run as a formula with a quote before it, and imports it back as it was', async () => {
    expect((await putRule(server, '+33166*', { list: 'block', label: '=HYPERLINK(x)', note: '@SUM(A1)' })).status).toBe(
      201,
    );
    const exported = await text(server, '/admin/lists/export', { headers: AUTH });
    expect(exported.body).toContain("+33166*,block,'=HYPERLINK(x),'@SUM(A1),");
    const line = exported.body.split('\n').find((row) => row.startsWith('+33166*'));
    const again = await fetch(`${server.baseUrl}/admin/lists/import`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'text/csv' },
      body: `rule,list,label,note,expiresAt,labelPublic\n${line ?? ''}\n`,
    });
    expect(await again.json()).toEqual({ added: 0, replaced: 1 });
    expect(await rules(server)).toContainEqual(
      expect.objectContaining({ rule: '+33166*', label: '=HYPERLINK(x)', note: '@SUM(A1)' }),
    );
  });

  it('an import over the size bound is a 413 naming it, and changes nothing', async () => {
    const before = await rules(server);
    const body = `rule,list,label,note,expiresAt\n${'+33167*,block,,,\n'.repeat(MAX_RULES + 1)}`;
    const refused = await fetch(`${server.baseUrl}/admin/lists/import`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'text/csv' },
      body,
    });
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({
      type: '/problems/lists-too-large',
      field: 'body',
      detail: expect.stringContaining(`an import brings at most ${MAX_RULES}`),
    });
    expect(await rules(server)).toEqual(before);
  });

  it('writes an audit line per change with the rule hashed', () => {
    const audits = log.lines.filter((line) => line.audit === 'lists');
    expect(audits.length).toBeGreaterThanOrEqual(2);
    expect(audits[0]).toMatchObject({ who: 'admin', action: 'add', list: 'block' });
    expect(String(audits[0]?.rule)).toMatch(/^[0-9a-f]{16,}$|^[A-Za-z0-9_-]{16,}$/);
    expect(log.raw.filter((line) => line.includes('"audit"')).join('\n')).not.toMatch(/\+33|0612345678/);
  });

  it('401 with WWW-Authenticate for a missing token, a wrong one, or one in the query; failures count against the rate limit', async () => {
    const missing = await fetch(`${server.baseUrl}/admin/lists/rules`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await fetch(`${server.baseUrl}/admin/lists/rules`, {
      headers: { authorization: `Bearer ${TOKEN}x` },
    });
    expect(wrong.status).toBe(401);
    const query = await fetch(`${server.baseUrl}/admin/lists/rules?token=${TOKEN}`, { headers: AUTH });
    expect(query.status).toBe(401);
    // RATE_LIMIT_MAX=3: the fourth failure is refused by the limit.
    expect(
      (await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(429);
    // A correct token is not counted.
    expect((await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: AUTH })).status).toBe(200);
  });

  it('is in the OpenAPI document under its own tag and security scheme', async () => {
    const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { tags?: string[]; security?: unknown }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(document.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.paths['/admin/lists/rules/{rule}']?.put).toMatchObject({
      tags: ['admin'],
      security: [{ adminToken: [] }],
    });
  });
});

describe('the admin API alone on ADMIN_PORT', () => {
  it('serves the lists over a real socket of its own', async () => {
    const admin = await startAdminServer({ HASH_SECRET: 'test-secret-0123456789', LISTS_FILE: listsFile() }, TOKEN);
    const { base, deps } = admin;
    try {
      const put = await fetch(`${base}/admin/lists/rules/%2B33162%2A`, {
        method: 'PUT',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: '{"list":"block"}',
      });
      expect(put.status).toBe(201);
      expect((await fetch(`${base}/admin/lists/rules`)).status).toBe(401);
      expect((await fetch(`${base}/api/phone/0612345678`)).status).toBe(404);
      expect(deps.lists.match('+33162001235')).toEqual({
        list: 'block',
        rule: '+33162*',
        label: null,
        labelPublic: false,
      });
    } finally {
      await admin.close();
    }
  });
});
