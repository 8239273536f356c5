// The report routes over real HTTP on loopback (docs/reports.md, "Reporting"): POST /api/report,
// its PhoneBlock alias /api/rate and GET /api/test, behind a reporter token. The service runs
// with its real stores (harness/reporting-server.ts): tokens.json and reports.jsonl beside a
// lists file in a temporary directory, tokens made and revoked by its token store. Every refusal
// changes nothing: the report store's votes are checked after each.
import { mkdir, readFile, rename, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startReportingServer, type ReportingServer } from '../../harness/reporting-server.js';
import type { TestServer } from '../../harness/servers.js';
import { REPORT_RATINGS } from '../../src/domain/ports/caller-reports.js';
import { PHONEBLOCK_RATINGS, RATING_SPELLINGS } from '../../src/domain/reports/ratings.js';
import { REPORT_BODY_MAX_BYTES } from '../../src/domain/reports/report-body.js';
import { CREDENTIAL_FAILURES_MAX } from '../../src/http/plugins/credential-failures.js';
import { capturingLogger } from '../support/loggers.js';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

async function send(
  server: TestServer,
  path: string,
  options: { method?: string; token?: string; body?: string; contentType?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  const answer = await fetch(`${server.baseUrl}${path}`, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await answer.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // text/plain answers
  }
  return { status: answer.status, headers: answer.headers, text, json };
}

const report = (phone: string, rating: string, comment?: string): string =>
  JSON.stringify({ phone, rating, ...(comment === undefined ? {} : { comment }) });

describe('report routes while reporting is off', () => {
  let server: ReportingServer;
  beforeAll(async () => {
    server = await startReportingServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
  });
  afterAll(async () => server.close());

  it('answers 401 reporting_off, saying the operator must create a token, while no token exists', async () => {
    for (const [path, body] of [
      ['/api/report', report('+33612345678', 'fraud')],
      ['/api/rate', report('+33612345678', 'G_FRAUD')],
      ['/api/test', undefined],
    ] as const) {
      const answer = await send(server, path, { token: 'prt_whatever', ...(body === undefined ? {} : { body }) });
      expect(answer.status, path).toBe(401);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(answer.json).toMatchObject({ code: 'reporting_off', status: 401 });
      expect(answer.json.detail).toContain('phone-rep token create');
    }
    expect(server.reports.allVotes()).toEqual([]);
  });

  it('answers 401 reporting_off while every token is expired or revoked, and records nothing', async () => {
    const off = await startReportingServer({
      env: { RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const revoked = await off.createToken('old phone');
      expect(await off.tokens.revoke(revoked.id)).toBe(true);
      const expired = await off.createToken('lent phone', { expiresAt: '2020-01-01T00:00:00.000Z' });
      for (const secret of [revoked.secret, expired.secret]) {
        const answer = await send(off, '/api/report', { token: secret, body: report('+33612345678', 'fraud') });
        expect(answer.status).toBe(401);
        expect(answer.json.code).toBe('reporting_off');
      }
      // The control: one token in force turns reporting on.
      expect(off.reports.allVotes()).toEqual([]);
      const fresh = await off.createToken('phone');
      expect(
        (await send(off, '/api/report', { token: fresh.secret, body: report('+33612345678', 'fraud') })).status,
      ).toBe(200);
      expect(off.reports.allVotes()).toEqual([expect.objectContaining({ e164: '+33612345678', tokenId: fresh.id })]);
    } finally {
      await off.close();
    }
  });
});

describe('report routes with tokens', () => {
  let server: ReportingServer;
  let secret: string;
  let tokenId: string;
  const { logger, raw } = capturingLogger();
  beforeAll(async () => {
    server = await startReportingServer({
      env: { RATE_LIMIT_MAX: '0', REPORT_MAX_PER_TOKEN_DAY: '1000' },
      logger,
      overrides: { sources: healthyFakeSources(), metricsRenderIntervalMs: 0 },
    });
    const created = await server.createToken('kitchen phone');
    secret = created.secret;
    tokenId = created.id;
  });
  afterAll(async () => server.close());

  const votesOn = (e164: string) => server.votesOn(e164);
  const voteCount = (): number => server.reports.allVotes().length;

  it('records a JSON report: 200 {ok, replaced}, one vote per token and number, the latest replacing the earlier', async () => {
    const first = await send(server, '/api/report', {
      token: secret,
      contentType: 'application/json',
      body: report('+33612345601', 'fraud', 'faux conseiller bancaire'),
    });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ ok: true, replaced: false });
    expect(first.headers.get('cache-control')).toBe('no-store');
    const second = await send(server, '/api/report', { token: secret, body: report('06 12 34 56 01', 'valid') });
    expect(second.json).toEqual({ ok: true, replaced: true });
    expect(votesOn('+33612345601')).toEqual([
      { e164: '+33612345601', tokenId, rating: 'legitimate', at: expect.any(Number) as number },
    ]);
  });

  it('takes the number in PhoneBlock’s 00{cc}{domestic} and SpamBlocker’s +{cc}{domestic} spellings alike', async () => {
    await send(server, '/api/report', { token: secret, body: report('0033612345602', 'survey') });
    await send(server, '/api/report', { token: secret, body: report('+33612345603', 'survey') });
    expect(votesOn('+33612345602')).toHaveLength(1);
    expect(votesOn('+33612345603')).toHaveLength(1);
  });

  it('/api/rate is the same route with PhoneBlock’s codes, each recorded as its rating of the closed set', async () => {
    for (const [code, rating] of Object.entries(PHONEBLOCK_RATINGS)) {
      const answer = await send(server, '/api/rate', {
        token: secret,
        contentType: 'application/json',
        body: JSON.stringify({ phone: '0033612345604', rating: code, comment: 'x' }),
      });
      expect(answer.status, code).toBe(200);
      expect(
        votesOn('+33612345604').map((vote) => vote.rating),
        code,
      ).toEqual([rating]);
    }
  });

  it('reads a real form body, and JSON labelled as a form or as nothing at all', async () => {
    const form = await send(server, '/api/report', {
      token: secret,
      contentType: 'application/x-www-form-urlencoded',
      body: 'phone=%2B33612345614&rating=political&comment=tract%0Aau%20porte-%C3%A0-porte',
    });
    expect(form.status).toBe(200);
    expect(votesOn('+33612345614')).toMatchObject([{ rating: 'political', comment: 'tract au porte-à-porte' }]);
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream']) {
      const answer = await send(server, '/api/report', {
        token: secret,
        contentType,
        body: report('+33612345615', 'other'),
      });
      expect(answer.status, contentType).toBe(200);
    }
    expect(votesOn('+33612345615')).toHaveLength(1);
  });

  it('/api/test answers ok in text/plain to a token in force', async () => {
    const answer = await send(server, '/api/test', { token: secret });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('ok');
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('refuses a missing, unknown, expired or revoked token with 401, recording nothing', async () => {
    const expired = await server.createToken('lent phone', { expiresAt: '2020-01-01T00:00:00.000Z' });
    const revoked = await server.createToken('lost phone');
    expect(await server.tokens.revoke(revoked.id)).toBe(true);
    const before = voteCount();
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'missing_token'],
      ['prt_unknown', 'invalid_token'],
      [expired.secret, 'invalid_token'],
      [revoked.secret, 'invalid_token'],
    ];
    for (const [token, code] of cases) {
      for (const path of ['/api/report', '/api/rate']) {
        const answer = await send(server, path, {
          ...(token === undefined ? {} : { token }),
          body: report('+33612345605', 'fraud'),
        });
        expect(answer.status, `${path} ${code}`).toBe(401);
        expect(answer.json.code).toBe(code);
        expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="phone-rep reports", charset="UTF-8"');
      }
      expect((await send(server, '/api/test', token === undefined ? {} : { token })).status).toBe(401);
    }
    expect(voteCount()).toBe(before);
  });

  it('refuses a bad body with 400 naming the field, recording nothing', async () => {
    const before = voteCount();
    const cases: Array<[string, string, string]> = [
      ['', 'body', 'empty'],
      ['not a report', 'body', 'neither JSON nor a form'],
      ['{"rating":"fraud"}', 'phone', 'missing'],
      ['{"phone":"+33612345606"}', 'rating', 'missing'],
      ['{"phone":"+33612345606","rating":"scam"}', 'rating', 'unknown'],
      ['{"phone":"+33612345606","rating":"fraud","comment":["a"]}', 'comment', 'string'],
    ];
    for (const [body, field, words] of cases) {
      const answer = await send(server, '/api/report', { token: secret, method: 'POST', body });
      expect(answer.status, body).toBe(400);
      expect(answer.json, body).toMatchObject({ type: '/problems/bad-request', field });
      expect(String(answer.json.detail), body).toContain(words);
    }
    const unknown = await send(server, '/api/report', {
      token: secret,
      body: '{"phone":"+33612345606","rating":"scam"}',
    });
    for (const spelling of RATING_SPELLINGS) expect(String(unknown.json.detail)).toContain(spelling);
    expect(voteCount()).toBe(before);
  });

  it('refuses a withheld or invalid number with the phone routes’ 400 and the parser’s code', async () => {
    const before = voteCount();
    for (const [phone, code] of [
      ['anonymous', 'withheld'],
      ['06 12 3', 'invalid_number'],
      ['06-12-ab', 'invalid_character'],
    ] as const) {
      const answer = await send(server, '/api/report', { token: secret, body: report(phone, 'fraud') });
      expect(answer.status, phone).toBe(400);
      expect(answer.json, phone).toMatchObject({ type: '/problems/invalid-number', code, field: 'phone' });
    }
    expect(voteCount()).toBe(before);
  });

  it('refuses a body over its cap with 413 before reading it, recording nothing', async () => {
    const before = voteCount();
    const padding = 'a'.repeat(REPORT_BODY_MAX_BYTES);
    const answer = await send(server, '/api/report', {
      token: secret,
      contentType: 'application/json',
      body: report('+33612345607', 'fraud', padding),
    });
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ type: '/problems/content-too-large', field: 'body' });
    expect(voteCount()).toBe(before);
  });

  it('answers 503 when the store cannot be written, recording nothing', async () => {
    // The reports file made unwritable for real, whoever runs the test (root ignores a read-only
    // directory): a directory stands where reports.jsonl was, then the file is put back.
    const file = join(server.dir, 'reports.jsonl');
    const before = await readFile(file, 'utf8');
    await rename(file, `${file}.away`);
    await mkdir(file);
    try {
      const answer = await send(server, '/api/report', { token: secret, body: report('+33612345608', 'fraud') });
      expect(answer.status).toBe(503);
      expect(answer.json).toMatchObject({ type: '/problems/reports-unavailable' });
    } finally {
      await rmdir(file);
      await rename(`${file}.away`, file);
    }
    expect(await readFile(file, 'utf8')).toBe(before);
    // The control: the same report is recorded once the file is back.
    const again = await send(server, '/api/report', { token: secret, body: report('+33612345608', 'fraud') });
    expect(again.status).toBe(200);
    expect(votesOn('+33612345608')).toHaveLength(1);
  });

  it('counts reports by rating and refusals by reason, and puts no number, token or comment in a metric or a log line', async () => {
    await send(server, '/api/report', { token: secret, body: report('+33612345609', 'political', 'tract électoral') });
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/phone_rep_reports_total\{rating="political"\} [1-9]/);
    for (const rating of REPORT_RATINGS) expect(metrics).toContain(`phone_rep_reports_total{rating="${rating}"}`);
    expect(metrics).toMatch(/phone_rep_report_refusals_total\{reason="invalid_token"\} [1-9]/);
    expect(metrics).toMatch(/phone_rep_report_refusals_total\{reason="bad_body"\} [1-9]/);
    expect(metrics).toMatch(/phone_rep_report_refusals_total\{reason="invalid_number"\} [1-9]/);
    expect(metrics).toMatch(/phone_rep_report_refusals_total\{reason="too_large"\} [1-9]/);
    expect(metrics).toMatch(/phone_rep_report_refusals_total\{reason="store_unavailable"\} [1-9]/);
    const written = [metrics, ...raw].join('\n');
    expect(raw.some((line) => line.includes('"route":"/api/report"'))).toBe(true);
    for (const trace of ['612345609', '612345601', 'prt_', secret, 'tract', 'conseiller'])
      expect(written, trace).not.toContain(trace);
  });
});

