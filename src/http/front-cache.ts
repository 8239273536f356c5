// The front cache of finished answers: for a number whose three slots are fresh hits, the
// serialised bodies of its representations (full report, score, verdict, caller-ID line; with
// their gzip and brotli forms and an ETag), sent as bytes until the first slot stops being fresh. It holds nothing the per-slot
// cache does not say: an entry is built only from an all-fresh lookup (the engine's
// `peekFresh`), it carries that lookup's own freshness bound, and any write of one of the
// number's slots drops it (`invalidate`). Stale, partial or failed answers never enter.
//
// It also remembers, per raw `:number` spelling, the parsed number and its keyed hash (and the
// `/info` body, which depends on the numbering data only), so a cached request neither parses
// nor hashes again.
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { ParsedPhoneNumber } from '../domain/phone-number.js';
import type { LookupResult } from '../domain/lookup/types.js';
import type { ContentCoding } from './encoding.js';

/** Bodies shorter than this are sent uncompressed: below about a packet, compression saves nothing worth its CPU. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;
/** Brotli quality for answers: 5 compresses JSON nearly as well as 11 at a small fraction of the CPU. */
export const BROTLI_QUALITY = 5;
/** The front cache's share of CACHE_MAX_MB (the per-slot cache keeps the rest). */
export const FRONT_CACHE_SHARE = 1 / 8;
/** Raw spellings remembered with their parse and hash. */
export const DEFAULT_MAX_SPELLINGS = 10_000;
/** Charged per entry on top of its bodies: the entry and LRU bookkeeping, the lookup result's object references. */
const ENTRY_OVERHEAD_BYTES = 512;

/** One serialised answer with its compressed forms (when large enough) and its ETag. */
export interface EncodedBody {
  /** The body as text: sent as a string, Node writes it with the headers in one write. */
  readonly text: string;
  readonly gzip: Buffer | undefined;
  readonly br: Buffer | undefined;
  /** Weak: the same representation whatever its content coding. */
  readonly etag: string;
  readonly bytes: number;
}

export function encodeBody(text: string): EncodedBody {
  const identity = Buffer.from(text, 'utf8');
  const compress = identity.length >= COMPRESSION_THRESHOLD_BYTES;
  const gzip = compress ? gzipSync(identity) : undefined;
  const br = compress ? brotliCompressSync(identity, brotliOptions(identity.length)) : undefined;
  const etag = `W/"${createHash('sha1').update(identity).digest('base64url').slice(0, 22)}"`;
  return { text, gzip, br, etag, bytes: identity.length + (gzip?.length ?? 0) + (br?.length ?? 0) + etag.length };
}

export function brotliOptions(sizeHint: number): { params: Record<number, number> } {
  return { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: sizeHint, [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT } };
}

/** The bytes to send for a negotiated coding: the compressed form when there is one. */
export function bodyFor(body: EncodedBody, coding: ContentCoding | undefined): { bytes: Buffer | string; coding: ContentCoding | undefined } {
  if (coding === 'br' && body.br !== undefined) return { bytes: body.br, coding };
  if (coding === 'gzip' && body.gzip !== undefined) return { bytes: body.gzip, coding };
  return { bytes: body.text, coding: undefined };
}

/** What depends on the spelling alone. */
export interface NumberMemo {
  readonly parsed: ParsedPhoneNumber;
  readonly numberHash: string;
  /** The `/info` body, built on the first `/info` request. */
  info: EncodedBody | undefined;
}

/** Every representation the front cache holds a body of: the JSON answers and the text ones (`/cid` per language). */
export const FRONT_ROUTES = ['report', 'score', 'verdict', 'cid:fr', 'cid:en'] as const;
export type FrontRoute = (typeof FRONT_ROUTES)[number];

/** A number's finished answers while its three slots are fresh hits. */
export interface FrontEntry {
  /** Epoch ms (the engine's clock) at which the first slot turns stale. */
  readonly freshUntilMs: number;
  /** The all-fresh lookup the bodies are built from; shared with the slot cache, never mutated. */
  readonly result: LookupResult;
  report: EncodedBody | undefined;
  score: EncodedBody | undefined;
  verdict: EncodedBody | undefined;
  'cid:fr': EncodedBody | undefined;
  'cid:en': EncodedBody | undefined;
}

export interface FrontCacheOptions {
  maxBytes: number;
  maxSpellings?: number;
}

export interface FrontCache {
  /** The memo of a spelling seen before and accepted; undefined otherwise. */
  numberOf(raw: string): NumberMemo | undefined;
  /** Remembers an accepted spelling with its parse and keyed hash. */
  remember(raw: string, parsed: ParsedPhoneNumber, numberHash: string): NumberMemo;
  /** The entry while it is fresh at `nowMs`; an entry past its bound is dropped. */
  entry(numberHash: string, nowMs: number): FrontEntry | undefined;
  /** Stores the entry of an all-fresh lookup (bodies are added by the routes as they are asked for). */
  store(numberHash: string, result: LookupResult, freshUntilMs: number): FrontEntry;
  /** Adds a route's body to an entry and recharges its size. */
  fill(numberHash: string, entry: FrontEntry, route: FrontRoute, body: EncodedBody): void;
  /** A slot of the number was written: its entry no longer says what the slots say. */
  invalidate(numberHash: string): void;
  size(): number;
  chargedBytes(): number;
}

function entryCost(entry: FrontEntry): number {
  return FRONT_ROUTES.reduce((total, route) => total + (entry[route]?.bytes ?? 0), ENTRY_OVERHEAD_BYTES);
}

export function createFrontCache(options: FrontCacheOptions): FrontCache {
  const entries = new LRUCache<string, FrontEntry>({ maxSize: Math.max(1, Math.floor(options.maxBytes)), sizeCalculation: entryCost });
  const spellings = new LRUCache<string, NumberMemo>({ max: options.maxSpellings ?? DEFAULT_MAX_SPELLINGS });
  return {
    numberOf: (raw) => spellings.get(raw),
    remember(raw, parsed, numberHash) {
      const memo: NumberMemo = { parsed, numberHash, info: undefined };
      // Hostile long spellings are not remembered, so they cannot crowd out real ones.
      if (raw.length <= 32) spellings.set(raw, memo);
      return memo;
    },
    entry(numberHash, nowMs) {
      const entry = entries.get(numberHash);
      if (entry === undefined) return undefined;
      if (entry.freshUntilMs > nowMs) return entry;
      entries.delete(numberHash);
      return undefined;
    },
    store(numberHash, result, freshUntilMs) {
      const entry: FrontEntry = { freshUntilMs, result, report: undefined, score: undefined, verdict: undefined, 'cid:fr': undefined, 'cid:en': undefined };
      entries.set(numberHash, entry);
      return entry;
    },
    fill(numberHash, entry, route, body) {
      entry[route] = body;
      // Re-set only if it is still the entry held: an invalidation in between wins.
      if (entries.peek(numberHash) === entry) entries.set(numberHash, entry);
    },
    invalidate(numberHash) {
      entries.delete(numberHash);
    },
    size: () => entries.size,
    chargedBytes: () => entries.calculatedSize,
  };
}
