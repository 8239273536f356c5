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
//
// Both are bounded in bytes and charged everything they hold (docs/cache.md): an entry its
// bodies with their compressed forms and ETag, the lookup result it was built from, its key
// and bookkeeping; a spelling its text, its parse, its hash and its `/info` body.
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { ParsedPhoneNumber } from '../domain/phone-number.js';
import type { LookupResult } from '../domain/lookup/types.js';
import { COMPRESSION_THRESHOLD_BYTES, type ContentCoding } from './encoding.js';

// The one threshold below which no answer is compressed (encoding.ts), re-exported for the front cache's users.
export { COMPRESSION_THRESHOLD_BYTES };
/** Brotli quality for answers: 5 compresses JSON nearly as well as 11 at a small fraction of the CPU. */
export const BROTLI_QUALITY = 5;
/** Raw spellings remembered with their parse and hash, at most (the byte cap usually binds first). */
export const DEFAULT_MAX_SPELLINGS = 10_000;
/** The spellings' share of the front cache's bytes when `spellingsMaxBytes` is not given. */
export const SPELLINGS_SHARE = 1 / 8;
/** Charged per entry on top of its bodies and result: the entry object, its key and the LRU's bookkeeping. */
export const FRONT_ENTRY_OVERHEAD_BYTES = 256;
/**
 * Charged per encoded body on top of its bytes: the body object, its block of memory with its
 * native bookkeeping and a view per form (measured: docs/cache.md).
 */
export const BODY_OVERHEAD_BYTES = 1200;
/** Charged per spelling on top of its text, parse and hash: the memo object, the key and the LRU's bookkeeping. */
export const SPELLING_OVERHEAD_BYTES = 192;

/** One serialised answer with its compressed forms (when large enough) and its ETag. */
export interface EncodedBody {
  /**
   * The body as UTF-8 bytes, in memory of its own: sent as they are (a string would be encoded
   * again on every request), outside the JS heap (so cache churn does not fragment it), and not
   * a slice of Node's shared 8 KiB pool (a held slice would keep the whole slab).
   */
  readonly identity: Buffer;
  readonly gzip: Buffer | undefined;
  readonly br: Buffer | undefined;
  /** Weak: the same representation whatever its content coding. */
  readonly etag: string;
  readonly bytes: number;
}

export function encodeBody(text: string): EncodedBody {
  const utf8 = Buffer.from(text, 'utf8');
  const compress = utf8.length >= COMPRESSION_THRESHOLD_BYTES;
  const etag = `W/"${createHash('sha1').update(utf8).digest('base64url').slice(0, 22)}"`;
  const forms = compress ? [utf8, gzipSync(utf8), brotliCompressSync(utf8, brotliOptions(utf8.length))] : [utf8];
  const [identity = utf8, gzip, br] = packed(forms);
  return {
    identity,
    gzip,
    br,
    etag,
    bytes: identity.length + (gzip?.length ?? 0) + (br?.length ?? 0) + etag.length + BODY_OVERHEAD_BYTES,
  };
}

/**
 * The forms of one body copied into one block of memory of exactly their total size, each a view
 * of its part. As they come, they are slices of larger buffers (zlib's output of its 16 KiB
 * output buffer, Buffer.from's of Node's 8 KiB pool): held like that, a 1 KiB compressed body
 * kept 16 KiB, uncharged. One block instead of one per form also pays the native bookkeeping of
 * a buffer (about 770 bytes measured) once per body.
 */
export function packed(forms: readonly Buffer[]): Buffer[] {
  const block = Buffer.allocUnsafeSlow(forms.reduce((total, form) => total + form.length, 0));
  let offset = 0;
  return forms.map((form) => {
    form.copy(block, offset);
    const view = block.subarray(offset, offset + form.length);
    offset += form.length;
    return view;
  });
}

/**
 * What an object graph built from JSON costs on the heap, charged from its JSON length: measured
 * at 1.23× for a lookup result and 1.28× for a parsed number (docs/cache.md); twice covers text
 * held as two bytes per character.
 */
export function objectCost(value: unknown): number {
  return 2 * (JSON.stringify(value)?.length ?? 0);
}

export function brotliOptions(sizeHint: number): { params: Record<number, number> } {
  return {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: sizeHint,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
    },
  };
}

/** The bytes to send for a negotiated coding: the compressed form when there is one. */
export function bodyFor(
  body: EncodedBody,
  coding: ContentCoding | undefined,
): { bytes: Buffer; coding: ContentCoding | undefined } {
  if (coding === 'br' && body.br !== undefined) return { bytes: body.br, coding };
  if (coding === 'gzip' && body.gzip !== undefined) return { bytes: body.gzip, coding };
  return { bytes: body.identity, coding: undefined };
}

/** What depends on the spelling alone. */
export interface NumberMemo {
  readonly parsed: ParsedPhoneNumber;
  readonly numberHash: string;
  /** The `/info` body, built on the first `/info` request. */
  info: EncodedBody | undefined;
}

/** Every representation the front cache holds a body of: the JSON answers and the text ones (`/cid` per language). */
export const FRONT_ROUTES = [
  'report',
  'score',
  'verdict',
  'cid:fr',
  'cid:en',
  'verdict+cid:fr',
  'verdict+cid:en',
] as const;
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
  /** `/verdict?cid=` (the verdict and the `/cid` line). */
  'verdict+cid:fr': EncodedBody | undefined;
  'verdict+cid:en': EncodedBody | undefined;
}

