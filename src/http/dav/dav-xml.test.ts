import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../domain/blocklist/feed-content.js';
import { davRequestSteps, parseDavRequest, PARSE_CHUNK_CHARS } from './dav-xml.js';

/** A multiget of `count` hrefs, as a Fritz!Box or vdirsyncer sends it. */
function multiget(count: number): string {
  const hrefs = Array.from({ length: count }, (_, index) => `<d:href>/carddav/blocklist/pr-${String(index).padStart(8, '0')}.vcf</d:href>`).join('');
  return `<?xml version="1.0" encoding="utf-8"?><card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><card:address-data/></d:prop>${hrefs}</card:addressbook-multiget>`;
}

describe('WebDAV request bodies', () => {
  it('reads a multiget: its root, the properties asked for and every href in order', () => {
    const parsed = parseDavRequest(multiget(3));
    expect(parsed).toEqual({ root: 'addressbook-multiget', props: ['getetag', 'address-data'], allprop: false, hrefs: ['/carddav/blocklist/pr-00000000.vcf', '/carddav/blocklist/pr-00000001.vcf', '/carddav/blocklist/pr-00000002.vcf'] });
  });

  it('parses a large body in steps, pausing between pieces, with hrefs cut across pieces read whole', () => {
    const body = multiget(1000);
    const steps = davRequestSteps(body);
    let pauses = 0;
    let next = steps.next();
    while (next.done !== true) {
      pauses += 1;
      next = steps.next();
    }
    expect(pauses).toBe(Math.ceil(body.length / PARSE_CHUNK_CHARS));
    expect(next.value?.hrefs).toHaveLength(1000);
    expect(next.value?.hrefs[999]).toBe('/carddav/blocklist/pr-00000999.vcf');
    expect(next.value).toEqual(parseDavRequest(body));
  });

  it('refuses what is not a single well-formed document, in steps too', () => {
    expect(parseDavRequest('<d:propfind xmlns:d="DAV:"><d:prop>')).toBeUndefined();
    expect(parseDavRequest('<a/><b/>')).toBeUndefined();
    expect(runToEnd(davRequestSteps(`${multiget(200)}<extra/>`))).toBeUndefined();
  });

  it('reads an empty body as allprop', () => {
    expect(parseDavRequest('  ')).toEqual({ root: '', props: [], allprop: true, hrefs: [] });
  });
});
