// Content coding of answers (RFC 9110 §8.4, §12.5.3): which coding a client accepts, the
// compressed variants of a body made once, and the sending of the variant a request asks for
// with `Content-Encoding`, `Vary: Accept-Encoding` and its own `Content-Length`. Node's zlib only:
// brotli and gzip are all browsers, curl and Prometheus ask for.
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { FastifyReply } from 'fastify';
import { parseQualityList } from './q-values.js';

export type ContentCoding = 'br' | 'gzip';

/**
 * Bodies smaller than this are sent as they are: below about a kilobyte the coding's own
 * overhead and the CPU cost outweigh the bytes saved (the answer fits a packet or two anyway).
 */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** Brotli's best quality: for bodies compressed once (build, start or first request) and sent many times. */
export const STATIC_BROTLI_QUALITY = 11;

const brotliCompressAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

// ---- Negotiation

interface Preferences {
  br: number;
  gzip: number;
  identity: number;
}

// Identity is acceptable unless the header excludes it, but when the header does not name it,
// any coding the client lists is preferred to it.
const IMPLICIT_IDENTITY = 0.0001;

function parseAcceptEncoding(header: string): Preferences {
  const explicit = new Map<string, number>();
  // An element with a malformed q is left out by the reader; the others still count.
  for (const { token, weight } of parseQualityList(header)) {
    // x-gzip is gzip's old alias (RFC 9110 §8.4.1.3). The first mention of a coding wins.
    const name = token === 'x-gzip' ? 'gzip' : token;
    if (!explicit.has(name)) explicit.set(name, weight);
  }
  const wildcard = explicit.get('*');
  return {
    br: explicit.get('br') ?? wildcard ?? 0,
    gzip: explicit.get('gzip') ?? wildcard ?? 0,
    identity: explicit.get('identity') ?? (wildcard === 0 ? 0 : IMPLICIT_IDENTITY),
  };
}

// Clients send few distinct Accept-Encoding values, so their parse is kept; a bounded map, and
// long values (no real browser sends one) are parsed each time rather than kept.
const MEMO_ENTRIES = 64;
const MEMO_MAX_HEADER_LENGTH = 200;
const memo = new Map<string, Preferences>();

function preferencesOf(header: string): Preferences {
  const known = memo.get(header);
  if (known !== undefined) return known;
  const preferences = parseAcceptEncoding(header);
  if (header.length <= MEMO_MAX_HEADER_LENGTH) {
    if (memo.size >= MEMO_ENTRIES) {
      const oldest = memo.keys().next();
      if (oldest.done !== true) memo.delete(oldest.value);
    }
    memo.set(header, preferences);
  }
  return preferences;
}

/**
 * The coding to send for an `Accept-Encoding` header among `available`, or undefined for the
 * identity: the acceptable coding (q > 0) of highest q, brotli first at equal q, unless the
 * client explicitly prefers identity. No header means identity. When every coding is refused,
 * identity included (`identity;q=0`), identity is still sent: RFC 9110 allows it, and an
 * unreadable 406 helps nobody.
 */
export function negotiateEncoding(
  acceptEncoding: string | undefined,
  available: readonly ContentCoding[] = ['br', 'gzip'],
): ContentCoding | undefined {
  if (acceptEncoding === undefined) return undefined;
  const preferences = preferencesOf(acceptEncoding);
  let best: ContentCoding | undefined;
  let bestWeight = 0;
  for (const coding of available) {
    const weight = preferences[coding];
    if (weight > bestWeight || (weight === bestWeight && weight > 0 && coding === 'br')) {
      best = coding;
      bestWeight = weight;
    }
  }
  if (best === undefined || preferences.identity > bestWeight) return undefined;
  return best;
}

// ---- Precompressed variants

/** A body and the compressed forms worth sending (none below the threshold or when no smaller). */
export interface EncodedVariants {
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

export function brotliOptions(quality: number, sizeHint: number) {
  return {
    params: { [zlibConstants.BROTLI_PARAM_QUALITY]: quality, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: sizeHint },
  };
}

/**
 * Brotli (quality 11 unless told) and gzip (level 9) of a body, in the thread pool so the event
 * loop keeps answering meanwhile. A compressed form no smaller than the body is dropped.
 */
export async function precompress(body: Buffer, options: { brotliQuality?: number } = {}): Promise<EncodedVariants> {
  if (body.length < COMPRESSION_THRESHOLD_BYTES) return { identity: body };
  const [br, gzipped] = await Promise.all([
    brotliCompressAsync(body, brotliOptions(options.brotliQuality ?? STATIC_BROTLI_QUALITY, body.length)),
    gzipAsync(body, { level: 9 }),
  ]);
  return {
    identity: body,
    ...(br.length < body.length ? { br } : {}),
    ...(gzipped.length < body.length ? { gzip: gzipped } : {}),
  };
}

/** The codings a set of variants can be sent in. */
export function codingsOf(variants: EncodedVariants): ContentCoding[] {
  const codings: ContentCoding[] = [];
  if (variants.br !== undefined) codings.push('br');
  if (variants.gzip !== undefined) codings.push('gzip');
  return codings;
}

/** Adds `Accept-Encoding` to the reply's `Vary`, keeping whatever else it already names. */
export function varyOnAcceptEncoding(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  const names = (Array.isArray(current) ? current.join(',') : typeof current === 'string' ? current : '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.some((name) => name === '*' || name.toLowerCase() === 'accept-encoding')) return;
  reply.header('Vary', [...names, 'Accept-Encoding'].join(', '));
}

/**
 * The variant of `variants` the request's `Accept-Encoding` asks for, with its headers set on
 * the reply (`Vary` always, since the route can compress; `Content-Encoding` and
 * `Content-Length` of the bytes chosen). Returns the bytes to send.
 */
export function chooseVariant(
  acceptEncoding: string | undefined,
  reply: FastifyReply,
  variants: EncodedVariants,
): Buffer {
  varyOnAcceptEncoding(reply);
  const coding = negotiateEncoding(acceptEncoding, codingsOf(variants));
  const body = coding === undefined ? variants.identity : (variants[coding] ?? variants.identity);
  if (coding !== undefined) reply.header('Content-Encoding', coding);
  reply.header('Content-Length', body.length);
  return body;
}

/**
 * For bodies made per request (the Prometheus text): gzip at zlib's default level when the client
 * accepts it and the body is over the threshold. Gzip alone: it is what scrapers ask for, and
 * brotli at a cheap quality gains little over it.
 */
export async function compressDynamic(
  acceptEncoding: string | undefined,
  body: Buffer,
): Promise<{ body: Buffer; coding?: ContentCoding }> {
  if (body.length < COMPRESSION_THRESHOLD_BYTES || negotiateEncoding(acceptEncoding, ['gzip']) !== 'gzip')
    return { body };
  return { body: await gzipAsync(body), coding: 'gzip' };
}
