// Fuzzing the API: over ten thousand generated paths, query strings and headers – malformed
// percent-encoding, Unicode digits and look-alikes, over-long segments, traversal attempts,
// control characters, hostile headers – through the real app with in-memory sources. Every
// answer is a documented status with the documented body; never a 500, never an exception.
// The bulk goes through app.inject() (fast); a few hundred raw requests go over real HTTP
// with bytes no HTTP client library would send.
import net from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { loadOpenApiContract, type OpenApiContract } from '../support/contracts.js';
import { describeUndocumentedAnswer, waitUntilServing, type SeenAnswer } from './support/answers.js';

const DIGITS = '0123456789';
const UNICODE_DIGITS = ['٠', '٦', '۶', '०', '६', '০', '๖', '０', '６', '𝟔', '⁶', '₆', '①', '⑥'];
const LOOK_ALIKES = ['O', 'o', 'l', 'I', '|', 'Ｏ', 'ο', 'О', 'б', '٥', 'Ꮾ', 'ɢ'];
const SEPARATORS = [
  ' ',
  '%20',
  '.',
  '-',
  '(',
  ')',
  '%28',
  '%29',
  '+',
  '%2B',
  '%2b',
  '/',
  '%2F',
  '%2f',
  '_',
  '\t',
  '%09',
  '%C2%A0',
  '%E2%80%8B',
  '%E2%80%AE',
];
const MALFORMED_ENCODINGS = [
  '%',
  '%%',
  '%G1',
  '%2',
  '%zz',
  '%E0%A4%A',
  '%C3',
  '%FF%FE',
  '%C0%AF',
  '%ED%A0%80',
  '%u0030',
  '%%32%35',
];
const TRAVERSALS = [
  '..',
  '../',
  '..%2f',
  '..%2F',
  '%2e%2e%2f',
  '%2e%2e/',
  '..%5c',
  '..\\',
  '%252e%252e%252f',
  '....//',
  '.%00.',
  '%c0%ae%c0%ae%2f',
];
const CONTROL = ['%00', '%0a', '%0d', '%0d%0a', '%7f', '%1b', '%e2%80%a8'];

const pick = (values: readonly string[]) => fc.constantFrom(...values);

/** Pieces a number segment is built from: mostly digits, with every kind of trouble mixed in. */
const segmentPiece = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: pick([...DIGITS]), minLength: 1, maxLength: 12 }) },
  {
    weight: 2,
    arbitrary: pick(['0', '00', '+', '%2B', '0033', '+33', '%2B33', '06', '07', '09', '0800', '+32', '0032']),
  },
  { weight: 2, arbitrary: pick(SEPARATORS) },
  { weight: 1, arbitrary: pick(UNICODE_DIGITS).map(encodeURIComponent) },
  { weight: 1, arbitrary: pick(UNICODE_DIGITS) },
  { weight: 1, arbitrary: pick(LOOK_ALIKES).map(encodeURIComponent) },
  { weight: 1, arbitrary: pick(MALFORMED_ENCODINGS) },
  { weight: 1, arbitrary: pick(TRAVERSALS) },
  { weight: 1, arbitrary: pick(CONTROL) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }).map(encodeURIComponent) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'binary', maxLength: 6 })
      .map((text) => encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, ''))),
  },
  { weight: 1, arbitrary: fc.integer({ min: 30, max: 4000 }).map((length) => '6'.repeat(length)) },
  // What phone systems send: URI schemes, their parameters and hosts, withheld-caller words.
  {
    weight: 1,
    arbitrary: pick([
      'tel:',
      'TEL:',
      'sip:',
      'sips:',
      '%73ip%3A',
      '@',
      '%40',
      '@host',
      '@[::1]:5060',
      ';npdi',
      '%3Bnpdi',
      ';rn=+33612',
      ';user=phone',
      ';phone-context=+33',
      ':',
      '?',
      'anonymous',
      'Restricted',
      'UNKNOWN',
      '@anonymous.invalid',
    ]),
  },
);

/** Accepted spellings of real numbers (national, +33, 0033, E.164 without +, tel:, sip:, with separators), so 200s are fuzzed too. */
const plausibleNumber = fc
  .tuple(
    pick(['0', '+33', '%2B33', '0033', '+32', '0032', '33', '+330', 'tel:+33', 'sip:+33', 'sip%3A0033']),
    pick(['1', '2', '3', '4', '5', '6', '7', '9']),
    fc.array(
      fc.tuple(
        fc.string({ unit: pick([...DIGITS]), minLength: 2, maxLength: 2 }),
        pick(['', '', '', ' ', '%20', '.', '-']),
      ),
      { minLength: 4, maxLength: 4 },
    ),
  )
  .map(
    ([prefix, first, pairs]) =>
      `${prefix}${first}${pairs.map(([digits, separator]) => `${separator}${digits}`).join('')}${prefix.startsWith('sip') ? '@pbx.example;user=phone' : ''}`,
  );

