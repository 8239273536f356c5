// The operator's decision survives every source failing (docs/api.md#502-the-number-still-speaks):
// with the three upstream sites answering 500 on loopback, the JSON 502 of the report and the
// score carry `meta.list` as a 200 would (the allowed doctor, the blocked prefix, null for a
// number no rule matches), each answer held to the OpenAPI document the service serves.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDocumentedAnswer } from '../support/contracts.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

const HEADER = 'rule,list,label,note,expiresAt,createdAt';
const CREATED = '2026-01-01T00:00:00.000Z';

describe('a 502 carries the operator’s decision', () => {
  let sites: FakeUpstreamSites;
  let server: TestServer;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'phone-rep-502-list-')), 'lists.csv');
    writeFileSync(
      file,
      `${HEADER},labelPublic\n+33478123456,allow,Dr Martin,,,${CREATED},true\n+33162*,block,,,,${CREATED},\n`,
    );
    // Every site of every source answers 500: each source fails, whatever the number.
    const broken = { status: 500 };
    sites = await startFakeUpstreamSites({
      fallback: { tellowsApi: broken, tellowsWeb: broken, numeroinconnu: broken, telguarder: broken },
    });
    server = await startTestServer({ env: { ...sites.env(), LISTS_FILE: file, RATE_LIMIT_MAX: '0' } });
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  const cases = [
    {
      name: 'an allowed doctor',
      number: '0478123456',
      list: { list: 'allow', rule: '+33478123456', label: 'Dr Martin' },
    },
    {
      name: 'a number in a blocked prefix',
      number: '0162001235',
      list: { list: 'block', rule: '+33162*', label: null },
    },
    { name: 'a number no rule matches', number: '0478123457', list: null },
  ] as const;

  it.each(cases)(
    '$name: the report and the score answer 502 with meta.list, as documented',
    async ({ number, list }) => {
      for (const path of [`/api/phone/${number}`, `/api/phone/${number}/score`]) {
        const response = await server.app.inject({ method: 'GET', url: path });
        expect(response.statusCode, path).toBe(502);
        await expectDocumentedAnswer(server.app, {
          method: 'GET',
          path,
          status: response.statusCode,
          contentType: String(response.headers['content-type']),
          body: response.body,
          headers: response.headers,
        });
        const body = response.json<Record<string, unknown>>();
        expect(body.error).toBe('All data sources failed');
        expect(body.number).toBe(number);
        expect(body.meta).toEqual({ list, reports: null });
      }
      // The sites were asked and failed: this is the real 502 path, not a listed shortcut.
      expect(sites.total()).toBeGreaterThan(0);
    },
  );

  it('still lets the text answers say the decision at once', async () => {
    const verdict = await server.app.inject({ method: 'GET', url: '/api/phone/0478123456/verdict' });
    expect(verdict.body).toBe('allow\n');
  });
});
