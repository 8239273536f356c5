// Every spelling of a caller's number through the real app over HTTP, against fake upstream
// sites on loopback: the forms people write, the forms phone systems send (E.164 without +,
// tel: and sip: URIs, sent as they are or percent-encoded), the trunk 0 after a calling code,
// and withheld callers, each with its exact answer (docs/numbering.md).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_URI_LENGTH,
  PHONE_NUMBER_REJECTIONS,
  WITHHELD_WORDS,
} from '../../src/domain/numbering/parse-phone-number.js';
import { INVALID_NUMBER_DETAILS } from '../../src/http/errors.js';
import { fetchDocumented } from '../support/contracts.js';
import { rawExchange } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { KNOWN_NUMBER, startFakeUpstreamSites, type FakeUpstreamSites } from '../../harness/upstream-sites.js';

interface Answer {
  status: number;
  cacheControl: string | null;
  body: { data?: { number?: string }; meta?: unknown; code?: string; detail?: string; [member: string]: unknown };
}

let sites: FakeUpstreamSites;
let server: TestServer;

beforeAll(async () => {
  sites = await startFakeUpstreamSites({ fallback: { ...KNOWN_NUMBER } });
  server = await startTestServer({ env: { RATE_LIMIT_MAX: '0', ...sites.env() } });
});
afterAll(async () => {
  await server.close();
  await sites.close();
});

async function get(path: string): Promise<Answer> {
  const answer = await fetchDocumented(server, path);
  return {
    status: answer.status,
    cacheControl: answer.headers.get('cache-control'),
    body: JSON.parse(answer.text) as Answer['body'],
  };
}

/** The segment as a client that encodes only what a path cannot hold sends it. */
const asIs = (spelling: string): string => spelling.replace(/[ %?#/]/g, (character) => encodeURIComponent(character));

/** What a report says about the number, without the per-request parts of `meta` (fetchedAt, cache). */
function essence(body: Answer['body']): unknown {
  const meta = body.meta as { sources: Record<string, { status: string }>; hints: string[]; scoreSource?: string };
  return {
    data: body.data,
    hints: meta.hints,
    scoreSource: meta.scoreSource,
    statuses: Object.fromEntries(Object.entries(meta.sources).map(([slot, outcome]) => [slot, outcome.status])),
  };
}

const MOBILE_SPELLINGS = [
  // People's spellings, and the trunk 0 after the calling code (issue 20).
  '0612345678',
  '06 12 34 56 78',
  '+33612345678',
  '+33 (0)6 12 34 56 78',
  '+330612345678',
  '+33 06 12 34 56 78',
  '0033 06 12 34 56 78',
  // Phone systems' (issue 21).
  '33612345678',
  '330612345678',
  'tel:+33612345678',
  'tel:+33-6-12-34-56-78;npdi',
  'tel:+33.6.12.34.56.78;rn=+33612340000;npdi',
  'tel:0612345678;phone-context=+33',
  'TEL:+33612345678',
  'sip:+33612345678@host;user=phone',
  'sip:33612345678@10.0.0.1:5060;user=phone;transport=udp',
  'sips:0612345678@pbx.example;user=phone',
  'SIP:+33612345678@PBX.EXAMPLE',
  'sip:+33612345678;npdi;rn=+33612340000@trunk.example.com;user=phone',
  'sip:+33612345678@[2001:db8::1]:5061',
];

describe('every spelling of a number, over HTTP', () => {
  let national: { report: Answer; score: Answer; info: Answer };
  beforeAll(async () => {
    national = {
      report: await get('/api/phone/0612345678'),
      score: await get('/api/phone/0612345678/score'),
      info: await get('/api/phone/0612345678/info'),
    };
    expect(national.report.status).toBe(200);
  });

  it.each(MOBILE_SPELLINGS)('answers %s as 0612345678, percent-encoded or as it is', async (spelling) => {
    for (const segment of [encodeURIComponent(spelling), asIs(spelling)]) {
      const report = await get(`/api/phone/${segment}`);
      expect(report.status, segment).toBe(200);
      expect(report.body.data?.number).toBe('0612345678');
      expect(essence(report.body), segment).toEqual(essence(national.report.body));
      const score = await get(`/api/phone/${segment}/score`);
      expect(essence(score.body), segment).toEqual(essence(national.score.body));
      const info = await get(`/api/phone/${segment}/info`);
      expect(info.body, segment).toEqual(national.info.body);
    }
  });

  it('answers an overseas and a foreign number in E.164 without + as their normal form', async () => {
    expect((await get('/api/phone/262692123456/info')).body).toEqual((await get('/api/phone/0692123456/info')).body);
    expect((await get(`/api/phone/${encodeURIComponent('sip:32470123456@gw.example;user=phone')}/info`)).body).toEqual(
      (await get('/api/phone/+32470123456/info')).body,
    );
  });

  it('accepts a sip: URI of 256 characters with a long host name, sent as it is or fully percent-encoded, and refuses 257 as too_long', async () => {
    const uri = (total: number) => {
      const start = 'sip:+33612345678@';
      return `${start}${'h'.repeat(total - start.length - 8)}.example`;
    };
    const everyByte = (text: string) =>
      [...text].map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    expect(uri(MAX_URI_LENGTH)).toHaveLength(256);
    for (const segment of [
      uri(MAX_URI_LENGTH),
      encodeURIComponent(uri(MAX_URI_LENGTH)),
      everyByte(uri(MAX_URI_LENGTH)),
    ]) {
      const answer = await get(`/api/phone/${segment}/info`);
      expect(answer.status, `${segment.length} characters in the path`).toBe(200);
      expect(answer.body.data?.number).toBe('0612345678');
    }
    // The last one is past the router's own bound on a parameter (maxParamLength): the same answer.
    for (const segment of [
      uri(MAX_URI_LENGTH + 1),
      everyByte(uri(MAX_URI_LENGTH + 1)),
      `${uri(MAX_URI_LENGTH)}${'x'.repeat(600)}`,
    ]) {
      for (const route of ['', '/score', '/info']) {
        const answer = await get(`/api/phone/${segment}${route}`);
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ code: 'too_long', detail: INVALID_NUMBER_DETAILS.too_long });
      }
    }
  });

  it('reads a percent-encoded @, ; and : in the path like the characters themselves, and a literal one through a raw socket', async () => {
    const encoded = await get('/api/phone/sip%3A%2B33612345678%40host%3Buser%3Dphone/info');
    expect(encoded.body.data?.number).toBe('0612345678');
    const port = Number(new URL(server.baseUrl).port);
    const raw = await rawExchange(
      port,
      'GET /api/phone/sip:+33612345678@host;user=phone/score HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(raw.status).toBe(200);
    expect((JSON.parse(raw.body) as Answer['body']).data?.number).toBe('0612345678');
    // A `?` opens the query string: what follows is no part of the number.
    expect((await get('/api/phone/sip:+33612345678@host?user=phone')).body.data?.number).toBe('0612345678');
    // An encoded slash inside a URI is no host character.
    expect((await get('/api/phone/sip:+33612345678@host%2Fpath/info')).body.code).toBe('invalid_uri');
  });

  it.each([
    ['invalid_uri', 'sip:example.com'],
    ['invalid_uri', 'sip:+33612345678:secret@host'],
    ['invalid_character', 'sip:alice@example.com'],
    ['no_digits', 'tel:;npdi'],
    ['invalid_number', '+33 00612345678'],
  ] as const)('refuses with %s: %s', async (code, spelling) => {
    for (const route of ['', '/score', '/info']) {
      const answer = await get(`/api/phone/${encodeURIComponent(spelling)}${route}`);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        code,
        detail: INVALID_NUMBER_DETAILS[code],
        title: 'Invalid phone number format',
      });
    }
  });
});

