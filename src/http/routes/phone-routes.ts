// The phone endpoints: spec part 4's full report and one-call score, and the number's facts
// alone (`/info`), which needs no upstream.
//
// Answers are serialised here (by the route's own response serializer) so they can be kept as
// bytes: a number whose three slots are fresh hits is answered from the front cache
// (front-cache.ts) with its precompressed forms, `Cache-Control: public, max-age` until the
// first slot stops being fresh, and an ETag that `If-None-Match` turns into a 304. Every API
// answer carries `Vary: Accept-Encoding`; bodies of COMPRESSION_THRESHOLD_BYTES or more are
// compressed when the client accepts br or gzip. Rules: docs/hot-path.md.
import { promisify } from 'node:util';
import { brotliCompress, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PhoneNumberParser } from '../../domain/phone-number.js';
import type { LookupResult, LookupService } from '../../domain/lookup/types.js';
import { buildReport, buildScoreResult, failureReasons, isAllSourcesFailed } from '../../domain/report-builder.js';
import type { KeyedHasher } from '../../infra/hash.js';
import { negotiateEncoding, type ContentCoding } from '../encoding.js';
import { ApiError, invalidNumberError } from '../errors.js';
import { bodyFor, brotliOptions, COMPRESSION_THRESHOLD_BYTES, encodeBody, type EncodedBody, type FrontCache, type FrontRoute, type NumberMemo } from '../front-cache.js';
import { routeSchemas } from '../schemas.js';

export interface PhoneRoutesOptions {
  parsePhoneNumber: PhoneNumberParser;
  lookupService: LookupService;
  hashKey: KeyedHasher;
  /** Absent: every answer is built from the engine (still compressed and with its headers). */
  frontCache?: FrontCache;
  /** The engine's clock (epoch ms): front entries expire on the same clock the slots do. */
  now?: () => number;
}

/** `/info` depends on the numbering data only, which changes with a release or a data update. */
export const INFO_MAX_AGE_SECONDS = 86_400;
const JSON_TYPE = 'application/json; charset=utf-8';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

// Public API routes: counted by the rate limit, shed under overload, callable from any page.
const API_ROUTE = { rateLimit: true, shed: true, cors: true, paramsError: 'invalid_number' } as const;

/** The body Fastify would send for this payload: the route's own compiled 200 application/json serializer. */
function serialized(reply: FastifyReply, payload: { [key: string]: unknown }): string {
  const text: unknown = reply.serializeInput(payload, '200', 'application/json');
  if (typeof text !== 'string') throw new TypeError('the route has no JSON serializer for 200');
  return text;
}

/** Whether an If-None-Match header names this (weak) ETag; `*` names any. */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim();
    if (tag === '*' || tag === opaque || tag === etag || (tag.startsWith('W/') && tag.slice(2) === opaque)) return true;
  }
  return false;
}

/** Sends a body held as bytes: 304 when the client has it, else the negotiated form. */
function sendEncoded(request: FastifyRequest, reply: FastifyReply, body: EncodedBody, cacheControl: string): FastifyReply {
  reply.header('vary', 'Accept-Encoding').header('cache-control', cacheControl).header('etag', body.etag);
  if (matchesEtag(request.headers['if-none-match'], body.etag)) return reply.code(304).send();
  const chosen = bodyFor(body, negotiateEncoding(request.headers['accept-encoding']));
  if (chosen.coding !== undefined) reply.header('content-encoding', chosen.coding);
  return reply.header('content-type', JSON_TYPE).send(chosen.bytes);
}

/** Sends an answer built for this request alone, compressed on the fly when large enough. */
async function sendBuilt(request: FastifyRequest, reply: FastifyReply, text: string, cacheControl: string): Promise<FastifyReply> {
  reply.header('vary', 'Accept-Encoding').header('cache-control', cacheControl).header('content-type', JSON_TYPE);
  const coding: ContentCoding | undefined = text.length >= COMPRESSION_THRESHOLD_BYTES ? negotiateEncoding(request.headers['accept-encoding']) : undefined;
  if (coding === undefined) return reply.send(text);
  const identity = Buffer.from(text, 'utf8');
  const compressed = coding === 'br' ? await brotliAsync(identity, brotliOptions(identity.length)) : await gzipAsync(identity);
  return reply.header('content-encoding', coding).send(compressed);
}

function maxAgeOf(freshUntilMs: number, nowMs: number): string {
  return `public, max-age=${Math.max(0, Math.floor((freshUntilMs - nowMs) / 1000))}`;
}

