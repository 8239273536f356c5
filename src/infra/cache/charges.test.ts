// Everything held per number is charged against CACHE_MAX_MB (issue 22): per-source results
// and their decoded objects, the front cache's bodies with their gzip and brotli forms and the
// result they are built from, remembered spellings with their parse, hash and `/info` body,
// and the parser's memo. Each kind is checked for what it is charged and for its bound.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeCachedResult } from './entry-codec.js';
import {
  createMemorySourceCache,
  decodedCost,
  DECODED_SHARE,
  DECODED_SLOT_BYTES,
  entryHeapCost,
} from './memory-cache.js';
import { createSlabStore } from './slab-store.js';
import { cacheBudgetOf, RUNTIME_HEADROOM_MIN_BYTES, RUNTIME_HEADROOM_SHARE, SOURCE_MIN_SHARE } from './cache-budget.js';
import {
  BODY_OVERHEAD_BYTES,
  COMPRESSION_THRESHOLD_BYTES,
  createFrontCache,
  encodeBody,
  FRONT_ENTRY_OVERHEAD_BYTES,
  objectCost,
  SPELLING_OVERHEAD_BYTES,
} from '../../http/front-cache.js';
import { memoCost, memoizeParser } from '../../domain/numbering/memoize-parser.js';
import type { CachedSourceResult } from '../../domain/ports/source-cache.js';
import type { LookupResult } from '../../domain/lookup/types.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';

const NOW = 1_800_000_000_000;
const ENTRY: CachedSourceResult = {
  status: 'ok',
  data: { score: 5, commentList: [{ text: 'Démarchage insistant, rappelle sans cesse' }] },
  fetchedAt: '2026-03-01T12:00:00.000Z',
  freshUntil: NOW + 60_000,
  staleUntil: NOW + 120_000,
};

function parsedNumber(digits: string): ParsedPhoneNumber {
  const e164 = `+33${digits.slice(1)}`;
  return {
    number: digits,
    e164,
    regionCode: 'FR',
    isFrenchPlan: true,
    frenchNationalDigits: digits,
    phoneInfo: {
      national: digits,
      e164,
      type: 'mobile',
      rangeLabel: 'Mobile',
      originalCarrier: 'Société française du radiotéléphone',
      region: 'France',
      isNPV: false,
    },
  };
}

const RESULT: LookupResult = {
  primary: {
    status: 'ok',
    fetchedAt: '2026-03-01T12:00:00.000Z',
    cache: 'hit',
    data: {
      score: 7,
      searches: 12,
      commentsCount: 1,
      commentList: [{ author: 'a', text: 'Appel insistant', date: '01/02/2026', callerType: 'Démarchage' }],
    },
  },
  community: { status: 'not_found', fetchedAt: '2026-03-01T12:00:00.000Z', cache: 'hit', data: null },
  signals: { status: 'not_found', fetchedAt: '2026-03-01T12:00:00.000Z', cache: 'hit', data: null },
};

/** A body over the compression threshold, so it has its gzip and brotli forms. */
function bigBody(seed: number): string {
  return JSON.stringify({
    success: true,
    seed,
    comments: Array.from({ length: 40 }, (_, i) => `Démarchage téléphonique insistant numéro ${seed}-${i}`),
  });
}

describe('per-source results', () => {
  it('charges each stored entry its slab, its key and overhead, and each decoded object kept', async () => {
    const maxBytes = 1024 * 1024;
    const cache = createMemorySourceCache({ maxBytes });
    await cache.set('v3:primary:k', ENTRY, 120);
    const stored = encodeCachedResult(ENTRY);
    const entry =
      createSlabStore(maxBytes - maxBytes * DECODED_SHARE).slabCostOf(stored.length) + entryHeapCost('v3:primary:k');
    expect(cache.charges()).toEqual({ entries: entry, decoded: 0 });
    await cache.get('v3:primary:k');
    // Read once, the entry is held by a slot that also keeps its decoded object.
    expect(cache.charges()).toEqual({ entries: entry + DECODED_SLOT_BYTES, decoded: decodedCost(stored.length) });
    expect(cache.chargedBytes()).toBe(entry + DECODED_SLOT_BYTES + decodedCost(stored.length));
  });

  it('keeps entries and decoded objects together under the cap whatever is written and read', async () => {
    const maxBytes = 64 * 1024;
    const cache = createMemorySourceCache({ maxBytes });
    for (let index = 0; index < 2000; index += 1) {
      await cache.set(`v3:primary:${index}`, ENTRY, 120);
      await cache.get(`v3:primary:${index}`);
      await cache.get(`v3:primary:${Math.floor(index / 2)}`);
      expect(cache.chargedBytes()).toBeLessThanOrEqual(maxBytes);
      expect(cache.charges().decoded).toBeLessThanOrEqual(maxBytes * DECODED_SHARE);
    }
    expect(cache.charges().decoded).toBeGreaterThan(0);
  });
});

