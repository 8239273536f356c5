// The admin API of the reporters' tokens through the real server on loopback (docs/api.md,
// docs/reports.md "Tokens"): a token created answers its secret once, is kept as a hash beside
// the lists file, listed without secret or hash, accepted by the service and refused once
// revoked; bad input is a 400 naming the field with nothing created; the admin guard holds; the
// audit lines name the id alone. With REDIS_URL the tokens live in Redis, and a token created on
// one instance is accepted on another.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '../support/loggers.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startAdminServer, startTestServer, type TestServer } from '../../harness/servers.js';
import { TEST_REDIS_URL, useRedisTestClients, waitFor } from '../support/redis.js';

const ADMIN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${ADMIN}` };

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = AUTH,
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    json: text === '' ? undefined : (JSON.parse(text) as unknown),
    headers: response.headers,
  };
}

describe('the admin API of the reporters’ tokens (file store)', () => {
  let server: TestServer;
  let dir: string;
  const log = capturingLogger();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'phone-rep-admin-tokens-'));
    server = await startTestServer({
      env: { LISTS_FILE: join(dir, 'lists.csv'), ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0' },
      overrides: { sources: healthyFakeSources(), metricsRenderIntervalMs: 0 },
      logger: log.logger,
    });
  });
  afterAll(() => server.close());

  it('creates a token, answering its secret once; lists it without secret or hash; revokes it', async () => {
    const created = await call(server.baseUrl, 'POST', '/admin/tokens', {
      label: ' Front desk PBX ',
      expiresAt: '2099-01-01',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const record = created.json as Record<string, string>;
    expect(record).toEqual({
      id: expect.stringMatching(/^tok_[0-9a-f]{10}$/),
      label: 'Front desk PBX',
      createdAt: expect.any(String),
      expiresAt: '2099-01-01T00:00:00.000Z',
      token: expect.stringMatching(/^prt_[A-Za-z0-9_-]{43}$/),
      // SpamBlocker's configs and the QR code (test/http/admin-console.test.ts reads them).
      configs: { query: expect.any(Object), report: expect.any(Object) },
      qrSvg: expect.stringMatching(/^<\?xml /),
    });
    const secret = record.token ?? '';
    const id = record.id ?? '';

    // Kept beside the lists file, as its hash.
    const file = readFileSync(join(dir, 'tokens.json'), 'utf8');
    expect(file).toContain(id);
    expect(file).not.toContain(secret);
    expect(await server.deps.tokens.authenticate(secret)).toMatchObject({ id, label: 'Front desk PBX' });
    const gauge = async (): Promise<string | undefined> =>
      /^phone_rep_report_tokens (\d+)$/m.exec(await (await fetch(`${server.baseUrl}/metrics`)).text())?.[1];
    expect(await gauge()).toBe('1');

    const listed = await call(server.baseUrl, 'GET', '/admin/tokens');
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual([
      {
        id,
        label: 'Front desk PBX',
        createdAt: record.createdAt,
        expiresAt: '2099-01-01T00:00:00.000Z',
        lastUsedAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(listed.json)).not.toContain(secret);
    // Nor its hash, which the file holds.
    const hash = (JSON.parse(file) as { tokens: Array<{ hash: string }> }).tokens[0]?.hash;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(listed.json)).not.toContain(hash);

    const revoked = await call(server.baseUrl, 'DELETE', `/admin/tokens/${id}`);
    expect(revoked.status).toBe(204);
    expect(await server.deps.tokens.authenticate(secret)).toBeNull();
    expect(await gauge()).toBe('0');
    expect((await call(server.baseUrl, 'DELETE', `/admin/tokens/${id}`)).status).toBe(204);
    const after = (await call(server.baseUrl, 'GET', '/admin/tokens')).json as Array<Record<string, unknown>>;
    expect(after[0]?.revokedAt).toEqual(expect.any(String));

    // The audit lines: the action and the id; never the secret, its hash or the label.
    const audit = log.lines.filter((line) => line.audit === 'tokens');
    expect(audit.map((line) => [line.action, line.token])).toEqual([
      ['create', id],
      ['revoke', id],
      ['revoke', id],
    ]);
    const everything = log.raw.join('\n');
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('Front desk PBX');
  });

  it('refuses bad input with a 400 naming the field, and creates nothing', async () => {
    const before = (await call(server.baseUrl, 'GET', '/admin/tokens')).json as unknown[];
    const cases: Array<[unknown, string]> = [
      [{}, 'label'],
      [{ label: '' }, 'label'],
      [{ label: 'a'.repeat(61) }, 'label'],
      [{ label: 'two\nlines' }, 'label'],
      [{ label: '   ' }, 'label'],
      [{ label: 'x', expiresAt: '2001-01-01' }, 'expiresAt'],
      [{ label: 'x', expiresAt: '2031-02-30' }, 'expiresAt'],
    ];
    for (const [body, field] of cases) {
      const answer = await call(server.baseUrl, 'POST', '/admin/tokens', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.json).toMatchObject({ type: '/problems/bad-request', field });
    }
    expect((await call(server.baseUrl, 'GET', '/admin/tokens')).json).toEqual(before);
    const unknown = await call(server.baseUrl, 'DELETE', '/admin/tokens/tok_0000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ type: '/problems/token-not-found', field: 'id' });
    const malformed = await call(server.baseUrl, 'DELETE', '/admin/tokens/not-a-token');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ field: 'id' });
  });

  it('is behind the admin token like the lists', async () => {
    for (const [method, path] of [
      ['GET', '/admin/tokens'],
      ['POST', '/admin/tokens'],
      ['DELETE', '/admin/tokens/tok_0000000000'],
    ] as const) {
      const missing = await call(server.baseUrl, method, path, method === 'POST' ? { label: 'x' } : undefined, {});
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const wrong = await call(server.baseUrl, method, path, method === 'POST' ? { label: 'x' } : undefined, {
        authorization: 'Bearer not-the-admin-token',
      });
      expect(wrong.status).toBe(401);
    }
    expect(server.deps.tokens.list().filter((token) => token.label === 'x')).toEqual([]);
  });

  it('is served alone on ADMIN_PORT too', async () => {
    const admin = await startAdminServer({ LISTS_FILE: join(dir, 'lists.csv') }, ADMIN);
    try {
      const created = await call(admin.base, 'POST', '/admin/tokens', { label: 'CRM' });
      expect(created.status).toBe(201);
      const secret = (created.json as { token: string }).token;
      expect(await admin.deps.tokens.authenticate(secret)).toMatchObject({ label: 'CRM' });
    } finally {
      await admin.close();
    }
  });
});

describe('the admin API of the reporters’ tokens (Redis)', () => {
  const { prefix } = useRedisTestClients('admin-tokens');
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it('keeps the tokens in Redis: one created on one instance is accepted on the other', async () => {
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix, ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '0' };
    for (let at = 0; at < 2; at += 1)
      servers.push(await startTestServer({ env, overrides: { sources: healthyFakeSources() } }));
    const [one, two] = servers as [TestServer, TestServer];
    expect(one.deps.tokens.kind).toBe('redis');
    const created = await call(one.baseUrl, 'POST', '/admin/tokens', { label: 'phone' });
    expect(created.status).toBe(201);
    const { token: secret, id } = created.json as { token: string; id: string };
    // The other instance hears of it (its subscription), without a request of its own.
    await waitFor(() => two.deps.tokens.anyInForce());
    expect(await two.deps.tokens.authenticate(secret)).toMatchObject({ id });
    expect((await call(two.baseUrl, 'DELETE', `/admin/tokens/${id}`)).status).toBe(204);
    await waitFor(() => !one.deps.tokens.anyInForce());
    expect(await one.deps.tokens.authenticate(secret)).toBeNull();
  });
});
