// A bounded memo in front of the pure number parser: callers ask about the same few spellings
// again and again (hot numbers), and parsing with libphonenumber is the dearest pure step of a
// cached lookup. Pure in, pure out: results are shared and must not be mutated.
import { LRUCache } from 'lru-cache';
import type { ParsePhoneNumberResult, PhoneNumberParser } from '../phone-number.js';

export function memoizeParser(parse: PhoneNumberParser, maxEntries = 10_000): PhoneNumberParser {
  const memo = new LRUCache<string, ParsePhoneNumberResult>({ max: maxEntries });
  return (raw) => {
    // Only plausible spellings are remembered, so hostile long inputs cannot crowd it.
    if (raw.length > 32) return parse(raw);
    let result = memo.get(raw);
    if (result === undefined) {
      result = parse(raw);
      memo.set(raw, result);
    }
    return result;
  };
}
