// The small part of WebDAV's XML the read-only CardDAV server needs: what a PROPFIND or REPORT
// body asks for (its root element, the properties under <prop>, the <href>s of a multiget), and
// one multistatus writer. Names are compared by local name: the properties served come from
// three namespaces (DAV:, CardDAV, calendarserver's getctag) whose local names do not collide.
// htmlparser2 in XML mode never fetches or expands external entities. htmlparser2 is lenient
// (unquoted attributes, stray end tags, unknown entities pass), so a body is first held to XML
// 1.0's and Namespaces' well-formedness (xmlWellFormednessProblem): one that is not is refused
// with a 400, as RFC 4918 §8.2 requires. Every answer written here is well-formed: text is
// escaped and a character XML cannot hold is replaced (escapeXml).
import { Parser } from 'htmlparser2';
import { runToEnd, type Steps } from '../../domain/steps.js';

export interface DavRequest {
  /** Local name of the root element (`propfind`, `addressbook-multiget`, `addressbook-query`), or '' for an empty body. */
  root: string;
  /** Local names of the properties asked for; empty with `allprop` (or an empty body). */
  props: string[];
  allprop: boolean;
  /** The `<href>` texts of a multiget, in order. */
  hrefs: string[];
}

function localName(name: string): string {
  const colon = name.lastIndexOf(':');
  return (colon === -1 ? name : name.slice(colon + 1)).toLowerCase();
}

const MAX_ELEMENTS = 20_000;

/** How much of a body is parsed between two chances to let the event loop through (davRequestSteps). */
export const PARSE_CHUNK_CHARS = 2048;

// ---- Well-formedness (XML 1.0 fifth edition §2, Namespaces in XML 1.0 §5): the productions a
// WebDAV body can use. A document type declaration is refused (RFC 4918 §20.6 lets a server refuse
// DTDs): without one, only the five predefined entities exist.

/** A character XML 1.0 does not allow anywhere (§2.2 Char). */
const NOT_XML_CHAR = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const NAME_START =
  ':A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const NAME = `[${NAME_START}][${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*`;
// XML's NameChar holds the combining marks U+0300–U+036F on their own, which the lint rule reads
// as a misleading class: here they are meant.
/* eslint-disable no-misleading-character-class */
const START_TAG = new RegExp(`<(${NAME})`, 'uy');
const ATTRIBUTE = new RegExp(`[ \\t\\r\\n]+(${NAME})[ \\t\\r\\n]*=[ \\t\\r\\n]*(?:"([^<"]*)"|'([^<']*)')`, 'uy');
const TAG_END = /[ \t\r\n]*(\/?)>/y;
const END_TAG = new RegExp(`</(${NAME})[ \\t\\r\\n]*>`, 'uy');
const XML_DECLARATION =
  /<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(?:"1\.[0-9]+"|'1\.[0-9]+')(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\r\n]*\?>/y;
const COMMENT = /<!--((?:[^-]|-[^-])*)-->/y;
const PROCESSING_INSTRUCTION = new RegExp(`<\\?(${NAME})(?:[ \\t\\r\\n][\\s\\S]*?)?\\?>`, 'uy');
/* eslint-enable no-misleading-character-class */
const CDATA = /<!\[CDATA\[[\s\S]*?\]\]>/y;
const CHAR_DATA = /[^<&]+/y;
const REFERENCE = /&(?:(lt|gt|amp|apos|quot)|#([0-9]+)|#x([0-9a-fA-F]+));/y;
const SPACE = /[ \t\r\n]*/y;

function matchAt(pattern: RegExp, text: string, at: number): RegExpExecArray | null {
  pattern.lastIndex = at;
  return pattern.exec(text);
}

/** Whether `&…;` text (an attribute value or character data) uses only defined entities and characters XML allows. */
function referencesProblem(text: string): string | undefined {
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    const reference = matchAt(REFERENCE, text, at);
    if (reference === null) return 'an undefined entity or a bare &';
    const code =
      reference[2] !== undefined
        ? Number(reference[2])
        : reference[3] !== undefined
          ? Number.parseInt(reference[3], 16)
          : undefined;
    if (code !== undefined && (code > 0x10ffff || NOT_XML_CHAR.test(String.fromCodePoint(code))))
      return 'a character reference to a character XML does not allow';
  }
  return undefined;
}

/** `prefix:local` split; undefined when the name has more than one colon or an empty part (Namespaces §3 QName). */
function qualifiedName(name: string): { prefix: string | undefined; local: string } | undefined {
  const parts = name.split(':');
  if (parts.some((part) => part === '') || parts.length > 2) return undefined;
  return parts.length === 2 ? { prefix: parts[0], local: parts[1] ?? '' } : { prefix: undefined, local: name };
}

/**
 * Why `text` is not a well-formed, namespace-well-formed XML document, or undefined when it is.
 * Linear in the text.
 */
export function xmlWellFormednessProblem(text: string): string | undefined {
  return runToEnd(wellFormednessSteps(text));
}

