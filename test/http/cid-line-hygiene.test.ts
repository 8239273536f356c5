// The /cid line made from a hostile upstream, through the real server over HTTP: the primary
// source's JSON (its real format, the adapter's own fixture) names the caller type with lone
// surrogates, noncharacters, invisible fillers and `%`, or with more flags or accented letters
// than the line may hold. The line keeps none of the first, and is cut by grapheme cluster within
// its byte bound (docs/api.md, "The caller-ID line: bounds").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { fixtureText, UNKNOWN_NUMBER, upstreamEnv, type Site } from '../../harness/upstream-sites.js';

/** National number → the caller type every comment of the primary source gives. */
const CATEGORIES: Record<string, string> = {
  '0612000101': 'Dé\uD800mar\uFFFFcha\u3164ge %s%n \uFDD0\u{10FFFF}\u115F\u1160\u034F\uFFA0\uDC00 fin',
  '0612000102': '🇫🇷'.repeat(40),
  '0612000103': 'e\u0301'.repeat(40),
};

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The tellows API fixture (score 8) with every comment's caller type replaced. */
function primaryAnswer(category: string): string {
  const document = JSON.parse(fixtureText('tellowsApi', 'api-normal.json')) as {
    tellows: { commentList: { comment: { callerType: string }[] } };
  };
  for (const comment of document.tellows.commentList.comment) comment.callerType = category;
  // JSON.stringify writes a lone surrogate as a \uD800 escape, as a hostile upstream would.
  return JSON.stringify(document);
}

let upstream: LoopbackServer;
let server: TestServer;

beforeAll(async () => {
  const unknown = (site: Site): Buffer => {
    const answer = UNKNOWN_NUMBER[site];
    return Buffer.from('fixture' in answer ? fixtureText(site, answer.fixture) : '', 'latin1');
  };
  upstream = await startLoopbackServer((request, response) => {
    const path = request.url.split('?')[0] ?? '';
    const primary = /^\/basic\/num\/([^/]+)$/.exec(path);
    if (primary) {
      const category = CATEGORIES[decodeURIComponent(primary[1] ?? '')];
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.end(category === undefined ? unknown('tellowsApi') : Buffer.from(primaryAnswer(category), 'utf8'));
    } else if (request.method === 'POST' && path === '/fr/search') {
      response
        .writeHead(302, {
          location: `/fr/numero/${encodeURIComponent(new URLSearchParams(request.body).get('q') ?? '')}`,
        })
        .end();
    } else if (/^\/fr\/numero\//.test(path))
      response.writeHead(200, { 'content-type': 'text/html' }).end(unknown('telguarder'));
    else if (/^\/num\//.test(path)) response.writeHead(200, { 'content-type': 'text/html' }).end(unknown('tellowsWeb'));
    else if (/^\/numero\//.test(path))
      response.writeHead(200, { 'content-type': 'text/html' }).end(unknown('numeroinconnu'));
    else response.writeHead(404).end();
  });
  server = await startTestServer({
    env: { ...upstreamEnv(upstream.url), TELLOWS_API_KEY: 'test-partner-key', RATE_LIMIT_MAX: '0' },
  });
});

afterAll(async () => {
  await server.close();
  await upstream.close();
});

async function cidLine(number: string): Promise<{ text: string; bytes: Buffer }> {
  const response = await fetch(`${server.baseUrl}/api/phone/${number}/cid?wait=4000`);
  expect(response.status).toBe(200);
  const bytes = Buffer.from(await response.arrayBuffer());
  return { text: bytes.toString('utf8'), bytes };
}

describe('the /cid line from a hostile upstream caller type', () => {
  it('keeps no lone surrogate (nor a U+FFFD for it), noncharacter, invisible filler or %', async () => {
    const { text, bytes } = await cidLine('0612000101');
    expect(text).toBe('SPAM? 8/9 Démarchage sn fin');
    // The bytes are exactly that text: no replacement character was sent.
    expect(bytes.includes(Buffer.from('\uFFFD', 'utf8'))).toBe(false);
  });

  it('cuts a line of flags between two flags, within 75 bytes', async () => {
    const { text, bytes } = await cidLine('0612000102');
    expect(text).toBe(`SPAM? 8/9 ${'🇫🇷'.repeat(8)}`);
    expect(bytes.length).toBeLessThanOrEqual(75);
  });

  it('counts a letter and its accent as one, up to 30', async () => {
    const { text } = await cidLine('0612000103');
    expect(text).toBe(`SPAM? 8/9 ${'é'.repeat(20)}`);
    expect(Array.from(graphemes.segment(text))).toHaveLength(30);
  });
});
