// The one stored form of a per-source cache entry, shared by the memory cache and Redis: a JSON
// array `[status, fetchedAt, freshUntil, staleUntil, data, lastFailure?]` in pure ASCII (every
// character above U+007F written as a \uXXXX escape). Pure ASCII matters in memory: the memory
// cache keeps it as one byte per character in its slabs (slab-store.ts), where the object graph
// of the same entry costs kilobytes, and Redis stores the same bytes.
// Positions instead of member names keep each entry a few dozen bytes shorter; the key version
// (SOURCE_CACHE_KEY_VERSION) changes whenever this layout does.
import type { CachedSourceResult } from '../../domain/ports/source-cache.js';
import { isFailureReason } from '../../domain/ports/source.js';

const STATUS_OK = 1;
const STATUS_NOT_FOUND = 0;

const NON_ASCII = /[\u0080-\uffff]/g;

function escapeNonAscii(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The ASCII text of one entry, serialised once, when the entry is written. */
export function encodeCachedResult(value: CachedSourceResult): string {
  const fields: unknown[] = [
    value.status === 'ok' ? STATUS_OK : STATUS_NOT_FOUND,
    value.fetchedAt,
    value.freshUntil,
    value.staleUntil,
    value.status === 'ok' ? value.data : null,
  ];
  if (value.lastFailure !== undefined) fields.push(value.lastFailure);
  // JSON.stringify already escapes lone surrogates; a pair becomes two escapes, which JSON.parse joins again.
  return JSON.stringify(fields).replace(NON_ASCII, escapeNonAscii);
}

/** Undefined for anything that is not an entry this layout wrote (read as a miss, never an error). */
export function decodeCachedResult(text: string): CachedSourceResult | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length < 5 || parsed.length > 6) return undefined;
  const [status, fetchedAt, freshUntil, staleUntil, data, lastFailure] = parsed as unknown[];
  if (
    (status !== STATUS_OK && status !== STATUS_NOT_FOUND) ||
    typeof fetchedAt !== 'string' ||
    typeof freshUntil !== 'number' ||
    typeof staleUntil !== 'number'
  ) {
    return undefined;
  }
  if (parsed.length === 6 && !isFailureReason(lastFailure)) return undefined;
  const value: CachedSourceResult = {
    status: status === STATUS_OK ? 'ok' : 'not_found',
    data: status === STATUS_OK ? data : null,
    fetchedAt,
    freshUntil,
    staleUntil,
  };
  if (isFailureReason(lastFailure)) value.lastFailure = lastFailure;
  return value;
}