/** xmlWellFormednessProblem as steps: a pause after each PARSE_CHUNK_CHARS of the text read (a 512 KiB body takes tens of ms). */
export function* wellFormednessSteps(text: string): Steps<string | undefined> {
  if (NOT_XML_CHAR.test(text)) return 'a character XML does not allow';
  // A byte order mark decoded into the text is not part of the document.
  let at = text.startsWith('\uFEFF') ? 1 : 0;
  if (text.startsWith('<?xml', at)) {
    const declaration = matchAt(XML_DECLARATION, text, at);
    if (declaration === null) return 'a malformed XML declaration';
    at += declaration[0].length;
  }
  /** Open elements: their qualified names and the prefixes each binds. */
  const open: Array<{ name: string; binds: string[] }> = [];
  // How many open elements bind each prefix: a lookup costs the same at any depth.
  const bound = new Map<string, number>();
  const prefixBound = (prefix: string): boolean => prefix === 'xml' || (bound.get(prefix) ?? 0) > 0;
  const close = (): { name: string } | undefined => {
    const element = open.pop();
    for (const prefix of element?.binds ?? []) bound.set(prefix, (bound.get(prefix) ?? 1) - 1);
    return element;
  };
  let rootSeen = false;
  let elements = 0;
  let nextPause = at + PARSE_CHUNK_CHARS;
  while (at < text.length) {
    if (at >= nextPause) {
      nextPause = at + PARSE_CHUNK_CHARS;
      yield;
    }
    const inside = open.length > 0;
    if (text.startsWith('<!--', at)) {
      const comment = matchAt(COMMENT, text, at);
      if (comment === null || (comment[1] ?? '').endsWith('-')) return 'a malformed comment';
      at += comment[0].length;
    } else if (text.startsWith('<?', at)) {
      const instruction = matchAt(PROCESSING_INSTRUCTION, text, at);
      if (instruction === null || (instruction[1] ?? '').toLowerCase() === 'xml')
        return 'a malformed or misplaced processing instruction';
      at += instruction[0].length;
    } else if (text.startsWith('<!DOCTYPE', at)) {
      return 'a document type declaration (not accepted)';
    } else if (text.startsWith('<![CDATA[', at)) {
      const section = matchAt(CDATA, text, at);
      if (!inside || section === null) return 'a CDATA section outside the root element or unclosed';
      at += section[0].length;
    } else if (text.startsWith('</', at)) {
      const end = matchAt(END_TAG, text, at);
      const element = close();
      if (end === null || element === undefined || end[1] !== element.name)
        return 'an end tag that does not close the open element';
      at += end[0].length;
    } else if (text[at] === '<') {
      if (!inside && rootSeen) return 'more than one root element';
      const start = matchAt(START_TAG, text, at);
      if (start === null) return 'a malformed start tag';
      elements += 1;
      if (elements > MAX_ELEMENTS) return `more than ${MAX_ELEMENTS} elements`;
      const name = start[1] ?? '';
      at += start[0].length;
      const binds: string[] = [];
      const attributes = new Set<string>();
      for (let attribute = matchAt(ATTRIBUTE, text, at); attribute !== null; attribute = matchAt(ATTRIBUTE, text, at)) {
        const attributeName = attribute[1] ?? '';
        const value = attribute[2] ?? attribute[3] ?? '';
        if (attributes.has(attributeName)) return 'an attribute given twice';
        const problem = referencesProblem(value);
        if (problem !== undefined) return problem;
        attributes.add(attributeName);
        if (attributeName.startsWith('xmlns:')) {
          if (value === '') return 'a namespace prefix bound to no name';
          binds.push(attributeName.slice('xmlns:'.length));
        }
        at += attribute[0].length;
      }
      const end = matchAt(TAG_END, text, at);
      if (end === null) return 'a malformed start tag';
      at += end[0].length;
      open.push({ name, binds });
      for (const prefix of binds) bound.set(prefix, (bound.get(prefix) ?? 0) + 1);
      for (const qualified of [name, ...attributes]) {
        if (qualified === 'xmlns' || qualified.startsWith('xmlns:')) continue;
        const parts = qualifiedName(qualified);
        if (parts === undefined || (parts.prefix !== undefined && !prefixBound(parts.prefix)))
          return 'an undeclared namespace prefix or a malformed name';
      }
      if (end[1] === '/') close();
      rootSeen = true;
    } else if (inside) {
      const data = matchAt(CHAR_DATA, text, at);
      const run = data === null ? text.slice(at, text.indexOf(';', at) + 1 || text.length) : data[0];
      if (data === null) {
        const problem = referencesProblem(run);
        if (problem !== undefined) return problem;
      } else if (run.includes(']]>')) return 'the text ]]> outside a CDATA section';
      at += run.length;
    } else {
      const space = matchAt(SPACE, text, at);
      if (space === null || space[0].length === 0) return 'text outside the root element';
      at += space[0].length;
    }
  }
  if (open.length > 0) return 'an element left open';
  if (!rootSeen) return 'no root element';
  return undefined;
}

/** Reads a PROPFIND or REPORT body; undefined when it is not XML the server can use. */
export function parseDavRequest(body: string): DavRequest | undefined {
  return runToEnd(davRequestSteps(body));
}