describe('withheld callers, over HTTP', () => {
  const forms = (word: string): string[] => [
    word,
    word.toUpperCase(),
    `${word.charAt(0).toUpperCase()}${word.slice(1)}`,
    `tel:${word}`,
    `sip:${word}@anonymous.invalid`,
    `SIPS:${word.toUpperCase()}@pbx.example;user=phone`,
  ];

  it.each([...WITHHELD_WORDS])('answers %s, in every case and form, with 400 and code withheld', async (word) => {
    const before = sites.count('tellowsWeb') + sites.count('numeroinconnu') + sites.count('telguarder');
    for (const spelling of forms(word)) {
      for (const segment of [spelling, encodeURIComponent(spelling)]) {
        for (const route of ['', '/score', '/info']) {
          const answer = await get(`/api/phone/${segment}${route}`);
          expect(answer.status, segment).toBe(400);
          expect(answer.cacheControl).toBe('no-store');
          expect(answer.body).toEqual({
            type: '/problems/invalid-number',
            title: 'Invalid phone number format',
            status: 400,
            detail:
              'The caller withheld their number (anonymous, restricted, unknown, unavailable, private or withheld): there is no number to look up.',
            requestId: expect.any(String) as unknown,
            success: false,
            error: 'Invalid phone number format',
            code: 'withheld',
          });
        }
      }
    }
    // Nothing to look up: no upstream was asked.
    expect(sites.count('tellowsWeb') + sites.count('numeroinconnu') + sites.count('telguarder')).toBe(before);
  });
});

describe('the documented refusals', () => {
  it('lists in docs/api.md every code the parser gives, with the exact detail the API sends', () => {
    const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const rows = new Map([...page.matchAll(/^\| `([a-z_]+)` \| (.+) \|$/gm)].map((match) => [match[1], match[2]]));
    for (const code of PHONE_NUMBER_REJECTIONS) expect(rows.get(code), code).toBe(INVALID_NUMBER_DETAILS[code]);
  });

  it('names every withheld word in docs/numbering.md', () => {
    const page = readFileSync(new URL('../../docs/numbering.md', import.meta.url), 'utf8');
    for (const word of WITHHELD_WORDS) expect(page).toContain(`\`${word}\``);
  });
});
