// Privacy: the whole service (real adapters, engine, HTTP layer) runs with its logs captured
// in memory at debug level through a broad set of requests – valid numbers in every accepted
// spelling, invalid ones, unknown routes holding numbers, wrong methods, sources failing (502),
// a paused upstream, the rate limit (429) – and no log line holds any of the numbers in clear:
// not as sent, not with its separators removed, not in E.164 or without its trunk 0.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { waitUntilServing } from './support/answers.js';

const RATE_LIMIT_MAX = 60;

/** National digits of every number the test sends, each with a scenario or the fallback. */
const NUMBERS = {
  known: '0612345678',
  allFailing: '0698765432',
  paused: '0687654321',
  challenge: '0611223344',
  landline: '0140506070',
  overseas: '0690123456',
  foreign: '+32470123456',
  unknownRoute: '0655443322',
  wrongMethod: '0677889900',
  invalidLooking: '06123456789012',
} as const;

/** Every form a number could leak in: as written, digits only, E.164, without the trunk 0. */
function leakForms(spelling: string): string[] {
  const digits = spelling.replace(/\D/g, '');
  const forms = new Set([spelling, digits]);
  if (digits.startsWith('0') && !digits.startsWith('00')) {
    forms.add(digits.slice(1));
    forms.add(`+33${digits.slice(1)}`);
    forms.add(`33${digits.slice(1)}`);
  }
  if (digits.startsWith('00')) forms.add(digits.slice(2));
  return [...forms].filter((form) => form.replace(/\D/g, '').length >= 8);
}

describe('hardening: privacy of logs', () => {
  const lines: string[] = [];
  let sites: FakeUpstreamSites;
  let server: TestServer;
  const sent: string[] = [];

  beforeAll(async () => {
    sites = await startFakeUpstreamSites({
      fallback: { ...KNOWN_NUMBER },
      scenarios: {
        [NUMBERS.allFailing]: {
          tellowsApi: { status: 500 },
          tellowsWeb: { status: 500 },
          numeroinconnu: { status: 500 },
          telguarder: { status: 503 },
        },
        [NUMBERS.challenge]: {
          tellowsWeb: { fixture: 'page-challenge.html' },
          numeroinconnu: { fixture: 'challenge.html' },
          telguarder: { fixture: 'challenge.html' },
        },
        [NUMBERS.paused]: { numeroinconnu: { status: 429, headers: { 'retry-after': '600' } } },
      },
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(
          ...chunk
            .toString()
            .split('\n')
            .filter((line) => line !== ''),
        );
        callback();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    server = await startTestServer({
      env: { ...sites.env(), RATE_LIMIT_MAX: String(RATE_LIMIT_MAX), LOG_LEVEL: 'debug' },
      logger,
    });
    await waitUntilServing(server.app);
  });
  afterAll(async () => {
    await server.close();
    await sites.close();
  });

  async function send(
    method: string,
    path: string,
    spelling: string,
    headers: Record<string, string> = {},
  ): Promise<number> {
    sent.push(spelling);
    const response = await fetch(`${server.baseUrl}${path}`, { method, headers });
    await response.arrayBuffer();
    return response.status;
  }

  it('never writes a requested number in clear in any log line, whatever the answer', async () => {
    const statuses = new Set<number>();
    const spellings = [
      NUMBERS.known,
      '06 12 34 56 78',
      '06.12.34.56.78',
      '06-12-34-56-78',
      '(06)12345678',
      '%2B33612345678',
      '0033612345678',
      NUMBERS.landline,
      NUMBERS.overseas,
      encodeURIComponent(NUMBERS.foreign),
      NUMBERS.allFailing,
      NUMBERS.challenge,
      NUMBERS.paused,
    ];
    for (const spelling of spellings) {
      statuses.add(await send('GET', `/api/phone/${spelling.replaceAll(' ', '%20')}`, decodeURIComponent(spelling)));
      statuses.add(
        await send('GET', `/api/phone/${spelling.replaceAll(' ', '%20')}/score`, decodeURIComponent(spelling)),
      );
    }
    // The pause set by the 429 now answers other numbers' community slot at once.
    statuses.add(await send('GET', `/api/phone/${NUMBERS.landline}`, NUMBERS.landline));
    statuses.add(await send('GET', `/api/phone/${NUMBERS.invalidLooking}`, NUMBERS.invalidLooking));
    statuses.add(await send('GET', `/api/phone/06l2345678`, '06l2345678'));
    statuses.add(await send('GET', `/api/phones/${NUMBERS.unknownRoute}`, NUMBERS.unknownRoute));
    statuses.add(
      await send(
        'GET',
        `/api/phone/${NUMBERS.unknownRoute}/history?from=${NUMBERS.unknownRoute}`,
        NUMBERS.unknownRoute,
      ),
    );
    statuses.add(await send('POST', `/api/phone/${NUMBERS.wrongMethod}`, NUMBERS.wrongMethod));
    statuses.add(
      await send('GET', `/api/phone/${NUMBERS.known}`, NUMBERS.known, {
        'x-request-id': NUMBERS.wrongMethod.slice(1),
        referer: `http://127.0.0.1/?q=${NUMBERS.known}`,
      }),
    );
    // Past the limit: 429s for numbers too.
    for (let index = 0; index < RATE_LIMIT_MAX; index += 1) {
      statuses.add(await send('GET', `/api/phone/${NUMBERS.known}/score`, NUMBERS.known));
    }

    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 404, 405, 429, 502]));
    // The logs hold something to search: one line per request at least, plus the engine's and adapters'.
    expect(lines.length).toBeGreaterThanOrEqual(sent.length);

    const forms = [...new Set(sent.flatMap(leakForms))];
    // The search itself catches the usual leaks (a URL, an E.164 field, digits without separators).
    for (const leakyLine of [
      '{"url":"/api/phone/06%2012%2034%2056%2078"}'.replaceAll('%20', ''),
      '{"e164":"+33612345678"}',
      '{"n":"612345678"}',
    ]) {
      expect(forms.some((form) => leakyLine.includes(form))).toBe(true);
    }
    const leaks: string[] = [];
    for (const line of lines) {
      // The caller-chosen request id is echoed by design; it is not a number the service looked up.
      const searchable = line.replaceAll(`"reqId":"${NUMBERS.wrongMethod.slice(1)}"`, '"reqId":"<caller id>"');
      for (const form of forms) if (searchable.includes(form)) leaks.push(`${form} in ${line.slice(0, 300)}`);
    }
    expect(leaks).toEqual([]);
  }, 60_000);
});
