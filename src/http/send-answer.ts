// How the phone API sends an answer's bytes (rules: docs/hot-path.md): every answer carries
// `Vary: Accept-Encoding, Origin` and its Cache-Control; a body held as bytes (front-cache.ts)
// goes with its ETag, as a 304 when the client has it (conditional-requests.ts), else in the
// coding the client accepts; a body built for one request is compressed on the fly when it is
// COMPRESSION_THRESHOLD_BYTES or more.
import { promisify } from 'node:util';
import { brotliCompress, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { matchesEtag } from './conditional-requests.js';
import { COMPRESSION_THRESHOLD_BYTES, negotiateEncoding, type ContentCoding } from './encoding.js';
import { bodyFor, brotliOptions, type EncodedBody } from './front-cache.js';
import { VARY_ON_CODING_AND_ORIGIN } from './route-config.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Sends a body held as bytes: 304 when the client has it, else the negotiated form. */
export function sendEncoded(
  request: FastifyRequest,
  reply: FastifyReply,
  body: EncodedBody,
  cacheControl: string,
  contentType: string = JSON_TYPE,
): FastifyReply {
  reply.header('vary', VARY_ON_CODING_AND_ORIGIN).header('cache-control', cacheControl).header('etag', body.etag);
  if (matchesEtag(request.headers['if-none-match'], body.etag)) return reply.code(304).send();
  const chosen = bodyFor(body, negotiateEncoding(request.headers['accept-encoding']));
  if (chosen.coding !== undefined) reply.header('content-encoding', chosen.coding);
  return reply.header('content-type', contentType).send(chosen.bytes);
}

/** Sends an answer built for this request alone, compressed on the fly when large enough. */
export async function sendBuilt(
  request: FastifyRequest,
  reply: FastifyReply,
  text: string,
  cacheControl: string,
  contentType: string = JSON_TYPE,
): Promise<FastifyReply> {
  reply
    .header('vary', VARY_ON_CODING_AND_ORIGIN)
    .header('cache-control', cacheControl)
    .header('content-type', contentType);
  const coding: ContentCoding | undefined =
    text.length >= COMPRESSION_THRESHOLD_BYTES ? negotiateEncoding(request.headers['accept-encoding']) : undefined;
  if (coding === undefined) return reply.send(text);
  const identity = Buffer.from(text, 'utf8');
  const compressed =
    coding === 'br' ? await brotliAsync(identity, brotliOptions(identity.length)) : await gzipAsync(identity);
  return reply.header('content-encoding', coding).send(compressed);
}

// The last Cache-Control value made, kept: answers in the same second for the same freshness
// send the same string. Node checks every header value with a regular expression, which V8 runs
// on a fresh concatenation only after flattening it through its runtime (about twice the cost
// of the check on a string already flat, measured).
let lastMaxAgeSeconds = -1;
let lastMaxAge = '';

/** `public, max-age=<seconds>` until `freshUntilMs` (0 once past it). */
export function maxAgeOf(freshUntilMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((freshUntilMs - nowMs) / 1000));
  if (seconds !== lastMaxAgeSeconds) {
    lastMaxAgeSeconds = seconds;
    lastMaxAge = `public, max-age=${seconds}`;
  }
  return lastMaxAge;
}