/**
 * parseDavRequest as steps (a generator that pauses after each PARSE_CHUNK_CHARS of the body),
 * so that a route can parse a multiget of a thousand hrefs in slices (infra/runtime/event-loop-slices.ts) instead of
 * holding the event loop for it: htmlparser2 takes the body in pieces like a stream.
 */
export function* davRequestSteps(body: string): Steps<DavRequest | undefined> {
  if (body.trim() === '') return { root: '', props: [], allprop: true, hrefs: [] };
  if ((yield* wellFormednessSteps(body)) !== undefined) return undefined;
  const stack: string[] = [];
  const request: DavRequest = { root: '', props: [], allprop: false, hrefs: [] };
  let text = '';
  let elements = 0;
  let broken = false;
  let ending = false;
  const parser = new Parser(
    {
      onopentag(name) {
        elements += 1;
        if (elements > MAX_ELEMENTS) broken = true;
        const local = localName(name);
        if (stack.length === 0) {
          if (request.root !== '') broken = true;
          request.root = local;
        }
        const parent = stack[stack.length - 1];
        // A property is a direct child of the request's own <prop> (not of the <prop> inside a
        // filter, which a query may carry deeper down).
        if (parent === 'prop' && stack.length === 2) request.props.push(local);
        if (local === 'allprop' && stack.length === 1) request.allprop = true;
        stack.push(local);
        text = '';
      },
      ontext(chunk) {
        text += chunk;
      },
      onclosetag(name) {
        // Closed by the end of the body, not by the body: a truncated document.
        if (ending) broken = true;
        const local = localName(name);
        if (local === 'href' && stack.length === 2) request.hrefs.push(text.trim());
        if (stack.pop() !== local) broken = true;
        text = '';
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  for (let offset = 0; offset < body.length; offset += PARSE_CHUNK_CHARS) {
    parser.write(body.slice(offset, offset + PARSE_CHUNK_CHARS));
    if (broken) return undefined;
    yield;
  }
  ending = true;
  parser.end();
  if (broken || stack.length !== 0 || request.root === '') return undefined;
  if (request.root === 'propfind' && request.props.length === 0) request.allprop = true;
  return request;
}

/** Any character XML 1.0 cannot hold, even escaped (controls, lone surrogates, U+FFFE/U+FFFF). */
const NOT_XML_CHARS = new RegExp(NOT_XML_CHAR.source, 'gu');

/** Text as XML character data or an attribute value: escaped, and a character XML cannot hold replaced by U+FFFD. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(NOT_XML_CHARS, '\uFFFD');
}

/** A property's element as written: `qualified` name (with the multistatus' prefixes) and inner XML. */
export interface DavProperty {
  qualified: string;
  inner: string;
}

/** Local name → property, what a resource can answer. */
export type DavProperties = ReadonlyMap<string, DavProperty>;

// The prefixes the multistatus root declares.
const NAMESPACES =
  'xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/"';
/** The qualified name a request's unknown property is answered under (404), in DAV: unless known otherwise. */
const UNKNOWN_PREFIXES: Readonly<Record<string, string>> = {
  getctag: 'cs',
  'address-data': 'card',
  'addressbook-home-set': 'card',
};

function element({ qualified, inner }: DavProperty): string {
  return inner === '' ? `<${qualified}/>` : `<${qualified}>${inner}</${qualified}>`;
}

/** One <response>: the properties asked for that the resource has (200), the others (404). */
export function davResponse(href: string, properties: DavProperties, request: DavRequest): string {
  const found: string[] = [];
  const missing: string[] = [];
  if (request.allprop) {
    for (const property of properties.values()) found.push(element(property));
  } else {
    for (const name of request.props) {
      const property = properties.get(name);
      if (property !== undefined) found.push(element(property));
      // Own keys only: a property named `constructor` must not find Object's.
      else if (/^[a-z][a-z0-9-]{0,63}$/.test(name))
        missing.push(`<${Object.hasOwn(UNKNOWN_PREFIXES, name) ? UNKNOWN_PREFIXES[name] : 'd'}:${name}/>`);
    }
  }
  let xml = `<d:response><d:href>${escapeXml(href)}</d:href>`;
  if (found.length > 0 || missing.length === 0)
    xml += `<d:propstat><d:prop>${found.join('')}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>`;
  if (missing.length > 0)
    xml += `<d:propstat><d:prop>${missing.join('')}</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>`;
  return `${xml}</d:response>`;
}

/** A <response> for an href the server does not have (multiget). */
export function davMissing(href: string): string {
  return `<d:response><d:href>${escapeXml(href)}</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`;
}

export function multistatus(responses: readonly string[]): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus ${NAMESPACES}>${responses.join('')}</d:multistatus>\n`;
}

/** The body of a 403 to a writing method (RFC 3744 §7.1.1 `need-privileges`). */
export function needPrivilegesError(href: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:"><d:need-privileges><d:resource><d:href>${escapeXml(href)}</d:href><d:privilege><d:write/></d:privilege></d:resource></d:need-privileges></d:error>\n`;
}
