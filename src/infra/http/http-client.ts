// The one HTTP client every upstream adapter goes through (undici). It owns the safety rules
// for talking to sites we do not control: a deadline that covers the body too, a cap on the
// decoded body enforced while streaming (so a gzip bomb costs at most the cap), at most two
// Content-Encoding layers, same-origin redirects only, and charset decoding. It never throws:
// every failure is an HttpFailureReason.
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';
import type { HttpClient, HttpFailureReason, HttpRequest, HttpResult, TransportCause } from './types.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 5;
export const MAX_CONTENT_ENCODING_LAYERS = 2;
/** A current desktop browser: some upstreams answer scripts with a challenge page. */
export const DEFAULT_USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const META_CHARSET_WINDOW_BYTES = 1024;

export interface HttpClientOptions {
  userAgent?: string;
  /** Default cap on the decoded body; a request may lower or raise it. */
  maxBodyBytes?: number;
  maxRedirects?: number;
  /** Safety nets under the per-request deadline (the request's signal is the real one). */
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

export type ClosableHttpClient = HttpClient & { close(): Promise<void> };

class HttpFailure extends Error {
  constructor(readonly reason: HttpFailureReason) {
    super(reason);
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export function createHttpClient(options: HttpClientOptions = {}): ClosableHttpClient {
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const defaultMaxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs ?? 5_000 },
    headersTimeout: options.headersTimeoutMs ?? 15_000,
    bodyTimeout: options.bodyTimeoutMs ?? 15_000,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connections: 16,
  });

  async function request(input: HttpRequest): Promise<HttpResult> {
    try {
      return { kind: 'response', response: await fetchFollowingSameHostRedirects(input) };
    } catch (error) {
      const reason = classifyError(error, input.signal);
      if (reason !== 'connection') return { kind: 'failure', reason };
      return { kind: 'failure', reason, cause: transportCause(errorCode(error)) };
    }
  }

  async function fetchFollowingSameHostRedirects(input: HttpRequest) {
    const headers = buildHeaders(input.headers, userAgent);
    const maxBodyBytes = input.maxBodyBytes ?? defaultMaxBodyBytes;
    const firstUrl = parseUrl(input.url);
    let url = firstUrl;
    let method: 'GET' | 'POST' = input.method ?? 'GET';
    let body = input.body;
    for (let redirects = 0; ; redirects += 1) {
      input.signal.throwIfAborted();
      const response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        body,
        signal: input.signal,
      });
      const location = headerValue(response.headers, 'location');
      if (REDIRECT_STATUSES.has(response.statusCode) && location !== undefined) {
        await response.body.dump().catch(() => undefined);
        const next = parseUrl(location, url);
        if (redirects >= maxRedirects || !isSameOrigin(firstUrl, next)) throw new HttpFailure('redirect');
        // Each request sent is charged to the upstream's budget: the fetcher may say no.
        if (input.beforeRedirect !== undefined && !(await input.beforeRedirect())) throw new HttpFailure('redirect');
        // Browsers turn a redirected POST into a GET except for 307/308.
        if (
          response.statusCode === 303 ||
          ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        url = next;
        continue;
      }
      const flatHeaders = flattenHeaders(response.headers);
      const bytes = await readDecodedBody(response, flatHeaders['content-encoding'], maxBodyBytes, input.signal);
      const text = decodeText(bytes, flatHeaders['content-type']);
      return { status: response.statusCode, headers: flatHeaders, body: text, url: url.toString() };
    }
  }

  return {
    request,
    close: async () => {
      await agent.close();
    },
  };
}

