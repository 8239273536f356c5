// The admin API the operator's console uses (docs/console.md "Admin API for the console"), through
// the real server on loopback with its real stores: the search over 100,000 rules, the lists'
// decision for a typed number, the review of the reported numbers and their dismissal (kept with
// the votes: the file beside the lists, or Redis shared by two instances), the SpamBlocker configs
// and QR code answered with a new token, and the setup check, which never shows a secret.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { decodeQrSvg } from '../support/qr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startReportingServer, type ReportingServer } from '../../harness/reporting-server.js';
import { startAdminServer } from '../../harness/servers.js';
import { capturingLogger } from '../support/loggers.js';
import { TEST_REDIS_URL, uniqueKeyPrefix, connectAdmin, deleteKeys, waitFor } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${ADMIN}` };

// Secrets the setup must never show, nor any part of them.
const SECRETS = {
  ADMIN_TOKEN: ADMIN,
  HASH_SECRET: 'hash-secret-never-shown-0123',
  FEED_PASSWORD: 'feed-password-never-shown',
  TELLOWS_API_KEY: 'tellows-key-never-shown',
  TELLOWS_API_URL: 'https://api-user:url-password-never-shown@tellows.example/api?apikey=url-key-never-shown&x=1',
};

interface Answer {
  status: number;
  json: unknown;
  text: string;
  headers: Headers;
}

async function call(base: string, method: string, path: string, body?: unknown, headers = AUTH): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'text/csv' : 'application/json' }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    json: text === '' || !text.startsWith('{') ? undefined : (JSON.parse(text) as unknown),
    headers: response.headers,
  };
}

const reportBody = (phone: string, rating: string, comment?: string): string =>
  JSON.stringify({ phone, rating, ...(comment === undefined ? {} : { comment }) });

async function sendReport(server: ReportingServer, secret: string, body: string): Promise<number> {
  const response = await fetch(`${server.baseUrl}/api/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body,
  });
  await response.text();
  return response.status;
}

interface ReviewPage {
  total: number;
  offset: number;
  limit: number;
  numbers: Array<{
    number: string;
    verdict: string;
    reporters: number;
    ratings: Record<string, number>;
    labels: string[];
    comments: string[];
    lastAt: string;
    dismissed: boolean;
    dismissedAt: string | null;
    list: string | null;
  }>;
}

const review = async (server: ReportingServer, query = ''): Promise<ReviewPage> => {
  const answer = await call(server.baseUrl, 'GET', `/admin/reports${query}`);
  expect(answer.status).toBe(200);
  return answer.json as ReviewPage;
};