const numberSegment = fc.oneof(
  { weight: 2, arbitrary: plausibleNumber },
  { weight: 5, arbitrary: fc.array(segmentPiece, { minLength: 0, maxLength: 6 }).map((pieces) => pieces.join('')) },
);

const randomSegment = fc.oneof(
  numberSegment,
  fc.string({ unit: pick([...'abcdefghijklmnopqrstuvwxyz0123456789-_.~%']), maxLength: 20 }),
);

const pathArbitrary = fc.oneof(
  { weight: 5, arbitrary: numberSegment.map((segment) => `/api/phone/${segment}`) },
  { weight: 4, arbitrary: numberSegment.map((segment) => `/api/phone/${segment}/score`) },
  { weight: 2, arbitrary: numberSegment.map((segment) => `/api/phone/${segment}/info`) },
  {
    weight: 1,
    arbitrary: fc.tuple(numberSegment, randomSegment).map(([segment, extra]) => `/api/phone/${segment}/${extra}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        pick([
          '/',
          '//',
          '/api/',
          '/api//phone/',
          '/API/phone/',
          '/api/phone',
          '/health',
          '/openapi.json',
          '/metrics',
          '/.env',
          '/api/phone/%2e%2e/',
        ]),
        randomSegment,
      )
      .map(([prefix, rest]) => `${prefix}${rest}`),
  },
  { weight: 1, arbitrary: fc.array(randomSegment, { maxLength: 5 }).map((segments) => `/${segments.join('/')}`) },
);

const queryArbitrary = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        randomSegment,
        fc.oneof(numberSegment, pick(MALFORMED_ENCODINGS), fc.string({ maxLength: 30 }).map(encodeURIComponent)),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => `?${pairs.map(([key, value]) => `${key}=${value}`).join('&')}`),
  pick([
    '?',
    '??',
    '?&&',
    '?=',
    '?a',
    '?number=0612345678',
    '?__proto__[x]=1',
    '?constructor[prototype][x]=1',
    `?q=${'x'.repeat(3000)}`,
  ]),
);

/** Header values inject() can carry: printable Latin-1, long, repeated, or meant to confuse. */
const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 20 }),
  fc.integer({ min: 100, max: 8000 }).map((length) => 'a'.repeat(length)),
  pick([
    '1.2.3.4, 5.6.7.8',
    '::1',
    '::ffff:10.0.0.1',
    'unknown',
    '',
    ' ',
    '0612345678',
    'application/json; charset=utf-32',
    'gzip, br, deflate;q=0',
    'bytes=0-1,2-3',
    '../../etc/passwd',
    '() { :; }; echo vulnerable',
    '${jndi:ldap://127.0.0.1/a}',
    '__proto__',
  ]),
);

const headersArbitrary = fc.dictionary(
  pick([
    'x-request-id',
    'x-forwarded-for',
    'x-real-ip',
    'forwarded',
    'accept',
    'accept-encoding',
    'accept-language',
    'content-type',
    'origin',
    'referer',
    'user-agent',
    'cookie',
    'range',
    'if-none-match',
    'x-http-method-override',
    'authorization',
    'x-custom-header',
  ]),
  headerValue,
  { maxKeys: 6 },
);

const methodArbitrary = fc.oneof(
  { weight: 8, arbitrary: fc.constant('GET' as const) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('HEAD' as const, 'POST' as const, 'PUT' as const, 'DELETE' as const, 'PATCH' as const),
  },
);

describe('hardening: API fuzzing', () => {
  let server: TestServer;
  let contract: OpenApiContract;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
    await waitUntilServing(server.app);
    contract = await loadOpenApiContract(server.app);
  });
  afterAll(async () => {
    await server.close();
  });

  async function inject(
    method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    path: string,
    headers: Record<string, string> = {},
  ): Promise<SeenAnswer> {
    // URL parsing drops tabs and newlines; when what is left starts with `//`, inject() reads it
    // as a host (`/\t/%3B` would fetch `/` of host `;`), so those bytes go over a real socket too.
    if (Object.keys(headers).length === 0 && path.replace(/[\t\n\r]/g, '').startsWith('//') && /[\t\n\r]/.test(path))
      return sentRaw(method, path);
    let response;
    try {
      response = await server.app.inject({ method, url: path, headers });
    } catch (error) {
      // A target no URL can hold (a tab that leaves `//` behind once URL parsing drops it):
      // inject() cannot build it, so the same bytes go over a real socket.
      if ((error as { code?: string }).code !== 'ERR_INVALID_URL' || Object.keys(headers).length > 0) throw error;
      return sentRaw(method, path);
    }
    const contentType = response.headers['content-type'];
    // A compressed answer is checked on what it decodes to, as a client reads it.
    const coding = response.headers['content-encoding'];
    const body =
      coding === 'br'
        ? brotliDecompressSync(response.rawPayload).toString('utf8')
        : coding === 'gzip'
          ? gunzipSync(response.rawPayload).toString('utf8')
          : response.body;
    const answer = {
      method,
      path,
      status: response.statusCode,
      contentType: typeof contentType === 'string' ? contentType : undefined,
      body,
    };
    // Every answer is also held to the published OpenAPI document, headers included.
    const mismatch = contract.describeMismatch({ ...answer, headers: response.headers });
    if (mismatch !== undefined) throw new Error(`${method} ${path}: ${mismatch}\n${body.slice(0, 200)}`);
    return answer;
  }

  async function sentRaw(method: string, path: string): Promise<SeenAnswer> {
    const port = Number(new URL(server.baseUrl).port);
    const answer = await sendRaw(port, `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    if (answer === undefined)
      throw new Error(`${method} ${JSON.stringify(path)}: the server closed the connection without an answer`);
    const seen = { method: judgedMethod(method, answer), path, ...answer };
    const mismatch = contract.describeMismatch(seen);
    if (mismatch !== undefined)
      throw new Error(`${method} ${JSON.stringify(path)}: ${mismatch}\n${answer.body.slice(0, 200)}`);
    return seen;
  }

  it('answers 6,000 generated paths with documented statuses and bodies only', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(methodArbitrary, pathArbitrary, async (method, path) => {
        const answer = await inject(method, path);
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        expect(
          describeUndocumentedAnswer(answer),
          `${method} ${path} → ${answer.status} ${answer.body.slice(0, 200)}`,
        ).toBeUndefined();
      }),
      // Found by this property: inject() trims spaces, so `// ` is the root with a trailing slash;
      // a tab URL parsing drops leaves `//`, which inject() cannot send.
      {
        numRuns: 6000,
        examples: [
          ['HEAD', '// '],
          ['GET', '/health/ '],
          ['GET', '/\t/'],
          ['GET', '/\t/%3B'],
        ],
      },
    );
    // The generator reaches the interesting answers, not only one of them.
    expect(seen.get(200) ?? 0).toBeGreaterThan(100);
    expect(seen.get(400) ?? 0).toBeGreaterThan(100);
    expect(seen.get(404) ?? 0).toBeGreaterThan(10);
    expect(seen.get(405) ?? 0).toBeGreaterThan(10);
  }, 120_000);

  it('answers 2,000 generated query strings with documented statuses and bodies only', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(numberSegment, fc.constant('0612345678')),
        fc.boolean(),
        queryArbitrary,
        async (segment, score, query) => {
          const path = `/api/phone/${segment}${score ? '/score' : ''}${query}`;
          const answer = await inject('GET', path);
          expect(
            describeUndocumentedAnswer(answer),
            `${path} → ${answer.status} ${answer.body.slice(0, 200)}`,
          ).toBeUndefined();
        },
      ),
      { numRuns: 2000 },
    );
  }, 120_000);

  it('answers 2,000 requests with hostile headers with documented statuses and bodies only', async () => {
    await fc.assert(
      fc.asyncProperty(
        pick([
          '/api/phone/0612345678',
          '/api/phone/0612345678/score',
          '/api/phone/0612345678/info',
          '/api/phone/abc',
          '/health',
          '/nowhere',
        ]),
        headersArbitrary,
        async (path, headers) => {
          const answer = await inject('GET', path, headers);
          expect(
            describeUndocumentedAnswer(answer),
            `${path} ${JSON.stringify(headers).slice(0, 200)} → ${answer.status} ${answer.body.slice(0, 200)}`,
          ).toBeUndefined();
          // A caller's request id is echoed only when short and plain (log injection).
          const requestId = headers['x-request-id'];
          if (
            requestId !== undefined &&
            !/^[A-Za-z0-9._:-]{1,64}$/.test(requestId) &&
            answer.status >= 400 &&
            answer.method !== 'HEAD'
          ) {
            expect((JSON.parse(answer.body) as { requestId: string }).requestId).not.toBe(requestId);
          }
        },
      ),
      // Found by this property: a held answer with `If-None-Match: *` is a 304, with no body.
      { numRuns: 2000, examples: [['/api/phone/0612345678', { 'if-none-match': '*', 'x-request-id': '' }]] },
    );
  }, 120_000);

  it('answers 300 raw HTTP requests with bytes no client library sends, and keeps serving', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const rawTarget = fc.oneof(
      pathArbitrary,
      numberSegment.map((segment) => `/api/phone/${decodeURIComponentLeniently(segment)}`),
      fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => `/api/phone/${text}`),
      pick([
        '*',
        'http://127.0.0.1/api/phone/0612345678',
        '/api/phone/06 12 34 56 78',
        '/api/phone/06\t12',
        '/api/phone/\u0000',
        '/api/phone/06%0d%0aSet-Cookie:%20x=1',
      ]),
    );
    const rawHeaders = fc.array(
      fc.oneof(
        fc
          .tuple(
            pick(['x-request-id', 'x-forwarded-for', 'host', 'content-length', 'transfer-encoding', 'x-a']),
            headerValue,
          )
          .map(([name, value]) => `${name}: ${value}`),
        pick([
          'Content-Length: -1',
          'Content-Length: 5\r\nContent-Length: 6',
          'Transfer-Encoding: chunked, identity',
          'X-Bad Name: 1',
          ': empty-name',
          'X-Folded: a\r\n folded',
          'Host:',
          `X-Huge: ${'h'.repeat(20_000)}`,
        ]),
      ),
      { maxLength: 4 },
    );
    await fc.assert(
      fc.asyncProperty(
        pick(['GET', 'HEAD', 'GET', 'POST', 'BREW', 'get']),
        rawTarget,
        rawHeaders,
        async (method, target, headers) => {
          const answer = await sendRaw(
            port,
            `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((line) => `${line}\r\n`).join('')}Connection: close\r\n\r\n`,
          );
          if (answer === undefined) return; // Node closed a connection it could not parse: no answer, no crash.
          const seen = {
            method: judgedMethod(method, answer),
            path: target.replace(/^https?:\/\/[^/]*/i, ''),
            ...answer,
          };
          const label = `${method} ${JSON.stringify(target).slice(0, 200)} → ${answer.status} ${answer.body.slice(0, 200)}`;
          expect(describeUndocumentedAnswer(seen), label).toBeUndefined();
          // Read off a raw socket: status, content type and body are held to the document, not headers.
          expect(contract.describeMismatch(seen), label).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
    const health = await fetch(`${server.baseUrl}/health`);
    expect(health.status).toBe(200);
  }, 120_000);
});

