// The operator console's dashboard routes through the real app on loopback (docs/console.md):
// calls screened on `/verdict` and `/cid` move the hourly counts by verdict and by what decided,
// and enter the call log with their `/cid` line; `/admin/check` answers what `/verdict` and
// `/cid` answer and why; reports received and feed fetches show in `/admin/status`; bad queries
// are 400s naming the field, and every route wants the admin token. The clock is injected: a
// Monday afternoon in Paris, inside the legal calling hours.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scoredSources } from '../../harness/scored-sources.js';
import { InMemoryCallerReports, evidenceOf } from '../../harness/caller-reports.js';
import { startAdminServer, startTestServer, type TestServer } from '../../harness/servers.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${ADMIN}` };
// Monday 30 November 2026, 15:00 in Paris.
const AT_15_00 = Date.parse('2026-11-30T14:00:00Z');
const OUTSIDE_HOURS = '2026-11-30T20:30:00Z';

const SCORES = {
  '+33612345678': 9,
  '+33612345679': 2,
  '+33162123456': 2,
  '+33189712345': 2,
};

async function get(base: string, path: string, headers: Record<string, string> = AUTH) {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text === '' ? undefined : tryJson(text) };
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

interface Hour {
  hour: string;
  verdicts: Record<string, number>;
  decidedBy: Record<string, number>;
}
interface Call {
  at: string;
  number: string;
  verdict: string;
  decidedBy: string;
  cid: string;
}

function totals(hours: Hour[]): { verdicts: Record<string, number>; decidedBy: Record<string, number> } {
  const verdicts: Record<string, number> = {};
  const decidedBy: Record<string, number> = {};
  for (const hour of hours) {
    for (const [key, count] of Object.entries(hour.verdicts)) verdicts[key] = (verdicts[key] ?? 0) + count;
    for (const [key, count] of Object.entries(hour.decidedBy)) decidedBy[key] = (decidedBy[key] ?? 0) + count;
  }
  return { verdicts, decidedBy };
}