export interface FrontCacheOptions {
  /** Bytes for everything held: the entries and the spellings together. */
  maxBytes: number;
  /** Count cap of the spellings (default DEFAULT_MAX_SPELLINGS). */
  maxSpellings?: number;
  /** The spellings' part of maxBytes (default SPELLINGS_SHARE of it). */
  spellingsMaxBytes?: number;
}

/** What the front cache is charged, by kind. */
export interface FrontCacheCharges {
  entries: number;
  spellings: number;
}

export interface FrontCache {
  /** The memo of a spelling seen before and accepted; undefined otherwise. */
  numberOf(raw: string): NumberMemo | undefined;
  /** Remembers an accepted spelling with its parse and keyed hash. */
  remember(raw: string, parsed: ParsedPhoneNumber, numberHash: string): NumberMemo;
  /** Keeps a spelling's `/info` body in its memo, and charges it. */
  rememberInfo(raw: string, memo: NumberMemo, body: EncodedBody): void;
  /** The entry while it is fresh at `nowMs`; an entry past its bound is dropped. */
  entry(numberHash: string, nowMs: number): FrontEntry | undefined;
  /** Stores the entry of an all-fresh lookup (bodies are added by the routes as they are asked for). */
  store(numberHash: string, result: LookupResult, freshUntilMs: number): FrontEntry;
  /** Adds a route's body to an entry and recharges its size. */
  fill(numberHash: string, entry: FrontEntry, route: FrontRoute, body: EncodedBody): void;
  /** A slot of the number was written: its entry no longer says what the slots say. */
  invalidate(numberHash: string): void;
  size(): number;
  /** Spellings remembered. */
  spellingCount(): number;
  /** Everything charged: entries and spellings. Never above maxBytes. */
  chargedBytes(): number;
  /** chargedBytes() by kind. */
  charges(): FrontCacheCharges;
}

/** The result an entry is built from, charged once when the entry is stored. */
const resultCosts = new WeakMap<FrontEntry, number>();

function entryCost(entry: FrontEntry, key: string): number {
  // Every body the entry holds: FRONT_ROUTES is the one list of the route kinds it files them under.
  const bodies = FRONT_ROUTES.reduce((total, route) => total + (entry[route]?.bytes ?? 0), 0);
  return FRONT_ENTRY_OVERHEAD_BYTES + key.length + (resultCosts.get(entry) ?? 0) + bodies;
}

function spellingCost(raw: string, memo: NumberMemo): number {
  return (
    SPELLING_OVERHEAD_BYTES + raw.length + memo.numberHash.length + objectCost(memo.parsed) + (memo.info?.bytes ?? 0)
  );
}

export function createFrontCache(options: FrontCacheOptions): FrontCache {
  const maxBytes = Math.max(2, Math.floor(options.maxBytes));
  const spellingsMaxBytes = Math.max(
    1,
    Math.min(maxBytes - 1, Math.floor(options.spellingsMaxBytes ?? maxBytes * SPELLINGS_SHARE)),
  );
  const entries = new LRUCache<string, FrontEntry>({
    maxSize: maxBytes - spellingsMaxBytes,
    sizeCalculation: entryCost,
  });
  const spellings = new LRUCache<string, NumberMemo>({
    max: options.maxSpellings ?? DEFAULT_MAX_SPELLINGS,
    maxSize: spellingsMaxBytes,
    sizeCalculation: (memo, raw) => spellingCost(raw, memo),
  });
  return {
    numberOf: (raw) => spellings.get(raw),
    remember(raw, parsed, numberHash) {
      const memo: NumberMemo = { parsed, numberHash, info: undefined };
      // Hostile long spellings are not remembered, so they cannot crowd out real ones.
      if (raw.length <= 32) spellings.set(raw, memo);
      return memo;
    },
    rememberInfo(raw, memo, body) {
      memo.info = body;
      // Recharged with its body, only if it is still the memo held.
      if (spellings.peek(raw) === memo) {
        spellings.delete(raw);
        spellings.set(raw, memo);
      }
    },
    entry(numberHash, nowMs) {
      const entry = entries.get(numberHash);
      if (entry === undefined) return undefined;
      if (entry.freshUntilMs > nowMs) return entry;
      entries.delete(numberHash);
      return undefined;
    },
    store(numberHash, result, freshUntilMs) {
      const entry: FrontEntry = {
        freshUntilMs,
        result,
        report: undefined,
        score: undefined,
        verdict: undefined,
        'cid:fr': undefined,
        'cid:en': undefined,
        'verdict+cid:fr': undefined,
        'verdict+cid:en': undefined,
      };
      resultCosts.set(entry, objectCost(result));
      entries.set(numberHash, entry);
      return entry;
    },
    fill(numberHash, entry, route, body) {
      entry[route] = body;
      // Re-set only if it is still the entry held: an invalidation in between wins. Deleted
      // first, because lru-cache keeps the former size when the same object is set again (so
      // bodies were never charged before).
      if (entries.peek(numberHash) === entry) {
        entries.delete(numberHash);
        entries.set(numberHash, entry);
      }
    },
    invalidate(numberHash) {
      entries.delete(numberHash);
    },
    size: () => entries.size,
    spellingCount: () => spellings.size,
    chargedBytes: () => entries.calculatedSize + spellings.calculatedSize,
    charges: () => ({ entries: entries.calculatedSize, spellings: spellings.calculatedSize }),
  };
}
