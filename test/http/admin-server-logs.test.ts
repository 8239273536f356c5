// The admin server of ADMIN_PORT logs as the API port does (docs/operations.md#logs): one line per
// request with the route pattern, never the URL (which holds the rule, often a number), and the
// project's request ids (the caller's X-Request-Id, else a UUID), never Fastify's `req-1`.
// Driven over a real socket, its log lines captured from a real pino logger.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAdminApp } from '../../src/admin-app.js';
import { createServiceDependencies } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import { capturingLogger } from '../support/loggers.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { testNumberingPlan } from '../../harness/servers.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** What of the number +33 4 78 12 34 56 any spelling of it in a URL holds, encoded or not. */
const NUMBER_TRACES = ['478123456', '4%2078', '78%2012', '%2B33', '+33'];

describe('the admin server on ADMIN_PORT', () => {
  it('logs each request with its route pattern and a proper request id, and no number in any spelling', async () => {
    const { logger, raw, lines } = capturingLogger();
    const config = loadConfig({
      HASH_SECRET: 'test-secret-0123456789',
      LISTS_FILE: join(mkdtempSync(join(tmpdir(), 'phone-rep-admin-logs-')), 'lists.csv'),
      ADMIN_TOKEN: TOKEN,
      ADMIN_PORT: '0',
    });
    const deps = await createServiceDependencies(config, logger, {
      numberingPlan: testNumberingPlan(),
      sources: healthyFakeSources(),
    });
    const admin = await buildAdminApp({ ...deps.app, lists: deps.lists, logger }, TOKEN);
    await admin.listen({ port: 0, host: '127.0.0.1' });
    try {
      const address = admin.server.address();
      const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
      const json = { ...AUTH, 'content-type': 'application/json' };
      const exchanges: Array<[string, string, RequestInit, number]> = [
        [
          'PUT',
          '/admin/lists/rules/%2B33478123456',
          { headers: json, body: '{"list":"allow","label":"Dr Martin"}' },
          201,
        ],
        ['PUT', '/admin/lists/rules/04%2078%2012%2034%2056', { headers: json, body: '{"list":"allow"}' }, 200],
        ['GET', '/admin/lists/rules', { headers: { ...AUTH, 'x-request-id': 'pbx-sync.42' } }, 200],
        ['DELETE', '/admin/lists/rules/0478123456', { headers: AUTH }, 204],
        ['DELETE', '/admin/lists/rules/%2B33478123456', { headers: AUTH }, 404],
        [
          'PUT',
          '/admin/lists/rules/%2B33478123456',
          { headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{"list":"block"}' },
          401,
        ],
        ['GET', '/admin/lists/rules?token=%2B33478123456', {}, 401],
        ['GET', '/admin/lists/rules/%2B33478123456', { headers: AUTH }, 405],
        ['PATCH', '/admin/lists/rules/%2B33478123456', { headers: AUTH }, 405],
        ['GET', '/admin/nothing/+33478123456', { headers: AUTH }, 404],
      ];
      const ids: string[] = [];
      for (const [method, path, init, status] of exchanges) {
        const response = await fetch(`${base}${path}`, { method, ...init });
        await response.arrayBuffer();
        expect(response.status, `${method} ${path}`).toBe(status);
        ids.push(response.headers.get('x-request-id') ?? '');
      }
      const requests = lines.filter((line) => line.msg === 'request');
      expect(requests.map((line) => [line.method, line.route, line.status])).toEqual([
        ['PUT', '/admin/lists/rules/:rule', 201],
        ['PUT', '/admin/lists/rules/:rule', 200],
        ['GET', '/admin/lists/rules', 200],
        ['DELETE', '/admin/lists/rules/:rule', 204],
        ['DELETE', '/admin/lists/rules/:rule', 404],
        ['PUT', '/admin/lists/rules/:rule', 401],
        ['GET', '/admin/lists/rules', 401],
        ['GET', '/admin/lists/rules/:rule', 405],
        ['PATCH', '/admin/lists/rules/:rule', 405],
        ['GET', '(unmatched)', 404],
      ]);
      // The id each answer gave is the id of its line: the caller's when plain, else a UUID.
      expect(requests.map((line) => line.reqId)).toEqual(ids);
      for (const [index, id] of ids.entries()) expect(id, String(index)).toMatch(index === 2 ? /^pbx-sync\.42$/ : UUID);
      // No line of any kind (Fastify's own, the audit's, ours) holds the number or its URL.
      expect(raw.length).toBeGreaterThan(requests.length);
      for (const line of raw) {
        for (const trace of NUMBER_TRACES) expect(line, line).not.toContain(trace);
        expect(line).not.toMatch(/"reqId":"req-\d+"/);
        expect(line).not.toContain('"url"');
      }
    } finally {
      await admin.close();
      await deps.close();
    }
  });
});