/**
 * The method an answer read off a raw socket is judged by: a request Node could not parse is
 * answered 400 with a body before its method is known, so a HEAD may get one.
 */
function judgedMethod(method: string, answer: { status: number; body: string }): string {
  const upper = method.toUpperCase();
  return upper === 'HEAD' && answer.status === 400 && answer.body !== '' ? 'GET' : upper;
}

function decodeURIComponentLeniently(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Writes raw bytes to the server and reads one answer; undefined when the server sent nothing. */
async function sendRaw(
  port: number,
  request: string,
): Promise<{ status: number; contentType: string | undefined; body: string } | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s to ${JSON.stringify(request.slice(0, 200))}`));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      // latin1 keeps one character per byte, so chunk sizes (in bytes) slice correctly.
      const text = Buffer.concat(chunks).toString('latin1');
      if (text === '') {
        resolve(undefined);
        return;
      }
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      const contentType = /^content-type:\s*(.+)$/im.exec(head)?.[1]?.trim();
      let body = rest.join('\r\n\r\n');
      if (/^transfer-encoding:\s*chunked/im.test(head)) body = decodeChunked(body);
      resolve({ status, contentType, body: Buffer.from(body, 'latin1').toString('utf8') });
    });
    socket.write(request, 'latin1');
  });
}

function decodeChunked(body: string): string {
  let output = '';
  let rest = body;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    if (lineEnd < 0) return output;
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!Number.isFinite(size) || size === 0) return output;
    output += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}