describe('front cache', () => {
  it('charges a body its text, its gzip and brotli forms, its ETag and its objects', () => {
    const text = bigBody(1);
    const body = encodeBody(text);
    expect(body.gzip?.length).toBeGreaterThan(0);
    expect(body.br?.length).toBeGreaterThan(0);
    expect(body.bytes).toBe(
      Buffer.byteLength(text) +
        (body.gzip?.length ?? 0) +
        (body.br?.length ?? 0) +
        body.etag.length +
        BODY_OVERHEAD_BYTES,
    );
  });

  it('holds its forms in one block of memory of exactly their size, so what is charged is what is kept', () => {
    // zlib's output is a slice of a 16 KiB buffer and Buffer.from's a slice of an 8 KiB pool:
    // held as they came, a body of 1 KiB kept 16 KiB.
    for (const text of [bigBody(5), 'short body, under the compression threshold', 'accents: é’']) {
      const body = encodeBody(text);
      expect(body.identity.toString('utf8')).toBe(text);
      const forms = [body.identity, body.gzip, body.br].filter((form) => form !== undefined);
      expect(forms).toHaveLength(Buffer.byteLength(text) >= COMPRESSION_THRESHOLD_BYTES ? 3 : 1);
      expect(forms.every((form) => form.buffer === body.identity.buffer)).toBe(true);
      expect(body.identity.buffer.byteLength).toBe(forms.reduce((total, form) => total + form.length, 0));
    }
    const compressed = encodeBody(bigBody(6));
    expect(gunzipSync(compressed.gzip ?? Buffer.alloc(0)).toString('utf8')).toBe(bigBody(6));
    expect(brotliDecompressSync(compressed.br ?? Buffer.alloc(0)).toString('utf8')).toBe(bigBody(6));
  });

  it('charges an entry its key, the result it is built from and every body filled in', () => {
    const front = createFrontCache({ maxBytes: 1024 * 1024 });
    const entry = front.store('hash-1', RESULT, NOW + 60_000);
    expect(front.charges().entries).toBe(FRONT_ENTRY_OVERHEAD_BYTES + 'hash-1'.length + objectCost(RESULT));
    const report = encodeBody(bigBody(2));
    const score = encodeBody(bigBody(3));
    front.fill('hash-1', entry, 'report', report);
    front.fill('hash-1', entry, 'score', score);
    expect(front.charges().entries).toBe(
      FRONT_ENTRY_OVERHEAD_BYTES + 'hash-1'.length + objectCost(RESULT) + report.bytes + score.bytes,
    );
    front.invalidate('hash-1');
    expect(front.charges().entries).toBe(0);
  });

  it('charges a spelling its text, parse, hash and /info body', () => {
    const front = createFrontCache({ maxBytes: 1024 * 1024 });
    const parsed = parsedNumber('0612345678');
    const memo = front.remember('06 12 34 56 78', parsed, 'hash-abc');
    const base = SPELLING_OVERHEAD_BYTES + '06 12 34 56 78'.length + 'hash-abc'.length + objectCost(parsed);
    expect(front.charges().spellings).toBe(base);
    const info = encodeBody(bigBody(4));
    front.rememberInfo('06 12 34 56 78', memo, info);
    expect(memo.info).toBe(info);
    expect(front.charges().spellings).toBe(base + info.bytes);
    expect(front.chargedBytes()).toBe(front.charges().entries + front.charges().spellings);
  });

  it('never holds more than its bytes, entries and spellings together, under a flood of numbers and spellings', () => {
    const maxBytes = 96 * 1024;
    const front = createFrontCache({ maxBytes, spellingsMaxBytes: 16 * 1024 });
    for (let index = 0; index < 500; index += 1) {
      const digits = `06${String(index).padStart(8, '0')}`;
      const memo = front.remember(digits, parsedNumber(digits), `hash-${index}`);
      front.rememberInfo(digits, memo, encodeBody(bigBody(index)));
      const entry = front.store(`hash-${index}`, RESULT, NOW + 60_000);
      front.fill(`hash-${index}`, entry, 'report', encodeBody(bigBody(index + 1)));
      expect(front.chargedBytes()).toBeLessThanOrEqual(maxBytes);
      expect(front.charges().spellings).toBeLessThanOrEqual(16 * 1024);
    }
    expect(front.size()).toBeGreaterThan(0);
    expect(front.spellingCount()).toBeGreaterThan(0);
  });
});

