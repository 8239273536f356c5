// SpamBlocker's Report API against the real server, doing what the app does and nothing more
// (test/support/spamblocker.ts says where each step comes from in aj3423/SpamBlocker's source):
// take the served report.json, decode it by the app's rules (a ReportApi of ParseIncomingNumber,
// CategoryConfig and HttpDownload with method 1: ui/setting/api/ApiPresets.kt), fill its
// placeholders as HttpRequest.execute does (service/bot/Actions1.kt: `{cc}`, `{domestic}` by
// util/StringTag.kt resolveNumberTag, then `{category}` and `{comment}` by plain replace, the
// comment unescaped), and send the request the way util/Http.kt does: POST through
// HttpURLConnection with no Content-Type of its own (Android labels it
// application/x-www-form-urlencoded) and `User-Agent: SpamBlocker/<version>`.
// The service runs on loopback with its real report stores (harness/reporting-server.ts): the
// token is made by its token store and the votes read back from its report store.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startReportingServer, type ReportingServer } from '../../harness/reporting-server.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { SPAMBLOCKER_RATINGS } from '../../src/domain/reports/ratings.js';
import {
  SPAMBLOCKER_REPORT_PATH,
  SPAMBLOCKER_TOKEN_PLACEHOLDER,
  spamBlockerReportApi,
} from '../../src/http/routes/spamblocker-report.js';
import {
  buildReportRequest,
  reportSucceeded,
  SPAMBLOCKER_HEADERS,
  type ReportApiConfig,
  type ReportRequest,
} from '../support/spamblocker.js';

const PUBLIC_URL = 'http://placeholder.invalid';

