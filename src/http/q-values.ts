// The one reader of quality lists (RFC 9110 §12.4.2): `Accept-Encoding` (encoding.ts) and
// `Accept-Language` (language.ts) both read `token;q=0.8, other` through it, so a malformed
// q-value means the same in both. What each header's tokens mean (`*`, `identity`, a
// language's subtags) is left to its reader.
//
// Written by hand rather than with the negotiator package: negotiator accepts q-values RFC 9110
// refuses (`q=2`, `q=0.12345`), which the negotiation here skips, and does not know `x-gzip`;
// and on the hot path a memoised parse makes the parser's own speed moot (docs/compression.md).

/** A qvalue: 0 to 1 with at most three decimals; anything else is no qvalue. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** One element of a quality list: its token, trimmed and lower-cased, and its weight (1 when no q). */
export interface QualityItem {
  token: string;
  weight: number;
}

/**
 * The elements of a quality list in the header's order. An element whose q parameter is not a
 * qvalue is left out (it says nothing that can be trusted; the others still count), as is an
 * empty one; parameters other than q are ignored, and names are read case-insensitively.
 */
export function parseQualityList(header: string): QualityItem[] {
  const items: QualityItem[] = [];
  for (const element of header.split(',')) {
    const [rawToken = '', ...parameters] = element.split(';');
    const token = rawToken.trim().toLowerCase();
    if (token === '') continue;
    let weight = 1;
    let valid = true;
    for (const parameter of parameters) {
      const [name = '', value = ''] = parameter.split('=');
      if (name.trim().toLowerCase() !== 'q') continue;
      const q = value.trim();
      if (QVALUE.test(q)) weight = Number(q);
      else valid = false;
    }
    if (valid) items.push({ token, weight });
  }
  return items;
}