describe('parser memo', () => {
  it('charges each spelling its text and result, and stays under its bytes', () => {
    const maxBytes = 8 * 1024;
    const memoized = memoizeParser((raw) => ({ ok: true, value: parsedNumber(raw) }), { maxBytes });
    const first = memoized('0612345678');
    expect(memoized.chargedBytes()).toBe(memoCost('0612345678', first));
    for (let index = 0; index < 200; index += 1) {
      memoized(`06${String(index).padStart(8, '0')}`);
      expect(memoized.chargedBytes()).toBeLessThanOrEqual(maxBytes);
    }
    expect(memoized.chargedBytes()).toBeGreaterThan(maxBytes / 2);
  });

  it('charges refused spellings too', () => {
    const memoized = memoizeParser(() => ({ ok: false, reason: 'invalid_number' }), { maxBytes: 4096 });
    memoized('abc');
    expect(memoized.chargedBytes()).toBe(memoCost('abc', { ok: false, reason: 'invalid_number' }));
  });
});

describe('cache budget', () => {
  it('splits a process share between the caches without passing it', () => {
    const budget = cacheBudgetOf(256, 1);
    expect(budget.processBytes).toBe(256 * 1024 * 1024);
    expect(budget.headroomBytes + budget.frontBytes + budget.parserMemoBytes + budget.sourceBytes).toBe(
      budget.processBytes,
    );
    expect(budget.headroomBytes).toBeGreaterThan(0);
    expect(budget.frontSpellingsBytes).toBeLessThan(budget.frontBytes);
  });

  it('gives each of n workers 1/n of the machine cap', () => {
    const one = cacheBudgetOf(64, 1);
    const each = cacheBudgetOf(64, 4);
    expect(each.processBytes * 4).toBeLessThanOrEqual(one.processBytes);
    expect(each.processBytes).toBe(16 * 1024 * 1024);
  });

  it('keeps a headroom floor at small shares, 3/16 at large ones', () => {
    const MIB = 1024 * 1024;
    // At 32 MiB, 3/16 would be 6 MiB: the floor gives way only where the per-source results would keep less than 1/4.
    const small = cacheBudgetOf(32, 1);
    expect(small.headroomBytes).toBeGreaterThan(32 * MIB * RUNTIME_HEADROOM_SHARE);
    expect(small.sourceBytes).toBe(Math.ceil(32 * MIB * SOURCE_MIN_SHARE));
    expect(small.headroomBytes + small.frontBytes + small.parserMemoBytes + small.sourceBytes).toBe(32 * MIB);
    // At 64 MiB the floor holds whole.
    expect(cacheBudgetOf(64, 1).headroomBytes).toBe(RUNTIME_HEADROOM_MIN_BYTES);
    // From about 107 MiB, 3/16 is more than the floor.
    expect(cacheBudgetOf(256, 1).headroomBytes).toBe(256 * MIB * RUNTIME_HEADROOM_SHARE);
    // The same share of the machine's cap per worker gets the same split as one process.
    expect(cacheBudgetOf(64, 2)).toEqual(cacheBudgetOf(32, 1));
  });

  it('splits every share whole, with at least 3/16 of headroom and a quarter for the per-source results', () => {
    for (let cacheMaxMb = 1; cacheMaxMb <= 1024; cacheMaxMb += 1) {
      const budget = cacheBudgetOf(cacheMaxMb, 1);
      expect(budget.headroomBytes + budget.frontBytes + budget.parserMemoBytes + budget.sourceBytes).toBe(
        budget.processBytes,
      );
      expect(budget.headroomBytes).toBeGreaterThanOrEqual(Math.floor(budget.processBytes * RUNTIME_HEADROOM_SHARE));
      expect(budget.sourceBytes).toBeGreaterThanOrEqual(Math.floor(budget.processBytes * SOURCE_MIN_SHARE));
      expect(
        budget.headroomBytes >= RUNTIME_HEADROOM_MIN_BYTES ||
          budget.sourceBytes <= Math.ceil(budget.processBytes * SOURCE_MIN_SHARE),
      ).toBe(true);
    }
  });

  it('refuses a cap or a worker count that is not a positive whole number', () => {
    expect(() => cacheBudgetOf(0, 1)).toThrow(RangeError);
    expect(() => cacheBudgetOf(16, 0)).toThrow(RangeError);
  });
});