describe('report routes: limits', () => {
  it('answers 429 with Retry-After once the token used up its reports for the day, recording nothing more', async () => {
    const server = await startReportingServer({
      env: { RATE_LIMIT_MAX: '0', REPORT_MAX_PER_TOKEN_DAY: '2' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const { secret } = await server.createToken('busy phone');
      for (const phone of ['+33612345610', '+33612345611'])
        expect((await send(server, '/api/report', { token: secret, body: report(phone, 'fraud') })).status).toBe(200);
      const capped = await send(server, '/api/report', { token: secret, body: report('+33612345612', 'fraud') });
      expect(capped.status).toBe(429);
      expect(capped.json).toMatchObject({ code: 'token_day_cap' });
      const retryAfter = Number(capped.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 86_400).toBe(true);
      expect(
        server.reports
          .allVotes()
          .map((vote) => vote.e164)
          .sort(),
      ).toEqual(['+33612345610', '+33612345611']);
      // Another token has its own allowance.
      const other = await server.createToken('other phone');
      expect(
        (await send(server, '/api/report', { token: other.secret, body: report('+33612345612', 'fraud') })).status,
      ).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('counts wrong tokens against the limit on failed credentials: past it even the right token gets a 429', async () => {
    const server = await startReportingServer({
      env: { RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const { secret } = await server.createToken('phone');
      for (let attempt = 0; attempt < CREDENTIAL_FAILURES_MAX; attempt += 1)
        expect((await send(server, '/api/test', { token: `prt_guess${attempt}` })).status).toBe(401);
      const locked = await send(server, '/api/report', { token: secret, body: report('+33612345613', 'fraud') });
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(server.reports.allVotes()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
