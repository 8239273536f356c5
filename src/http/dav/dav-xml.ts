// The small part of WebDAV's XML the read-only CardDAV server needs: what a PROPFIND or REPORT
// body asks for (its root element, the properties under <prop>, the <href>s of a multiget), and
// one multistatus writer. Names are compared by local name: the properties served come from
// three namespaces (DAV:, CardDAV, calendarserver's getctag) whose local names do not collide.
// htmlparser2 in XML mode never fetches or expands external entities.
import { Parser } from 'htmlparser2';
import { runToEnd, type Steps } from '../../domain/blocklist/feed-content.js';

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

/** Reads a PROPFIND or REPORT body; undefined when it is not XML the server can use. */
export function parseDavRequest(body: string): DavRequest | undefined {
  return runToEnd(davRequestSteps(body));
}

/**
 * parseDavRequest as steps (a generator that pauses after each PARSE_CHUNK_CHARS of the body),
 * so that a route can parse a multiget of a thousand hrefs in slices (runInSlices) instead of
 * holding the event loop for it: htmlparser2 takes the body in pieces like a stream.
 */
export function* davRequestSteps(body: string): Steps<DavRequest | undefined> {
  if (body.trim() === '') return { root: '', props: [], allprop: true, hrefs: [] };
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

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A property's element as written: `qualified` name (with the multistatus' prefixes) and inner XML. */
export interface DavProperty {
  qualified: string;
  inner: string;
}

/** Local name → property, what a resource can answer. */
export type DavProperties = ReadonlyMap<string, DavProperty>;

// The prefixes the multistatus root declares.
const NAMESPACES = 'xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/"';
/** The qualified name a request's unknown property is answered under (404), in DAV: unless known otherwise. */
const UNKNOWN_PREFIXES: Readonly<Record<string, string>> = { getctag: 'cs', 'address-data': 'card', 'addressbook-home-set': 'card' };

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
      else if (/^[a-z][a-z0-9-]{0,63}$/.test(name)) missing.push(`<${UNKNOWN_PREFIXES[name] ?? 'd'}:${name}/>`);
    }
  }
  let xml = `<d:response><d:href>${escapeXml(href)}</d:href>`;
  if (found.length > 0 || missing.length === 0) xml += `<d:propstat><d:prop>${found.join('')}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>`;
  if (missing.length > 0) xml += `<d:propstat><d:prop>${missing.join('')}</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>`;
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