describe('the admin API of the console (file store)', () => {
  let server: ReportingServer;
  const log = capturingLogger();
  beforeAll(async () => {
    server = await startReportingServer({
      env: {
        ...SECRETS,
        RATE_LIMIT_MAX: '0',
        PUBLIC_URL: 'https://phones.example.org',
        REPORT_MIN_REPORTERS: '2',
        REPORT_MAX_PER_TOKEN_DAY: '1000',
      },
      overrides: { sources: healthyFakeSources(), metricsRenderIntervalMs: 0 },
      logger: log.logger,
    });
  });
  afterAll(() => server.close());

  it('answers 401 to every route of the console without the admin token, and no-store with it', async () => {
    const routes: Array<[string, string]> = [
      ['GET', '/admin/lists/search?q=1'],
      ['GET', '/admin/lists/decide/0612345678'],
      ['GET', '/admin/reports'],
      ['POST', '/admin/reports/0612345678/dismiss'],
      ['DELETE', '/admin/reports/0612345678/dismiss'],
      ['GET', '/admin/setup'],
    ];
    for (const [method, path] of routes) {
      const refused = await call(server.baseUrl, method, path, undefined, { authorization: 'Bearer wrong-token' });
      expect(refused.status, `${method} ${path}`).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer /);
      const bare = await call(server.baseUrl, method, path, undefined, {} as typeof AUTH);
      expect(bare.status, `${method} ${path}`).toBe(401);
    }
    const setup = await call(server.baseUrl, 'GET', '/admin/setup');
    expect(setup.status).toBe(200);
    expect(setup.headers.get('cache-control')).toBe('no-store');
  });

  it('pages and searches through 100,000 rules: digits, national spelling, label and note, list', async () => {
    // 100,000 prefix rules; every 1000th with a label, every 5000th with a note, every other allow.
    const csv = [
      'rule,list,label,note,expiresAt',
      ...Array.from({ length: 100_000 }, (_, at) => {
        const label = at % 1000 === 0 ? `Agence ${at / 1000}` : '';
        const note = at % 5000 === 0 ? `Rappel SOCIÉTÉ ${at}` : '';
        return `+3361${String(at).padStart(6, '0')}*,${at % 2 === 0 ? 'allow' : 'block'},${label},${note},`;
      }),
    ].join('\n');
    const imported = await call(server.baseUrl, 'POST', '/admin/lists/import', csv);
    expect(imported.status).toBe(200);
    const spelling = (at: number): string => `+3361${String(at).padStart(6, '0')}*`;
    type Page = { total: number; offset: number; limit: number; rules: Array<Record<string, unknown>> };
    const search = async (query: string): Promise<Page> => {
      const answer = await call(server.baseUrl, 'GET', `/admin/lists/search${query}`);
      expect(answer.status, query).toBe(200);
      return answer.json as Page;
    };

    // Every rule, in the order of their spellings, 50 at a time by default.
    const first = await search('');
    expect(first.total).toBe(100_000);
    expect([first.offset, first.limit]).toEqual([0, 50]);
    expect(first.rules.map((rule) => rule.rule)).toEqual(Array.from({ length: 50 }, (_, at) => spelling(at)));
    expect(first.rules[0]).toEqual({
      rule: spelling(0),
      list: 'allow',
      label: 'Agence 0',
      note: 'Rappel SOCIÉTÉ 0',
      createdAt: expect.any(String),
    });
    const last = await search('?offset=99990&limit=500');
    expect(last.total).toBe(100_000);
    expect(last.rules.map((rule) => rule.rule)).toEqual(Array.from({ length: 10 }, (_, at) => spelling(99_990 + at)));

    // Digits anywhere in the rule's: 610999 is in the 100 rules +3361099900* to +3361099999*.
    const digits = await search('?q=610999&limit=500');
    expect(digits.total).toBe(100);
    expect(digits.rules.map((rule) => rule.rule)).toEqual(
      Array.from({ length: 100 }, (_, at) => spelling(99_900 + at)),
    );
    // The national spelling finds the same rules as the E.164 one, separators and all.
    const national = await search(`?q=${encodeURIComponent('06 10 99 9')}&limit=500`);
    expect(national.total).toBe(100);
    expect(national.rules).toEqual(digits.rules);
    expect((await search(`?q=${encodeURIComponent('+33 6 10 99 9')}&limit=500`)).rules).toEqual(digits.rules);
    // Labels and notes, case-insensitive; a list.
    const labelled = await search(`?q=${encodeURIComponent('agence 9')}`);
    expect(labelled.rules.map((rule) => rule.label)).toEqual([
      'Agence 9',
      ...Array.from({ length: 10 }, (_, at) => `Agence ${90 + at}`),
    ]);
    expect((await search(`?q=${encodeURIComponent('société')}`)).total).toBe(20);
    const blocked = await search(`?q=${encodeURIComponent('rappel société')}&list=block`);
    // Every 5000th rule is even, so allow: none of the noted rules is in the block list.
    expect(blocked.total).toBe(0);
    expect((await search('?list=block&limit=1')).total).toBe(50_000);
    expect((await search('?q=nothing-matches')).total).toBe(0);

    // A change is seen by the next search.
    const put = await call(server.baseUrl, 'PUT', `/admin/lists/rules/${encodeURIComponent('+33699*')}`, {
      list: 'block',
      label: 'Zzz last label',
    });
    expect(put.status).toBe(201);
    const after = await search(`?q=zzz`);
    expect(after.rules.map((rule) => rule.rule)).toEqual(['+33699*']);

    // Bad input: a 400 naming the field.
    for (const [query, field] of [
      ['?limit=501', 'limit'],
      ['?limit=0', 'limit'],
      ['?offset=-1', 'offset'],
      ['?list=grey', 'list'],
      [`?q=${'1'.repeat(101)}`, 'q'],
    ] as const) {
      const refused = await call(server.baseUrl, 'GET', `/admin/lists/search${query}`);
      expect(refused.status, query).toBe(400);
      expect((refused.json as { field?: string }).field, query).toBe(field);
    }
  }, 120_000);

  it('says which rule decides for a number typed in any spelling, and why; a bad number is a 400 naming it', async () => {
    for (const [rule, list, label] of [
      ['+33162*', 'block', 'Démarchage'],
      ['+33162001234', 'allow', 'Cabinet médical'],
    ] as const) {
      const put = await call(server.baseUrl, 'PUT', `/admin/lists/rules/${encodeURIComponent(rule)}`, { list, label });
      expect(put.status).toBe(201);
    }
    const decide = async (typed: string): Promise<Answer> =>
      call(server.baseUrl, 'GET', `/admin/lists/decide/${encodeURIComponent(typed)}`);
    const exact = await decide('01 62 00 12 34');
    expect(exact.status).toBe(200);
    expect(exact.json).toEqual({
      number: '+33162001234',
      rule: { rule: '+33162001234', list: 'allow', label: 'Cabinet médical', createdAt: expect.any(String) },
      list: 'allow',
      why: [
        '+33162001234: allow by rule +33162001234 (label "Cabinet médical").',
        'Also matches +33162* (block), which does not apply: it is shorter (the longest matching rule wins).',
      ],
    });
    const prefix = await decide('+33 1 62 00 12 35');
    expect(prefix.json).toMatchObject({
      number: '+33162001235',
      rule: { rule: '+33162*', list: 'block', label: 'Démarchage' },
      list: 'block',
      why: [
        '+33162001235: block by rule +33162* (label "Démarchage").',
        'It is the only rule that matches this number.',
      ],
    });
    const none = await decide('0612345678');
    expect(none.json).toEqual({
      number: '+33612345678',
      rule: null,
      list: null,
      why: ['+33612345678: no rule applies; the sources decide.'],
    });
    for (const typed of ['not-a-number', '12', 'anonymous']) {
      const refused = await decide(typed);
      expect(refused.status, typed).toBe(400);
      expect((refused.json as { field?: string }).field, typed).toBe('number');
    }
  });

  it('lists the reported numbers for review with labels and comments; a dismissal keeps the votes and a new vote brings the number back', async () => {
    const kitchen = await server.createToken('Kitchen phone');
    const office = await server.createToken('Office PBX');
    expect(await sendReport(server, kitchen.secret, reportBody('06 12 34 56 01', 'fraud', 'faux conseiller'))).toBe(
      200,
    );
    expect(
      await sendReport(server, office.secret, reportBody('+33612345601', 'advertising', 'panneaux solaires')),
    ).toBe(200);
    // A later report, recorded as the service records one, one millisecond after the others.
    const latest = Math.max(...server.votesOn('+33612345601').map((vote) => vote.at));
    expect(
      await server.reports.record({ e164: '+33612345602', tokenId: office.id, rating: 'legitimate', at: latest + 1 }),
    ).toEqual({ ok: true, replaced: false });

    const all = await review(server);
    expect(all.total).toBe(2);
    expect([all.offset, all.limit]).toEqual([0, 50]);
    const spam = all.numbers.find((item) => item.number === '+33612345601');
    expect(spam).toEqual({
      number: '+33612345601',
      verdict: 'spam',
      reporters: 2,
      ratings: { fraud: 1, advertising: 1 },
      labels: ['Office PBX', 'Kitchen phone'],
      comments: ['panneaux solaires', 'faux conseiller'],
      lastAt: expect.any(String),
      dismissed: false,
      dismissedAt: null,
      list: null,
    });
    // Newest report first.
    expect(all.numbers.map((item) => item.number)).toEqual(['+33612345602', '+33612345601']);
    expect((await review(server, '?limit=1&offset=1')).numbers.map((item) => item.number)).toEqual(['+33612345601']);

    // Dismissed: out of the review, in `dismissed`, kept in the file beside the lists; the votes still decide.
    const dismissed = await call(server.baseUrl, 'POST', '/admin/reports/06%2012%2034%2056%2001/dismiss');
    expect(dismissed.status).toBe(204);
    expect((await review(server)).numbers.map((item) => item.number)).toEqual(['+33612345602']);
    const gone = await review(server, '?state=dismissed');
    expect(gone.total).toBe(1);
    expect(gone.numbers[0]).toMatchObject({ number: '+33612345601', dismissed: true, dismissedAt: expect.any(String) });
    expect((await review(server, '?state=all')).total).toBe(2);
    const file = JSON.parse(readFileSync(join(server.dir, 'reports-dismissed.json'), 'utf8')) as {
      dismissed: Record<string, string>;
    };
    expect(Object.keys(file.dismissed)).toEqual(['+33612345601']);
    expect(server.votesOn('+33612345601')).toHaveLength(2);
    expect(server.reports.evidence('+33612345601')?.verdict).toBe('spam');
    const verdict = await fetch(`${server.baseUrl}/api/phone/+33612345601/verdict`);
    expect(await verdict.text()).toMatch(/^block/);

    // Taken back: in review again.
    expect((await call(server.baseUrl, 'DELETE', '/admin/reports/+33612345601/dismiss')).status).toBe(204);
    expect((await review(server)).total).toBe(2);
    // Dismissed again, then a vote cast after the dismissal puts it back in review.
    expect((await call(server.baseUrl, 'POST', '/admin/reports/+33612345601/dismiss')).status).toBe(204);
    const mark = Date.parse((await review(server, '?state=dismissed')).numbers[0]?.dismissedAt ?? '');
    expect((await review(server)).total).toBe(1);
    const recorded = await server.reports.record({
      e164: '+33612345601',
      tokenId: kitchen.id,
      rating: 'fraud',
      at: mark + 1,
      comment: 'encore',
    });
    expect(recorded.ok).toBe(true);
    const back = await review(server);
    expect(back.total).toBe(2);
    expect(back.numbers.find((item) => item.number === '+33612345601')).toMatchObject({
      dismissed: false,
      dismissedAt: null,
      comments: ['encore', 'panneaux solaires'],
    });

    // A number nobody reported cannot be dismissed; a bad number is a 400 naming it.
    const unknown = await call(server.baseUrl, 'POST', '/admin/reports/+33612345699/dismiss');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ field: 'number' });
    const bad = await call(server.baseUrl, 'POST', '/admin/reports/nope/dismiss');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ field: 'number' });
    const badState = await call(server.baseUrl, 'GET', '/admin/reports?state=open');
    expect(badState.status).toBe(400);
    expect(badState.json).toMatchObject({ field: 'state' });

    // The audit lines name the number by its keyed hash only.
    const audit = log.lines.filter((line) => line.audit === 'reports');
    expect(audit.map((line) => line.action)).toEqual(['dismiss', 'undismiss', 'dismiss']);
    expect(log.raw.join('\n')).not.toContain('612345601');
  });

  it('answers 503 reports_unavailable, changing nothing, while the dismissals file cannot be read', async () => {
    const path = join(server.dir, 'reports-dismissed.json');
    const kept = readFileSync(path, 'utf8');
    writeFileSync(path, '{"dismissed": ');
    try {
      const listed = await call(server.baseUrl, 'GET', '/admin/reports');
      expect(listed.status).toBe(503);
      expect(listed.json).toMatchObject({ type: '/problems/reports-unavailable' });
      expect((await call(server.baseUrl, 'POST', '/admin/reports/+33612345601/dismiss')).status).toBe(503);
      expect(readFileSync(path, 'utf8')).toBe('{"dismissed": ');
    } finally {
      writeFileSync(path, kept);
    }
    expect((await call(server.baseUrl, 'GET', '/admin/reports')).status).toBe(200);
  });

  it('answers a new token with SpamBlocker’s configs for PUBLIC_URL and the report config as a QR code', async () => {
    const created = await call(server.baseUrl, 'POST', '/admin/tokens', { label: 'Phone of Alice' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-public-url-warning')).toBeNull();
    const body = created.json as {
      token: string;
      configs: { query: { actions: Array<{ url?: string }> }; report: { actions: Array<Record<string, unknown>> } };
      qrSvg: string;
    };
    const upload = body.configs.report.actions.find((action) => action.type === 'HttpDownload');
    expect(upload).toMatchObject({
      url: 'https://phones.example.org/api/report',
      header: `Authorization: Bearer ${body.token}`,
    });
    expect(
      body.configs.query.actions.some((action) => action.url?.startsWith('https://phones.example.org/api/phone/')),
    ).toBe(true);
    // The same configs as the served ones, the token aside.
    const served = (await (await fetch(`${server.baseUrl}/integrations/spamblocker/query.json`)).json()) as unknown;
    expect(body.configs.query).toEqual(served);
    expect(body.qrSvg).toMatch(/^<\?xml [^>]+\?>\n<svg /);
    expect(body.qrSvg).not.toMatch(/<script|on\w+=|href=/i);
    expect(JSON.parse(decodeQrSvg(body.qrSvg) ?? 'null')).toEqual(body.configs.report);
    // Shown this once: the listing holds neither the secret nor the configs.
    const listed = await call(server.baseUrl, 'GET', '/admin/tokens');
    expect(listed.text).not.toContain(body.token);
  });

  it('is in the OpenAPI document, which validates and lints with zero errors with the admin API in it', async () => {
    const text = await (await fetch(`${server.baseUrl}/openapi.json`)).text();
    const document = JSON.parse(text) as { paths: Record<string, Record<string, { operationId?: string }>> };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/admin/lists/search',
        '/admin/lists/decide/{number}',
        '/admin/reports',
        '/admin/reports/{number}/dismiss',
        '/admin/setup',
      ]),
    );
    expect(document.paths['/admin/setup']?.get?.operationId).toBe('getSetup');
    await SwaggerParser.validate(JSON.parse(text) as Awaited<ReturnType<typeof SwaggerParser.validate>>);
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-openapi-'));
    writeFileSync(join(dir, 'openapi.json'), text);
    // Run from the temporary folder, so no configuration file of the repository applies.
    const { stdout } = await promisify(execFile)(
      join(process.cwd(), 'node_modules/.bin/redocly'),
      ['lint', '--extends=recommended', '--format=json', 'openapi.json'],
      {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as { problems: Array<{ severity: string; message: string }> };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
  }, 150_000);

  it('shows every setting in effect with the secrets masked, the numbering data’s date, Redis off and the version', async () => {
    const setup = await call(server.baseUrl, 'GET', '/admin/setup');
    expect(setup.status).toBe(200);
    const answer = setup.json as {
      settings: Record<string, unknown>;
      numberingData: Record<string, unknown>;
      redis: string;
      version: string;
    };
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(setup.text, name).not.toContain(value);
    }
    for (const part of ['url-password-never-shown', 'url-key-never-shown', 'api-user'])
      expect(setup.text).not.toContain(part);
    expect(answer.settings.ADMIN_TOKEN).toBe('••••');
    expect(answer.settings.HASH_SECRET).toBe('••••');
    expect(answer.settings.FEED_PASSWORD).toBe('••••');
    expect(answer.settings.TELLOWS_API_KEY).toBe('••••');
    expect(answer.settings.TELLOWS_API_URL).toBe('https://••••@tellows.example/api?apikey=••••&x=1');
    // Plain settings as in effect, defaults included; unset ones null.
    expect(answer.settings.PUBLIC_URL).toBe('https://phones.example.org');
    expect(answer.settings.REPORT_MIN_REPORTERS).toBe(2);
    expect(answer.settings.PORT).toBe(3000);
    expect(answer.settings.REDIS_URL).toBeNull();
    expect(answer.settings.TRUST_PROXY).toBe('off');
    expect(Object.keys(answer.settings)).toContain('VERDICT_OUTSIDE_HOURS');
    expect(answer.numberingData).toEqual({
      date: server.deps.numberingPlan.dataDate,
      ageDays: expect.any(Number),
      status: expect.stringMatching(/^(ok|degraded)$/),
      origin: server.deps.numberingData.origin,
      blocks: server.deps.numberingPlan.blockCount,
    });
    expect(answer.redis).toBe('off');
    expect(answer.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('the admin API of the console alone on ADMIN_PORT', () => {
  it('serves the console’s routes there, and says when a new token’s configs name an address guessed from the request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-console-'));
    const admin = await startAdminServer({ LISTS_FILE: join(dir, 'lists.csv'), RATE_LIMIT_MAX: '0' }, ADMIN);
    try {
      expect((await call(admin.base, 'GET', '/admin/lists/search')).json).toEqual({
        total: 0,
        offset: 0,
        limit: 50,
        rules: [],
      });
      expect((await call(admin.base, 'GET', '/admin/reports')).json).toEqual({
        total: 0,
        offset: 0,
        limit: 50,
        numbers: [],
      });
      expect((await call(admin.base, 'GET', '/admin/setup')).json).toMatchObject({ redis: 'off' });
      // No PUBLIC_URL: the configs name the address the request reached (loopback here), and say so.
      const created = await call(admin.base, 'POST', '/admin/tokens', { label: 'CRM' });
      expect(created.status).toBe(201);
      expect(created.headers.get('x-public-url-warning')).toMatch(/PUBLIC_URL/);
      const report = (created.json as { configs: { report: { desc: string; actions: Array<{ url?: string }> } } })
        .configs.report;
      expect(report.desc).toMatch(/set PUBLIC_URL/);
      expect(report.actions.some((action) => action.url === `${admin.base}/api/report`)).toBe(true);
    } finally {
      await admin.close();
    }
  });
});

