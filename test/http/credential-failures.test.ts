// The limit on failed credentials over real HTTP (docs/operations.md#failed-credentials): the admin
// token, the feed's password and CardDAV's Basic auth each allow 10 wrong guesses a minute per
// client, then a 429 with Retry-After, even for the right credential, for every client: those in
// RATE_LIMIT_EXEMPT too, and with the request limit off. A missing credential (a DAV client's
// first step) and a success count for nothing. Clients are told apart by X-Forwarded-For from a
// trusted loopback proxy, as behind the shipped nginx.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_FAILURES_MAX, CREDENTIAL_FAILURES_WINDOW_S } from '../../src/http/plugins/credential-failures.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startAdminServer, startTestServer, type TestServer } from '../../harness/servers.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const PASSWORD = 'correct horse battery';
const basic = (password: string): string => `Basic ${Buffer.from(`blocklist:${password}`).toString('base64')}`;
const PROPFIND_BODY =
  '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>';
/** Exempt from the request limit: a PBX's range, by arrangement with the operator. */
const EXEMPT = '10.0.0.0/8';

function listsFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'phone-rep-credentials-')), 'lists.csv');
}

interface Answer {
  status: number;
  retryAfter: string | null;
}

type Attempt = (client: string, credential: 'right' | 'wrong' | 'none', guess: number) => Promise<Answer>;

/** Sends `CREDENTIAL_FAILURES_MAX` wrong guesses, then checks the lock-out, and that other clients are untouched. */
async function expectGuessingLimited(attempt: Attempt): Promise<void> {
  // Successes first: never counted, never slowed (more of them than the limit allows failures).
  for (let i = 0; i < CREDENTIAL_FAILURES_MAX * 2; i += 1)
    expect((await attempt('10.1.1.1', 'right', i)).status, `success ${i}`).toBe(200);
  // A missing credential is a client's first step, not a guess.
  for (let i = 0; i < CREDENTIAL_FAILURES_MAX * 2; i += 1)
    expect((await attempt('10.1.1.1', 'none', i)).status).toBe(401);
  for (let i = 0; i < CREDENTIAL_FAILURES_MAX; i += 1)
    expect((await attempt('10.1.1.1', 'wrong', i)).status, `guess ${i}`).toBe(401);
  // Past the limit: a 429, for a wrong guess and for the right credential alike (a guesser learns nothing).
  for (const credential of ['wrong', 'right', 'none'] as const) {
    const refused = await attempt('10.1.1.1', credential, 99);
    expect(refused.status, credential).toBe(429);
    const seconds = Number(refused.retryAfter);
    expect(
      Number.isInteger(seconds) && seconds >= 1 && seconds <= CREDENTIAL_FAILURES_WINDOW_S,
      `Retry-After ${refused.retryAfter}`,
    ).toBe(true);
  }
  // Per client: another address of the exempt range, and one outside it, still get in.
  expect((await attempt('10.2.2.2', 'right', 0)).status).toBe(200);
  expect((await attempt('198.51.100.7', 'right', 0)).status).toBe(200);
}

describe('failed credentials are limited for every client, RATE_LIMIT_EXEMPT included', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        LISTS_FILE: listsFile(),
        ADMIN_TOKEN: TOKEN,
        FEED_PASSWORD: PASSWORD,
        TRUST_PROXY: 'loopback',
        RATE_LIMIT_EXEMPT: EXEMPT,
        RATE_LIMIT_MAX: '1000',
      },
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(() => server.close());

  const headersOf = (client: string, authorization: string | undefined): Record<string, string> => ({
    'x-forwarded-for': client,
    ...(authorization === undefined ? {} : { authorization }),
  });
  const answerOf = (response: Response): Answer => ({
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
  });

  it('the admin token: 10 wrong tokens a minute, then 429 with Retry-After, even for the right one', async () => {
    await expectGuessingLimited(async (client, credential, guess) => {
      const authorization =
        credential === 'none'
          ? undefined
          : `Bearer ${credential === 'right' ? TOKEN : `${TOKEN.slice(0, -2)}${String(guess).padStart(2, '0')}`}`;
      return answerOf(
        await fetch(`${server.baseUrl}/admin/lists/rules`, { headers: headersOf(client, authorization) }),
      );
    });
  });

  it('the feed’s password (the CSV SpamBlocker downloads)', async () => {
    await expectGuessingLimited(async (client, credential, guess) => {
      const authorization =
        credential === 'none' ? undefined : basic(credential === 'right' ? PASSWORD : `guess ${guess}`);
      return answerOf(
        await fetch(`${server.baseUrl}/feed/blocklist.csv`, {
          headers: headersOf(`${client.replace(/\.\d+$/, '.9')}`, authorization),
        }),
      );
    });
  });

  it('CardDAV’s Basic auth (PROPFIND on the address book)', async () => {
    await expectGuessingLimited(async (client, credential, guess) => {
      const authorization =
        credential === 'none' ? undefined : basic(credential === 'right' ? PASSWORD : `guess ${guess}`);
      const response = await fetch(`${server.baseUrl}/carddav/blocklist/`, {
        method: 'PROPFIND',
        headers: {
          ...headersOf(`${client.replace(/\.\d+$/, '.8')}`, authorization),
          depth: '0',
          'content-type': 'application/xml',
        },
        body: PROPFIND_BODY,
      });
      // A DAV success is a 207 Multi-Status.
      return { ...answerOf(response), status: response.status === 207 ? 200 : response.status };
    });
  });
});

describe('the admin API alone on ADMIN_PORT, with the request limit off', () => {
  it('limits wrong tokens all the same', async () => {
    const admin = await startAdminServer(
      { HASH_SECRET: 'test-secret-0123456789', LISTS_FILE: listsFile(), RATE_LIMIT_MAX: '0' },
      TOKEN,
    );
    const base = admin.base;
    try {
      const statuses: number[] = [];
      for (let i = 0; i <= CREDENTIAL_FAILURES_MAX; i += 1)
        statuses.push(
          (await fetch(`${base}/admin/lists/rules`, { headers: { authorization: `Bearer wrong-${i}` } })).status,
        );
      statuses.push(
        (await fetch(`${base}/admin/lists/rules`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
      );
      expect(statuses).toEqual([...Array<number>(CREDENTIAL_FAILURES_MAX).fill(401), 429, 429]);
    } finally {
      await admin.close();
    }
  });
});
