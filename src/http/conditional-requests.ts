// Conditional requests (RFC 9110 §13): whether a client already holds the representation an
// ETag names, so the answer is a 304 without a body. Used by every route that sends an ETag:
// the phone API's answers and the blocklist feed's files.

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
