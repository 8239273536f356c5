import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../domain/steps.js';
import {
  davRequestSteps,
  davResponse,
  escapeXml,
  multistatus,
  parseDavRequest,
  PARSE_CHUNK_CHARS,
  xmlWellFormednessProblem,
} from './dav-xml.js';

/** A multiget of `count` hrefs, as a Fritz!Box or vdirsyncer sends it. */
function multiget(count: number): string {
  const hrefs = Array.from(
    { length: count },
    (_, index) => `<d:href>/carddav/blocklist/pr-${String(index).padStart(8, '0')}.vcf</d:href>`,
  ).join('');
  return `<?xml version="1.0" encoding="utf-8"?><card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><card:address-data/></d:prop>${hrefs}</card:addressbook-multiget>`;
}

describe('WebDAV request bodies', () => {
  it('reads a multiget: its root, the properties asked for and every href in order', () => {
    const parsed = parseDavRequest(multiget(3));
    expect(parsed).toEqual({
      root: 'addressbook-multiget',
      props: ['getetag', 'address-data'],
      allprop: false,
      hrefs: [
        '/carddav/blocklist/pr-00000000.vcf',
        '/carddav/blocklist/pr-00000001.vcf',
        '/carddav/blocklist/pr-00000002.vcf',
      ],
    });
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
    // A pause per piece while parsing, and about as many while checking well-formedness first.
    expect(pauses).toBeGreaterThanOrEqual(2 * Math.floor(body.length / PARSE_CHUNK_CHARS));
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

describe('well-formedness (RFC 4918 §8.2: an ill-formed body is refused)', () => {
  const ILL_FORMED = [
    ['an unquoted attribute', '<d:propfind xmlns:d=DAV:><d:allprop/></d:propfind>'],
    ['an attribute without a value', '<d:propfind xmlns:d="DAV:" checked><d:allprop/></d:propfind>'],
    ['an attribute given twice', '<d:propfind xmlns:d="DAV:" xmlns:d="DAV:"><d:allprop/></d:propfind>'],
    ['a stray end tag', '<d:propfind xmlns:d="DAV:"><d:allprop/></d:prop></d:propfind>'],
    ['crossed elements', '<d:propfind xmlns:d="DAV:"><d:prop><d:getetag></d:prop></d:getetag></d:propfind>'],
    ['an undefined entity', '<d:propfind xmlns:d="DAV:"><d:prop>&nbsp;<d:getetag/></d:prop></d:propfind>'],
    ['a bare ampersand', '<d:propfind xmlns:d="DAV:"><d:prop>a & b<d:getetag/></d:prop></d:propfind>'],
    [
      'a reference to a control character',
      '<card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:href>/a&#1;</d:href></card:addressbook-multiget>',
    ],
    ['a control character', '<d:propfind xmlns:d="DAV:">\u0001<d:allprop/></d:propfind>'],
    ['a < in text', '<d:propfind xmlns:d="DAV:"><d:prop>< d:getetag/></d:prop></d:propfind>'],
    ['a name starting with a digit', '<d:propfind xmlns:d="DAV:"><d:prop><1x/></d:prop></d:propfind>'],
    ['an undeclared prefix', '<d:propfind><d:allprop/></d:propfind>'],
    ['text before the root', 'hello<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>'],
    ['text after the root', '<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>trailing'],
    [
      'a document type with an entity',
      '<?xml version="1.0"?><!DOCTYPE d:propfind [<!ENTITY e "x">]><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>',
    ],
    ['an XML declaration not first', ' <?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>'],
    ['-- inside a comment', '<d:propfind xmlns:d="DAV:"><!-- a -- b --><d:allprop/></d:propfind>'],
    [']]> in text', '<d:propfind xmlns:d="DAV:"><d:prop>]]><d:getetag/></d:prop></d:propfind>'],
    ['a truncated tag', '<d:propfind xmlns:d="DAV:"><d:allprop'],
  ] as const;

  it.each(ILL_FORMED)('refuses %s', (_name, body) => {
    expect(xmlWellFormednessProblem(body)).toBeTypeOf('string');
    expect(parseDavRequest(body)).toBeUndefined();
  });

  it('accepts what real clients send: declarations, a BOM, comments, CDATA, references, default namespaces', () => {
    const bodies = [
      multiget(3),
      '\uFEFF<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<propfind xmlns="DAV:"><prop><getetag/></prop></propfind>\n',
      "<?xml version='1.0' encoding='utf-8'?><D:propfind xmlns:D='DAV:'><!-- Fritz!Box --><D:prop><D:resourcetype/></D:prop></D:propfind>",
      '<card:addressbook-multiget xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:href><![CDATA[/carddav/blocklist/a.vcf]]></d:href><d:href>/carddav/blocklist/b&amp;c&#46;vcf</d:href></card:addressbook-multiget>',
      '<d:propfind xmlns:d="DAV:" xml:lang="fr"><?client hint?><d:allprop/></d:propfind>',
    ];
    for (const body of bodies) {
      expect(xmlWellFormednessProblem(body), body).toBeUndefined();
      expect(parseDavRequest(body), body).toBeDefined();
    }
    expect(parseDavRequest(bodies[3] ?? '')?.hrefs).toEqual(['/carddav/blocklist/a.vcf', '/carddav/blocklist/b&c.vcf']);
  });

  it('reads deep nesting and wide tags in one pass, and refuses more elements than it will read', () => {
    const depth = 15_000;
    const deep = `<d:propfind xmlns:d="DAV:">${'<a>'.repeat(depth)}<x:b xmlns:x="urn:x">${'<x:c>'.repeat(depth)}${'</x:c>'.repeat(depth)}</x:b>${'</a>'.repeat(depth)}</d:propfind>`;
    expect(xmlWellFormednessProblem(deep)).toBe('more than 20000 elements');
    const attributes = Array.from({ length: 50_000 }, (_, index) => ` a${index}="${index}"`).join('');
    expect(
      xmlWellFormednessProblem(`<d:propfind xmlns:d="DAV:"${attributes}><d:allprop/></d:propfind>`),
    ).toBeUndefined();
    expect(
      xmlWellFormednessProblem(`<d:propfind xmlns:d="DAV:"${attributes} a7="again"><d:allprop/></d:propfind>`),
    ).toBe('an attribute given twice');
    const nested = `<x:b xmlns:x="urn:x">${'<a>'.repeat(9000)}<y:c xmlns:y="urn:y">${'<y:d/>'.repeat(9000)}</y:c>${'</a>'.repeat(9000)}<y:e/></x:b>`;
    // y is bound inside <y:c> only: the <y:e/> after it is an undeclared prefix.
    expect(xmlWellFormednessProblem(nested)).toBe('an undeclared namespace prefix or a malformed name');
    expect(xmlWellFormednessProblem(nested.replace('<y:e/>', ''))).toBeUndefined();
  });

  it('writes no character XML cannot hold, even from hostile text', () => {
    expect(escapeXml('a\u0001b\uFFFE<&>"')).toBe('a\uFFFDb\uFFFD&lt;&amp;&gt;&quot;');
  });

  it('answers a property named like an Object member (constructor) in well-formed XML', () => {
    const request = parseDavRequest(
      '<d:propfind xmlns:d="DAV:"><d:prop><d:constructor/><d:tostring/></d:prop></d:propfind>',
    );
    expect(request).toBeDefined();
    const answer = multistatus([
      davResponse('/carddav/', new Map(), request ?? { root: '', props: [], allprop: false, hrefs: [] }),
    ]);
    expect(xmlWellFormednessProblem(answer)).toBeUndefined();
    expect(answer).toContain('<d:constructor/>');
  });
});