/** The phone route group, an encapsulated plugin. */
export async function phoneRoutes(app: FastifyInstance, options: PhoneRoutesOptions): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const { parsePhoneNumber, lookupService, hashKey, frontCache } = options;
  const now = options.now ?? Date.now;

  // The params schema's pattern publishes the accepted spellings; the routes attach its
  // verdict instead of failing on it, because the parser says *why* a spelling is refused.
  // A spelling accepted once is remembered with its parse and hash (front cache).
  function numberOf(request: FastifyRequest & { params: { number: string } }): NumberMemo {
    const raw = request.params.number;
    const known = frontCache?.numberOf(raw);
    if (known !== undefined) return known;
    const parsed = parsePhoneNumber(raw);
    if (!parsed.ok) throw invalidNumberError(parsed.reason);
    // The pattern and the parser are held to the same answers by a test; if they ever part,
    // the stricter one wins.
    if (request.validationError) throw invalidNumberError('invalid_number');
    const numberHash = hashKey(parsed.value.e164);
    return frontCache ? frontCache.remember(raw, parsed.value, numberHash) : { parsed: parsed.value, numberHash, info: undefined };
  }

  // A client that disconnects does not cancel the lookup: its fetches are shared with other
  // callers and their results are cached, so finishing them is never wasted.
  async function lookupOrThrow(memo: NumberMemo): Promise<LookupResult> {
    const result = await lookupService.lookup(memo.parsed, undefined, memo.numberHash);
    if (isAllSourcesFailed(result)) {
      // The number's own facts need no upstream: they still answer part of the question.
      throw new ApiError('all_sources_failed', 'No upstream data source could be read; see `sources` for each outcome.', {
        number: memo.parsed.number,
        phoneInfo: memo.parsed.phoneInfo,
        sources: failureReasons(result),
      });
    }
    return result;
  }

  function payloadOf(route: FrontRoute, memo: NumberMemo, result: LookupResult): { [key: string]: unknown } {
    if (route === 'report') {
      const built = buildReport(memo.parsed, result);
      return { success: true as const, data: built.report, meta: built.meta };
    }
    const built = buildScoreResult(memo.parsed, result);
    return { success: true as const, data: built.score, meta: built.meta };
  }

  async function answer(route: FrontRoute, request: FastifyRequest & { params: { number: string } }, reply: FastifyReply): Promise<FastifyReply> {
    const memo = numberOf(request);
    if (frontCache !== undefined) {
      const nowMs = now();
      let entry = frontCache.entry(memo.numberHash, nowMs);
      if (entry === undefined) {
        const fresh = lookupService.peekFresh?.(memo.parsed, memo.numberHash);
        if (fresh !== undefined) entry = frontCache.store(memo.numberHash, fresh.result, fresh.freshUntilMs);
      }
      if (entry !== undefined) {
        let body = entry[route];
        if (body === undefined) {
          body = encodeBody(serialized(reply, payloadOf(route, memo, entry.result)));
          frontCache.fill(memo.numberHash, entry, route, body);
        }
        return sendEncoded(request, reply, body, maxAgeOf(entry.freshUntilMs, nowMs));
      }
    }
    const result = await lookupOrThrow(memo);
    const freshUntilMs = lookupService.freshUntilOf?.(result);
    const cacheControl = freshUntilMs === undefined ? 'no-store' : maxAgeOf(freshUntilMs, now());
    return sendBuilt(request, reply, serialized(reply, payloadOf(route, memo, result)), cacheControl);
  }

  typed.get('/api/phone/:number', { config: API_ROUTE, attachValidation: true, schema: routeSchemas.fullReport }, (request, reply) =>
    answer('report', request, reply),
  );

  typed.get('/api/phone/:number/score', { config: API_ROUTE, attachValidation: true, schema: routeSchemas.score }, (request, reply) =>
    answer('score', request, reply),
  );

  typed.get('/api/phone/:number/info', { config: API_ROUTE, attachValidation: true, schema: routeSchemas.numberInfo }, async (request, reply) => {
    const memo = numberOf(request);
    let body = memo.info;
    if (body === undefined) {
      body = encodeBody(serialized(reply, { success: true as const, data: { number: memo.parsed.number, phoneInfo: memo.parsed.phoneInfo } }));
      if (frontCache === undefined) memo.info = body;
      else frontCache.rememberInfo(request.params.number, memo, body);
    }
    return sendEncoded(request, reply, body, `public, max-age=${INFO_MAX_AGE_SECONDS}`);
  });
}