describe('the console’s dashboard routes (memory record)', () => {
  let server: TestServer;
  const clock = { nowMs: AT_15_00 };
  const reports = new InMemoryCallerReports({ '+33612345672': evidenceOf('spam', { fraud: 3 }) });

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-stats-'));
    server = await startTestServer({
      env: { LISTS_FILE: join(dir, 'lists.csv'), ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: scoredSources(SCORES), now: () => clock.nowMs, callerReports: reports },
    });
    const put = await fetch(`${server.baseUrl}/admin/lists/rules/${encodeURIComponent('+33612345671')}`, {
      method: 'PUT',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ list: 'block', label: 'Rings every day' }),
    });
    expect(put.status).toBe(201);
  });
  afterAll(() => server.close());

  // Each caller, what `/verdict` answers for it and what decided.
  const CALLS: Array<[path: string, verdict: string, decidedBy: string, number: string]> = [
    ['0612345678/verdict', 'block', 'score', '+33612345678'],
    ['0612345679/cid', 'allow', 'score', '+33612345679'],
    ['0612345670/verdict', 'unknown', 'none', '+33612345670'],
    ['0162123456/verdict', 'warn', 'npv', '+33162123456'],
    ['0189712345/verdict?cid=en', 'warn', 'call_centre', '+33189712345'],
    [`0162123456/verdict?at=${OUTSIDE_HOURS}`, 'block', 'legal_hours', '+33162123456'],
    ['0612345671/verdict', 'block', 'lists', '+33612345671'],
    ['0612345672/cid', 'block', 'reports', '+33612345672'],
    ['anonymous/verdict', 'allow', 'withheld', ''],
    ['12/verdict', 'unknown', 'invalid', ''],
  ];

  it('counts each screened call by verdict and by what decided, and logs it newest first with its /cid line', async () => {
    const before = totals((await get(server.baseUrl, '/admin/stats')).json as Hour[]);
    expect(before.verdicts).toEqual({ block: 0, warn: 0, allow: 0, unknown: 0 });
    for (const [path, verdict] of CALLS) {
      const answer = await get(server.baseUrl, `/api/phone/${path}`, {});
      expect(answer.status, path).toBe(200);
      if (path.includes('/verdict')) expect(answer.text.split('\n')[0], path).toBe(verdict);
    }
    // The JSON answers are not screened calls.
    expect((await get(server.baseUrl, '/api/phone/0612345678', {})).status).toBe(200);

    const stats = await get(server.baseUrl, '/admin/stats');
    expect(stats.status).toBe(200);
    expect(stats.headers.get('cache-control')).toBe('no-store');
    const hours = stats.json as Hour[];
    expect(hours).toHaveLength(24);
    expect(hours.at(-1)?.hour).toBe('2026-11-30T14:00:00.000Z');
    expect(hours[0]?.hour).toBe('2026-11-29T15:00:00.000Z');
    expect(hours[0]).toEqual({
      hour: '2026-11-29T15:00:00.000Z',
      verdicts: { block: 0, warn: 0, allow: 0, unknown: 0 },
      decidedBy: {
        lists: 0,
        reports: 0,
        score: 0,
        npv: 0,
        call_centre: 0,
        legal_hours: 0,
        withheld: 0,
        invalid: 0,
        none: 0,
      },
    });
    const counted = totals(hours);
    expect(counted.verdicts).toEqual({ block: 4, warn: 2, allow: 2, unknown: 2 });
    expect(counted.decidedBy).toEqual({
      lists: 1,
      reports: 1,
      score: 2,
      npv: 1,
      call_centre: 1,
      legal_hours: 1,
      withheld: 1,
      invalid: 1,
      none: 1,
    });

    const calls = (await get(server.baseUrl, '/admin/calls')).json as Call[];
    expect(calls.map((call) => [call.verdict, call.decidedBy, call.number])).toEqual(
      CALLS.map(([, verdict, decidedBy, number]) => [verdict, decidedBy, number]).reverse(),
    );
    expect(calls.every((call) => call.at === new Date(AT_15_00).toISOString())).toBe(true);
    // The /cid line, in French whatever language the call asked for.
    const line = (number: string, decidedBy: string) =>
      calls.find((call) => call.number === number && call.decidedBy === decidedBy)?.cid;
    expect(line('+33612345671', 'lists')).toBe('Rings every day');
    expect(line('+33162123456', 'legal_hours')).toBe(
      (await get(server.baseUrl, `/api/phone/0162123456/cid?at=${OUTSIDE_HOURS}`, {})).text,
    );
    expect(line('+33189712345', 'call_centre')).toBe((await get(server.baseUrl, '/api/phone/0189712345/cid', {})).text);
    expect(line('+33612345672', 'reports')).toBe((await get(server.baseUrl, '/api/phone/0612345672/cid', {})).text);
  });

  it('counts an answer the front cache gives as it counts a looked-up one', async () => {
    const count = async (): Promise<number> =>
      totals((await get(server.baseUrl, '/admin/stats')).json as Hour[]).decidedBy.score ?? 0;
    const before = await count();
    const sizeBefore = server.deps.app.frontCache?.size() ?? 0;
    // Looked up before: every slot is a fresh hit, so these are answered from the front cache.
    expect((await get(server.baseUrl, '/api/phone/0612345678/verdict', {})).text).toBe('block\n');
    expect((await get(server.baseUrl, '/api/phone/+33612345678/cid', {})).status).toBe(200);
    expect(server.deps.app.frontCache?.size()).toBeGreaterThanOrEqual(Math.max(1, sizeBefore));
    expect(await count()).toBe(before + 2);
    const [newest] = (await get(server.baseUrl, '/admin/calls?limit=1')).json as Call[];
    expect(newest).toMatchObject({ number: '+33612345678', verdict: 'block', decidedBy: 'score' });
  });

  it('filters the log by verdict, by what decided and by prefix, and bounds it by limit', async () => {
    const blocked = (await get(server.baseUrl, '/admin/calls?verdict=block')).json as Call[];
    expect(blocked.length).toBeGreaterThan(0);
    expect(blocked.every((call) => call.verdict === 'block')).toBe(true);
    const byNpv = (await get(server.baseUrl, '/admin/calls?decidedBy=npv')).json as Call[];
    expect(byNpv.map((call) => call.number)).toEqual(['+33162123456']);
    const mobiles = (await get(server.baseUrl, `/admin/calls?prefix=${encodeURIComponent('+3361234567')}`))
      .json as Call[];
    expect(mobiles.length).toBeGreaterThan(0);
    expect(mobiles.every((call) => call.number.startsWith('+3361234567'))).toBe(true);
    expect((await get(server.baseUrl, '/admin/calls?limit=2')).json).toHaveLength(2);
    // An unencoded `+` arrives as a space; digits alone are read the same.
    expect((await get(server.baseUrl, '/admin/calls?prefix=+3361234567')).json).toEqual(mobiles);
    expect((await get(server.baseUrl, '/admin/calls?prefix=3361234567')).json).toEqual(mobiles);
  });

  it('answers /admin/check with what /verdict and /cid answer, and why', async () => {
    for (const [path, verdict, decidedBy] of CALLS) {
      if (path.includes('?at=')) continue;
      const spelling = path.split('/')[0] ?? '';
      const checked = await get(server.baseUrl, `/admin/check/${spelling}`);
      expect(checked.status, spelling).toBe(200);
      const answer = checked.json as {
        verdict: string;
        decidedBy: string;
        cid: { fr: string; en: string };
        reasons: string[];
        rule: unknown;
      };
      expect([answer.verdict, answer.decidedBy], spelling).toEqual([verdict, decidedBy]);
      // A rule's label is the operator's own: the check shows it, as `/cid` does to a PBX.
      if (decidedBy === 'lists') expect(answer.cid).toEqual({ fr: 'Rings every day', en: 'Rings every day' });
      else {
        expect(answer.cid.fr, spelling).toBe((await get(server.baseUrl, `/api/phone/${spelling}/cid`, {})).text);
        expect(answer.cid.en, spelling).toBe(
          (await get(server.baseUrl, `/api/phone/${spelling}/cid?lang=en`, {})).text,
        );
      }
      expect(answer.reasons.length, spelling).toBeGreaterThan(0);
    }
    const listed = (await get(server.baseUrl, '/admin/check/0612345671')).json as { rule: Record<string, unknown> };
    expect(listed.rule).toMatchObject({ rule: '+33612345671', list: 'block', label: 'Rings every day' });
    expect(((await get(server.baseUrl, '/admin/check/0612345678')).json as { rule: unknown }).rule).toBeNull();
  });

  it('refuses a bad query with a 400 naming the field', async () => {
    for (const [query, field] of [
      ['/admin/stats?hours=0', 'hours'],
      ['/admin/stats?hours=169', 'hours'],
      ['/admin/stats?hours=many', 'hours'],
      ['/admin/calls?limit=1001', 'limit'],
      ['/admin/calls?limit=0', 'limit'],
      ['/admin/calls?verdict=maybe', 'verdict'],
      ['/admin/calls?decidedBy=luck', 'decidedBy'],
      ['/admin/calls?prefix=abc', 'prefix'],
      ['/admin/calls?prefix=%2B33-1', 'prefix'],
    ] as const) {
      const answer = await get(server.baseUrl, query);
      expect(answer.status, query).toBe(400);
      expect(answer.headers.get('content-type'), query).toContain('application/problem+json');
      expect((answer.json as { field?: string }).field, query).toBe(field);
    }
    expect((await get(server.baseUrl, '/admin/stats?hours=168')).json).toHaveLength(168);
  });

  it('wants the admin token on every route', async () => {
    for (const path of ['/admin/stats', '/admin/calls', '/admin/status', '/admin/check/0612345678']) {
      const answer = await get(server.baseUrl, path, {});
      expect(answer.status, path).toBe(401);
      expect(answer.headers.get('www-authenticate'), path).toContain('Bearer');
      const wrong = await get(server.baseUrl, path, {
        authorization: 'Bearer not-the-admin-token-not-the-admin-token',
      });
      expect(wrong.status, path).toBe(401);
    }
  });

  it('shows each source, reports received and tokens last used in /admin/status', async () => {
    const created = await fetch(`${server.baseUrl}/admin/tokens`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'Kitchen phone' }),
    });
    const token = (await created.json()) as { id: string; token: string };
    const before = (await get(server.baseUrl, '/admin/status')).json as {
      reports: { last24h: number; last7d: number };
    };
    const report = await fetch(`${server.baseUrl}/api/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone: '0612345678', rating: 'fraud' }),
    });
    expect(report.status).toBeLessThan(300);

    const status = await get(server.baseUrl, '/admin/status');
    expect(status.status).toBe(200);
    const body = status.json as {
      sources: Array<Record<string, unknown>>;
      feedClients: unknown[];
      reports: { last24h: number; last7d: number };
      tokens: Array<{ id: string; label: string; lastUsedAt: string | null }>;
    };
    expect(body.sources.map((source) => source.slot)).toEqual(['primary', 'community', 'signals']);
    for (const source of body.sources)
      expect(source).toMatchObject({ state: 'ok', failingSince: null, breaker: 'closed' });
    expect(body.reports.last24h).toBe(before.reports.last24h + 1);
    expect(body.reports.last7d).toBe(before.reports.last7d + 1);
    expect(body.feedClients).toEqual([]);
    const listed = body.tokens.find((entry) => entry.id === token.id);
    expect(listed?.label).toBe('Kitchen phone');
    expect(listed?.lastUsedAt).toBe('2026-11-30T14:00:00.000Z');
  });
});

describe('the console’s dashboard routes on ADMIN_PORT', () => {
  it('are served beside the other admin routes, under the same token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-stats-port-'));
    const admin = await startAdminServer(
      { HASH_SECRET: 'test-secret-0123456789', LISTS_FILE: join(dir, 'lists.csv') },
      ADMIN,
    );
    try {
      for (const path of ['/admin/stats?hours=2', '/admin/calls', '/admin/status']) {
        expect((await get(admin.base, path)).status, path).toBe(200);
        expect((await get(admin.base, path, {})).status, path).toBe(401);
      }
    } finally {
      await admin.close();
    }
  });
});

describe('the OpenAPI document of the dashboard routes', () => {
  it('describes each route and its answers, and validates', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-stats-doc-'));
    const server = await startTestServer({
      env: { LISTS_FILE: join(dir, 'lists.csv'), ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: scoredSources(SCORES) },
    });
    try {
      const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as {
        paths: Record<
          string,
          Record<string, { responses: Record<string, unknown>; parameters?: Array<{ name: string }> }>
        >;
      };
      for (const path of ['/admin/stats', '/admin/calls', '/admin/status', '/admin/check/{number}']) {
        const operation = document.paths[path]?.get;
        expect(operation, path).toBeDefined();
        expect(Object.keys(operation?.responses ?? {}), path).toEqual(expect.arrayContaining(['200', '401']));
      }
      expect(document.paths['/admin/stats']?.get?.parameters?.map((parameter) => parameter.name)).toEqual(['hours']);
      expect(document.paths['/admin/calls']?.get?.parameters?.map((parameter) => parameter.name).sort()).toEqual([
        'decidedBy',
        'limit',
        'prefix',
        'verdict',
      ]);
      await SwaggerParser.validate(
        structuredClone(document) as unknown as Awaited<ReturnType<typeof SwaggerParser.validate>>,
      );
    } finally {
      await server.close();
    }
  });
});

describe('a failing source in /admin/status', () => {
  it('says failing since its first failure in a row, and ok again once it answers', async () => {
    const clock = { nowMs: AT_15_00 };
    let failing = true;
    const sources = scoredSources(SCORES);
    const healthy = sources.primary.respond;
    sources.primary.respond = (number, signal) =>
      failing ? { status: 'error', reason: 'http_5xx' } : healthy(number, signal);
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-stats-failing-'));
    const server = await startTestServer({
      env: { LISTS_FILE: join(dir, 'lists.csv'), ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0', CACHE_TTL_S: '60' },
      overrides: { sources, now: () => clock.nowMs },
    });
    type Status = { sources: Array<{ slot: string; state: string; failingSince: string | null; breaker: string }> };
    const primary = async () =>
      ((await get(server.baseUrl, '/admin/status')).json as Status).sources.find((source) => source.slot === 'primary');
    try {
      await get(server.baseUrl, '/api/phone/0612345678/verdict', {});
      await get(server.baseUrl, '/api/phone/0612345679/verdict', {});
      const first = await primary();
      expect(first).toMatchObject({ state: 'failing', breaker: 'closed' });
      expect(first?.failingSince).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      // A second failure keeps the first one's time.
      await get(server.baseUrl, '/api/phone/0612345670/verdict', {});
      expect((await primary())?.failingSince).toBe(first?.failingSince);

      failing = false;
      await get(server.baseUrl, '/api/phone/0612345671/verdict', {});
      expect(await primary()).toMatchObject({ state: 'ok', failingSince: null });
    } finally {
      await server.close();
    }
  });
});