/** The request sent as the app's HttpURLConnection sends it: these headers, this body, to the test's server. */
function sendAsTheApp(server: TestServer, sent: ReportRequest): Promise<{ status: number; body: string }> {
  const url = new URL(sent.url.replace(PUBLIC_URL, server.baseUrl));
  const body = Buffer.from(sent.body, 'utf8');
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...sent.headers, 'Content-Length': String(body.length) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('SpamBlocker Report API', () => {
  let server: ReportingServer;
  let served: ReportApiConfig;
  /** The served config with the token pasted into its header, as the user does (or the CLI prints it). */
  let api: ReportApiConfig;
  let secret: string;
  beforeAll(async () => {
    server = await startReportingServer({
      env: { RATE_LIMIT_MAX: '0', PUBLIC_URL },
      overrides: { sources: healthyFakeSources() },
    });
    served = (await (await fetch(`${server.baseUrl}${SPAMBLOCKER_REPORT_PATH}`)).json()) as ReportApiConfig;
    secret = (await server.createToken('Android phone')).secret;
    api = JSON.parse(JSON.stringify(served).replace(SPAMBLOCKER_TOKEN_PLACEHOLDER, secret)) as ReportApiConfig;
  });
  afterAll(async () => server.close());

  const votesOn = (e164: string) => server.votesOn(e164);

  it('is a ReportApi of ParseIncomingNumber, CategoryConfig and HttpDownload with method 1, posting to PUBLIC_URL/api/report', () => {
    expect(served.enabled).toBe(true);
    expect(served.actions.map((action) => action.type)).toEqual([
      'ParseIncomingNumber',
      'CategoryConfig',
      'HttpDownload',
    ]);
    const [intercept, categories, http] = served.actions;
    expect(intercept).toMatchObject({ numberFilter: '.*', forwardType: 1 });
    // The app's six tags, braces included (ApiPresets.kt: tagValid = "{valid}"…).
    expect(Object.keys(categories?.map ?? {}).sort()).toEqual(
      ['{fraud}', '{marketing}', '{other}', '{political}', '{survey}', '{valid}'].sort(),
    );
    expect(http).toMatchObject({
      method: 1,
      url: `${PUBLIC_URL}/api/report`,
      header: `Authorization: Bearer ${SPAMBLOCKER_TOKEN_PLACEHOLDER}`,
    });
    expect(http?.body).toContain('"comment": "{comment}"');
    expect(served.desc).toBe('phone-reputation reports (placeholder.invalid; put your token in the header)');
  });

  it('sends the app’s exact request: a form content type on a JSON body, its User-Agent, the +{cc}{domestic} spelling', () => {
    const sent = buildReportRequest(api, '+33 6 12 34 56 20', '{fraud}', null);
    expect(sent.url).toBe(`${PUBLIC_URL}/api/report`);
    expect(sent.headers).toMatchObject({
      Authorization: `Bearer ${secret}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      'User-Agent': SPAMBLOCKER_HEADERS['User-Agent'],
    });
    expect(JSON.parse(sent.body)).toEqual({ phone: '+33612345620', rating: 'fraud', comment: '' });
  });

  it('records a report the user makes, with its tag as the rating and the comment cleaned', async () => {
    const sent = buildReportRequest(api, '+33612345621', '{marketing}', 'Isolation à 1 € ; encore');
    const answer = await sendAsTheApp(server, sent);
    expect(reportSucceeded(answer.status)).toBe(true);
    expect(JSON.parse(answer.body)).toEqual({ ok: true, replaced: false });
    expect(votesOn('+33612345621')).toMatchObject([{ rating: 'advertising', comment: 'Isolation à 1 € encore' }]);
  });

  it('records a report whose comment holds an unescaped " and a newline (invalid JSON): phone and rating kept, the comment dropped', async () => {
    const sent = buildReportRequest(api, '+33612345622', '{fraud}', 'il a dit "madame"\net raccroché');
    expect(() => JSON.parse(sent.body) as unknown).toThrow();
    const answer = await sendAsTheApp(server, sent);
    expect(answer.status).toBe(200);
    expect(votesOn('+33612345622')).toEqual([expect.objectContaining({ e164: '+33612345622', rating: 'fraud' })]);
    expect(votesOn('+33612345622')[0]?.comment).toBeUndefined();
  });

  it('records a caller that arrived in national form, whose {cc}{domestic} keeps the trunk 0 (+330612345623)', async () => {
    const sent = buildReportRequest(api, '0612345623', '{survey}', null);
    expect(JSON.parse(sent.body)).toMatchObject({ phone: '+330612345623' });
    expect((await sendAsTheApp(server, sent)).status).toBe(200);
    expect(votesOn('+33612345623')).toMatchObject([{ rating: 'poll' }]);
  });

  it('records the report the app sends by itself one hour after a local rule blocked a call: {other}, no comment', async () => {
    const answer = await sendAsTheApp(server, buildReportRequest(api, '+33612345624', '{other}', null));
    expect(answer.status).toBe(200);
    expect(votesOn('+33612345624')).toEqual([expect.objectContaining({ rating: 'other' })]);
    expect(votesOn('+33612345624')[0]?.comment).toBeUndefined();
  });

  it('maps each of the six tags onto its rating (src/domain/reports/ratings.ts)', async () => {
    for (const [tag, rating] of Object.entries(SPAMBLOCKER_RATINGS)) {
      const answer = await sendAsTheApp(server, buildReportRequest(api, '+4930123456', `{${tag}}`, null));
      expect(answer.status, tag).toBe(200);
      expect(
        votesOn('+4930123456').map((vote) => vote.rating),
        tag,
      ).toEqual([rating]);
    }
  });

  it('takes SpamBlocker’s own PhoneBlock preset pointed at /api/rate: its 00{cc}{domestic} spelling and PhoneBlock’s codes', async () => {
    // ApiPresets.kt, ApiReportPreset_PhoneBlock, with this deployment's URL and token.
    const phoneBlockPreset: ReportApiConfig = {
      desc: 'PhoneBlock',
      enabled: true,
      actions: [
        { type: 'ParseIncomingNumber', numberFilter: '.*', forwardType: 1 },
        {
          type: 'CategoryConfig',
          map: {
            '{valid}': 'A_LEGITIMATE',
            '{other}': 'B_MISSED',
            '{survey}': 'D_POLL',
            '{marketing}': 'E_ADVERTISING',
            '{political}': 'E_ADVERTISING',
            '{fraud}': 'G_FRAUD',
          },
        },
        {
          type: 'HttpDownload',
          method: 1,
          url: `${PUBLIC_URL}/api/rate`,
          header: `Authorization: Bearer ${secret}`,
          body: '{\n    "phone": "00{cc}{domestic}",\n    "rating": "{category}",\n    "comment": "{comment}"\n}',
        },
      ],
    };
    const sent = buildReportRequest(phoneBlockPreset, '+33612345625', '{valid}', 'mon médecin');
    expect(JSON.parse(sent.body)).toMatchObject({ phone: '0033612345625', rating: 'A_LEGITIMATE' });
    expect((await sendAsTheApp(server, sent)).status).toBe(200);
    expect(votesOn('+33612345625')).toMatchObject([{ rating: 'legitimate', comment: 'mon médecin' }]);
  });

  it('as served (its token not pasted yet) is refused with 401 and records nothing', async () => {
    const answer = await sendAsTheApp(server, buildReportRequest(served, '+33612345626', '{fraud}', null));
    expect(answer.status).toBe(401);
    expect(votesOn('+33612345626')).toEqual([]);
  });

  it('carries the token it is given in its header (phone-rep token create --spamblocker)', () => {
    const config = spamBlockerReportApi('https://phones.example.org', 'prt_abc') as unknown as ReportApiConfig;
    expect(config.desc).toBe('phone-reputation reports (phones.example.org)');
    expect(config.actions[2]).toMatchObject({
      url: 'https://phones.example.org/api/report',
      header: 'Authorization: Bearer prt_abc',
    });
  });
});

describe('SpamBlocker Report API config: the base URL', () => {
  it('says to set PUBLIC_URL when its address was guessed or is a loopback host, in its description and a header, as query.json does', async () => {
    const unset = await startTestServer({
      env: { TRUST_PROXY: 'loopback' },
      overrides: { sources: healthyFakeSources() },
    });
    const set = await startTestServer({
      env: { PUBLIC_URL: 'https://phones.example.org' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      const served = async (
        server: TestServer,
        headers: Record<string, string> = {},
      ): Promise<{ desc: string; url: string | undefined; warning: string | null; cache: string | null }> => {
        const answer = await fetch(`${server.baseUrl}${SPAMBLOCKER_REPORT_PATH}`, { headers });
        const config = (await answer.json()) as ReportApiConfig;
        return {
          desc: config.desc,
          url: config.actions[2]?.url,
          warning: answer.headers.get('x-public-url-warning'),
          cache: answer.headers.get('cache-control'),
        };
      };
      expect(await served(unset)).toMatchObject({
        desc: `phone-reputation reports (${new URL(unset.baseUrl).host}; loopback address: set PUBLIC_URL; put your token in the header)`,
        url: `${unset.baseUrl}/api/report`,
        warning:
          'This config names a loopback address, which a phone cannot reach: set PUBLIC_URL to the address the phones use.',
        cache: 'no-store',
      });
      expect(
        await served(unset, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'phones.example.org' }),
      ).toMatchObject({
        desc: 'phone-reputation reports (phones.example.org; address guessed: set PUBLIC_URL; put your token in the header)',
        url: 'https://phones.example.org/api/report',
      });
      expect(await served(set)).toMatchObject({ url: 'https://phones.example.org/api/report', warning: null });
    } finally {
      await Promise.all([unset.close(), set.close()]);
    }
  });
});
