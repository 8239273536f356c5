// A bounded memo in front of the pure number parser: callers ask about the same few spellings
// again and again (hot numbers), and parsing with libphonenumber is the dearest pure step of a
// cached lookup. Pure in, pure out: results are shared and must not be mutated.
//
// Bounded in count and, when given `maxBytes`, in bytes: each spelling is charged its text, its
// result (twice its JSON length, which covers the measured 1.28× of a parsed number on the heap
// and text held as two bytes per character) and a fixed overhead, so the memo is one of the
// held things CACHE_MAX_MB accounts for (docs/cache.md).
import { LRUCache } from 'lru-cache';
import type { ParsePhoneNumberResult, PhoneNumberParser } from '../phone-number.js';

/** Charged per spelling on top of its text and result: the key string, the LRU's bookkeeping. */
export const MEMO_OVERHEAD_BYTES = 160;

export interface MemoizedParser extends PhoneNumberParser {
  /** Bytes charged for the spellings held (0 when the memo has no byte cap). */
  chargedBytes(): number;
}

export interface MemoizeParserOptions {
  maxEntries?: number;
  maxBytes?: number;
}

export function memoCost(raw: string, result: ParsePhoneNumberResult): number {
  return MEMO_OVERHEAD_BYTES + raw.length + 2 * JSON.stringify(result).length;
}

export function memoizeParser(parse: PhoneNumberParser, options: number | MemoizeParserOptions = {}): MemoizedParser {
  const { maxEntries = 10_000, maxBytes } = typeof options === 'number' ? { maxEntries: options } : options;
  const memo = new LRUCache<string, ParsePhoneNumberResult>({
    max: maxEntries,
    ...(maxBytes === undefined
      ? {}
      : {
          maxSize: Math.max(1, Math.floor(maxBytes)),
          sizeCalculation: (result: ParsePhoneNumberResult, raw: string) => memoCost(raw, result),
        }),
  });
  const memoized = (raw: string): ParsePhoneNumberResult => {
    // Only plausible spellings are remembered, so hostile long inputs cannot crowd it.
    if (raw.length > 32) return parse(raw);
    let result = memo.get(raw);
    if (result === undefined) {
      result = parse(raw);
      memo.set(raw, result);
    }
    return result;
  };
  return Object.assign(
    memoized,
    { chargedBytes: () => memo.calculatedSize },
    parse.readDialled === undefined ? {} : { readDialled: parse.readDialled },
  );
}