function parseUrl(value: string, base?: URL): URL {
  try {
    const url = new URL(value, base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpFailure('redirect');
    return url;
  } catch (error) {
    if (error instanceof HttpFailure) throw error;
    // A URL we cannot parse: the adapter built it from config, so it only happens with a
    // bad Location header; either way no request can be made.
    throw new HttpFailure(base === undefined ? 'connection' : 'redirect');
  }
}

/**
 * Same origin: scheme, host name and port (default ports made explicit by URL). An http → https
 * "upgrade" is refused too: it reaches another port and another server (443), which is not the
 * upstream that was configured.
 */
function isSameOrigin(first: URL, next: URL): boolean {
  return next.origin === first.origin;
}

function buildHeaders(callerHeaders: Record<string, string> | undefined, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {
    'user-agent': userAgent,
    accept: DEFAULT_ACCEPT,
    'accept-language': 'fr-FR,fr;q=0.9',
    'accept-encoding': 'gzip, deflate, br',
  };
  for (const [name, value] of Object.entries(callerHeaders ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** Drops a body we will not read; undici emits an abort error on destroy, which nobody needs. */
function discardBody(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function createDecoder(encoding: string): Transform {
  // Lenient flushing: many servers end a gzip stream without its final block flag.
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(flush);
    case 'deflate':
      // "deflate" is meant to be zlib-wrapped, but some servers send raw deflate: unzip sniffs.
      return zlib.createUnzip(flush);
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      throw new HttpFailure('decoding');
  }
}

async function readDecodedBody(
  response: Dispatcher.ResponseData,
  contentEncoding: string | undefined,
  maxBodyBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const encodings = (contentEncoding ?? '')
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '' && part !== 'identity');
  if (encodings.length > MAX_CONTENT_ENCODING_LAYERS) {
    discardBody(response.body);
    throw new HttpFailure('decoding');
  }
  const declaredLength = Number(headerValue(response.headers, 'content-length'));
  if (encodings.length === 0 && Number.isFinite(declaredLength) && declaredLength > maxBodyBytes) {
    discardBody(response.body);
    throw new HttpFailure('too_large');
  }
  let decoders: Transform[];
  try {
    // Encodings are listed in the order they were applied: undo them from the last.
    decoders = encodings.reverse().map(createDecoder);
  } catch (error) {
    discardBody(response.body);
    throw error;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let overCap = false;
  // The sink counts decoded bytes and throws past the cap; pipeline then destroys the socket
  // body and every zlib stream, so an inflating bomb stops after at most one more chunk.
  const sink = async (source: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of source) {
      total += chunk.length;
      if (total > maxBodyBytes) {
        overCap = true;
        throw new HttpFailure('too_large');
      }
      chunks.push(chunk);
    }
  };
  const body = response.body as Readable;
  try {
    if (decoders.length === 0) await pipeline(body, sink, { signal });
    else if (decoders.length === 1 && decoders[0]) await pipeline(body, decoders[0], sink, { signal });
    else if (decoders[0] && decoders[1]) await pipeline(body, decoders[0], decoders[1], sink, { signal });
  } catch (error) {
    // Node 20's pipeline may surface the teardown (an AbortError) instead of the sink's own error.
    if (overCap) throw new HttpFailure('too_large');
    throw error;
  }
  return Buffer.concat(chunks, total);
}

const WINDOWS_1252_LABELS = new Set([
  'latin1',
  'iso-8859-1',
  'iso8859-1',
  'iso_8859-1',
  'l1',
  'windows-1252',
  'cp1252',
  'us-ascii',
  'ascii',
]);

function charsetFromContentType(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1]?.toLowerCase();
}

function charsetFromMeta(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, META_CHARSET_WINDOW_BYTES).toString('latin1');
  const match = /<meta\s[^>]*charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)/i.exec(head);
  return match?.[1]?.toLowerCase();
}

/** Declared charset (header, else an HTML `<meta>` in the first KiB), UTF-8 by default. */
function decodeText(bytes: Buffer, contentType: string | undefined): string {
  let charset = charsetFromContentType(contentType);
  const isHtmlOrUntyped = contentType === undefined || /html/i.test(contentType);
  if (charset === undefined && isHtmlOrUntyped) charset = charsetFromMeta(bytes);
  // Latin-1 declared by a server almost always means windows-1252 (as in browsers).
  const label =
    charset === undefined || charset === 'utf8' ? 'utf-8' : WINDOWS_1252_LABELS.has(charset) ? 'windows-1252' : charset;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    throw new HttpFailure('decoding');
  }
  return decoder.decode(bytes);
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (error as { cause?: unknown }).cause;
  return cause === error ? undefined : errorCode(cause);
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
/** OpenSSL's certificate verdicts (Node gives them as the code of a TLS socket's error). */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
]);

/**
 * The one place a transport failure is told apart, from the code of Node's or undici's error
 * (the error's own, else its cause's): the name did not resolve, the port refused, the
 * connection was closed under us, the TLS handshake or the certificate failed. Any other code
 * stays `connection` (an unreachable network, a URL that cannot be asked).
 */
export function transportCause(code: string | undefined): TransportCause {
  if (code === undefined) return 'connection';
  if (DNS_CODES.has(code)) return 'dns';
  if (code === 'ECONNREFUSED') return 'refused';
  if (RESET_CODES.has(code)) return 'reset';
  if (CERTIFICATE_CODES.has(code) || code === 'EPROTO') return 'tls';
  if (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('CERT_')) return 'tls';
  return 'connection';
}

function classifyError(error: unknown, signal: AbortSignal): HttpFailureReason {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof Error && reason.name === 'TimeoutError' ? 'timeout' : 'aborted';
  }
  if (error instanceof HttpFailure) return error.reason;
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return 'timeout';
  // zlib reports Z_* codes, brotli ERR__ERROR_FORMAT_* ones; both carry a numeric errno.
  if (
    code !== undefined &&
    (code.startsWith('Z_') || code.startsWith('ERR__') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR_ZLIB'))
  ) {
    return 'decoding';
  }
  return 'connection';
}