describe('the admin API of the console on Redis, shared by two instances', () => {
  const prefix = uniqueKeyPrefix('admin-console');
  const admin = connectAdmin();
  const servers: ReportingServer[] = [];
  const env = {
    ADMIN_TOKEN: ADMIN,
    RATE_LIMIT_MAX: '0',
    HASH_SECRET: SECRETS.HASH_SECRET,
    // A password Redis does not ask for: ioredis sends it and goes on; the setup must mask it.
    REDIS_URL: TEST_REDIS_URL.replace('redis://', 'redis://:redis-password-never-shown@'),
    REDIS_KEY_PREFIX: prefix,
  };
  beforeAll(async () => {
    for (let at = 0; at < 2; at += 1)
      servers.push(await startReportingServer({ env, overrides: { sources: healthyFakeSources() } }));
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await deleteKeys(admin, prefix);
    admin.disconnect();
  });

  it('dismisses on one instance and the other lists it dismissed; the setup says Redis ok and masks its password', async () => {
    const [one, two] = servers as [ReportingServer, ReportingServer];
    const token = await one.createToken('Hall phone');
    expect(await sendReport(one, token.secret, reportBody('+33612345621', 'fraud', 'arnaque'))).toBe(200);
    await waitFor(async () => (await review(two)).total === 1);
    expect((await review(two)).numbers[0]).toMatchObject({ labels: ['Hall phone'], comments: ['arnaque'] });

    expect((await call(one.baseUrl, 'POST', '/admin/reports/0612345621/dismiss')).status).toBe(204);
    // Read from Redis on every request: the other instance sees it at once.
    expect((await review(two)).total).toBe(0);
    expect((await review(two, '?state=dismissed')).numbers.map((item) => item.number)).toEqual(['+33612345621']);
    expect(await admin.zscore(`${prefix}{reports}:dismissed`, '+33612345621')).toMatch(/^\d+$/);
    expect((await call(two.baseUrl, 'DELETE', '/admin/reports/0612345621/dismiss')).status).toBe(204);
    expect((await review(one)).total).toBe(1);

    const setup = await call(two.baseUrl, 'GET', '/admin/setup');
    expect(setup.status).toBe(200);
    expect(setup.text).not.toContain('redis-password-never-shown');
    expect(setup.text).not.toContain(SECRETS.HASH_SECRET);
    const answer = setup.json as { settings: Record<string, unknown>; redis: string };
    expect(answer.redis).toBe('ok');
    expect(answer.settings.REDIS_URL).toBe(TEST_REDIS_URL.replace('redis://', 'redis://••••@'));
  });
});
