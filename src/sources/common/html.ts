// A small, forgiving HTML reader for the scraped upstream pages: a linear scanner that builds
// an element tree, plus the few queries the parsers need (by tag, class, id, attribute).
//
// Why not a library: the pages are read for a dozen markers, not rendered, and what matters is
// that malformed or hostile input never throws, never backtracks and never recurses deeply.
// A hand-written scanner gives that in ~200 lines with no dependency (the maintained parsers
// either pull a chain of packages or require a newer Node 20 minor than the project's floor).
// It tolerates what real pages do: unquoted and valueless attributes, any attribute order,
// upper-case tags, stray or missing end tags, `<p>`/`<li>`/`<td>` closed implicitly, comments,
// and script/style bodies containing `<`.
import { decodeEntities } from './text.js';

export interface HtmlElement {
  readonly tag: string;
  /** Index among the parent's children (text nodes included). */
  readonly position: number;
  readonly attributes: ReadonlyMap<string, string>;
  readonly classes: readonly string[];
  readonly children: HtmlNode[];
  readonly parent: HtmlElement | null;
}

export interface HtmlText {
  readonly text: string;
}

export type HtmlNode = HtmlElement | HtmlText;

/** Elements that never have content. */
const VOID_TAGS = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr',
]);
/** Elements whose body is raw text up to their end tag; their content is dropped. */
const RAW_TEXT_TAGS = new Set(['script', 'style', 'noscript', 'template', 'textarea', 'iframe', 'svg']);
/** Opening one of these closes an open `<p>` at the top of the stack, as browsers do. */
const BLOCK_TAGS = new Set([
  'address', 'article', 'aside', 'blockquote', 'div', 'dl', 'fieldset', 'footer', 'form', 'h1', 'h2', 'h3', 'h4',
  'h5', 'h6', 'header', 'hr', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul',
]);
/** Opening one of these closes an open sibling of the same family. */
// A Map, not an object literal: a tag named `constructor` must not find Object's prototype.
const SELF_CLOSING_FAMILIES: ReadonlyMap<string, readonly string[]> = new Map([
  ['li', ['li']], ['dt', ['dt', 'dd']], ['dd', ['dt', 'dd']], ['tr', ['tr', 'td', 'th']], ['td', ['td', 'th']],
  ['th', ['td', 'th']], ['option', ['option']],
]);
/** Text joins across these without a space ("mer<span>de</span>" stays one word). */
const INLINE_TAGS = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'em', 'font', 'i', 'mark', 'q', 's', 'small', 'span', 'strong', 'sub', 'sup', 'u']);

/** Deeper nesting than this is flattened: keeps every walk bounded on hostile input. */
const MAX_DEPTH = 256;

interface MutableElement {
  tag: string;
  position: number;
  attributes: ReadonlyMap<string, string>;
  classes: readonly string[];
  children: HtmlNode[];
  parent: MutableElement | null;
}

const NO_ATTRIBUTES: ReadonlyMap<string, string> = new Map();
const NO_CLASSES: readonly string[] = Object.freeze([]);

function createElement(tag: string, attributes: ReadonlyMap<string, string>, parent: MutableElement | null): MutableElement {
  const classAttribute = attributes.get('class');
  const classes = classAttribute === undefined ? NO_CLASSES : classAttribute.split(/\s+/).filter((name) => name !== '');
  return { tag, position: parent === null ? 0 : parent.children.length, attributes, classes, children: [], parent };
}

function isNameCharacter(code: number): boolean {
  // Anything but whitespace, `/`, `>`, `=`, quotes and `<`.
  return !(code <= 0x20 || code === 0x2f || code === 0x3e || code === 0x3d || code === 0x22 || code === 0x27 || code === 0x3c);
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
}

interface OpenTag {
  tag: string;
  attributes: ReadonlyMap<string, string>;
  selfClosing: boolean;
  end: number;
}

/** Reads `<name attr=... >` starting at `start` (the `<`); null when it is not a tag. */
function readOpenTag(html: string, start: number): OpenTag | null {
  let index = start + 1;
  const nameStart = index;
  while (index < html.length && isNameCharacter(html.charCodeAt(index))) index += 1;
  const tag = html.slice(nameStart, index).toLowerCase();
  // As in browsers, any name starting with a letter opens a tag (`<a_b>` too), so a text node
  // never holds `<` followed by a letter.
  if (!/^[a-z]/.test(tag)) return null;
  let attributes: Map<string, string> | null = null;
  let selfClosing = false;
  while (index < html.length) {
    const code = html.charCodeAt(index);
    if (isWhitespace(code)) {
      index += 1;
    } else if (code === 0x3e) {
      return { tag, attributes: attributes ?? NO_ATTRIBUTES, selfClosing, end: index + 1 };
    } else if (code === 0x2f) {
      selfClosing = html.charCodeAt(index + 1) === 0x3e;
      index += 1;
    } else {
      const attributeStart = index;
      index += 1;
      while (index < html.length && isNameCharacter(html.charCodeAt(index))) index += 1;
      const name = html.slice(attributeStart, index).toLowerCase();
      let value = '';
      let cursor = index;
      while (cursor < html.length && isWhitespace(html.charCodeAt(cursor))) cursor += 1;
      if (html.charCodeAt(cursor) === 0x3d) {
        cursor += 1;
        while (cursor < html.length && isWhitespace(html.charCodeAt(cursor))) cursor += 1;
        const quote = html.charCodeAt(cursor);
        if (quote === 0x22 || quote === 0x27) {
          const close = html.indexOf(quote === 0x22 ? '"' : "'", cursor + 1);
          const valueEnd = close === -1 ? html.length : close;
          value = html.slice(cursor + 1, valueEnd);
          cursor = valueEnd + 1;
        } else {
          const valueStart = cursor;
          while (cursor < html.length && !isWhitespace(html.charCodeAt(cursor)) && html.charCodeAt(cursor) !== 0x3e) cursor += 1;
          value = html.slice(valueStart, cursor);
        }
        index = cursor;
      }
      attributes ??= new Map<string, string>();
      if (name !== '' && !attributes.has(name)) attributes.set(name, decodeEntities(value));
    }
  }
  // Unterminated tag at the end of the input: keep what was read.
  return { tag, attributes: attributes ?? NO_ATTRIBUTES, selfClosing, end: html.length };
}

/** Parses an HTML document into a tree under a synthetic `#root` element. Never throws. */
export function parseHtml(html: string): HtmlElement {
  const root = createElement('#root', new Map(), null);
  const stack: MutableElement[] = [root];
  const current = (): MutableElement => stack[stack.length - 1] ?? root;
  let index = 0;
  while (index < html.length) {
    const lessThan = html.indexOf('<', index);
    const textEnd = lessThan === -1 ? html.length : lessThan;
    if (textEnd > index) current().children.push({ text: html.slice(index, textEnd) });
    if (lessThan === -1) break;
    index = lessThan;
    const next = html.charCodeAt(index + 1);
    if (html.startsWith('<!--', index)) {
      const close = html.indexOf('-->', index + 4);
      index = close === -1 ? html.length : close + 3;
    } else if (next === 0x21 || next === 0x3f) {
      // <!DOCTYPE …>, <![CDATA[…]]>, <?xml …?>
      const close = html.indexOf('>', index + 2);
      index = close === -1 ? html.length : close + 1;
    } else if (next === 0x2f) {
      const close = html.indexOf('>', index + 2);
      const tag = (/^\s*([^\s/>]*)/.exec(html.slice(index + 2, close === -1 ? html.length : close))?.[1] ?? '').toLowerCase();
      index = close === -1 ? html.length : close + 1;
      for (let depth = stack.length - 1; depth > 0; depth -= 1) {
        if (stack[depth]?.tag === tag) {
          while (stack.length > depth) stack.pop();
          break;
        }
      }
    } else {
      const open = readOpenTag(html, index);
      if (open === null) {
        current().children.push({ text: '<' });
        index += 1;
        continue;
      }
      index = open.end;
      const family = SELF_CLOSING_FAMILIES.get(open.tag);
      if (family !== undefined && family.includes(current().tag)) stack.pop();
      if (BLOCK_TAGS.has(open.tag) && current().tag === 'p') stack.pop();
      const parent = current();
      const element = createElement(open.tag, open.attributes, parent);
      parent.children.push(element);
      if (RAW_TEXT_TAGS.has(open.tag) && !open.selfClosing) {
        const endTag = new RegExp(`</${open.tag}`, 'gi');
        endTag.lastIndex = index;
        const close = endTag.exec(html);
        index = close === null ? html.length : close.index;
      } else if (!VOID_TAGS.has(open.tag) && !open.selfClosing && stack.length < MAX_DEPTH) {
        stack.push(element);
      }
    }
  }
  return root;
}

function isElement(node: HtmlNode): node is HtmlElement {
  return 'tag' in node;
}

/** Every element under `root` (not `root` itself) matching `predicate`, in document order. */
export function findAll(root: HtmlElement, predicate: (element: HtmlElement) => boolean): HtmlElement[] {
  const found: HtmlElement[] = [];
  const pending: HtmlNode[] = [...root.children].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (!isElement(node)) continue;
    if (predicate(node)) found.push(node);
    for (let child = node.children.length - 1; child >= 0; child -= 1) {
      const childNode = node.children[child];
      if (childNode !== undefined) pending.push(childNode);
    }
  }
  return found;
}

export function findFirst(root: HtmlElement, predicate: (element: HtmlElement) => boolean): HtmlElement | null {
  const pending: HtmlNode[] = [...root.children].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (!isElement(node)) continue;
    if (predicate(node)) return node;
    for (let child = node.children.length - 1; child >= 0; child -= 1) {
      const childNode = node.children[child];
      if (childNode !== undefined) pending.push(childNode);
    }
  }
  return null;
}

export function hasClass(element: HtmlElement, className: string): boolean {
  return element.classes.includes(className);
}

export const byClass = (className: string) => (element: HtmlElement): boolean => element.classes.includes(className);
export const byId = (id: string) => (element: HtmlElement): boolean => element.attributes.get('id') === id;

/** Child elements only, without text nodes. */
export function childElements(element: HtmlElement): HtmlElement[] {
  return element.children.filter(isElement);
}

/** The next element among the parent's children, or null. */
export function nextElementSibling(element: HtmlElement): HtmlElement | null {
  const siblings = element.parent?.children ?? [];
  for (let index = element.position + 1; index < siblings.length; index += 1) {
    const sibling = siblings[index];
    if (sibling !== undefined && isElement(sibling)) return sibling;
  }
  return null;
}

/**
 * The raw text under an element (entities still encoded: feed it to `cleanText`). Block
 * boundaries become spaces; inline elements join without one.
 */
export function rawText(element: HtmlElement): string {
  // No bound: the same walk as shortRawText with an unlimited budget, which never gives up.
  return shortRawText(element, Number.POSITIVE_INFINITY) ?? '';
}

/**
 * Like `rawText`, but gives up (null) once the text passes `maxChars` or the walk passes as
 * many nodes: lets a parser test every element as a possible short label in linear time.
 */
export function shortRawText(element: HtmlElement, maxChars: number): string | null {
  const parts: string[] = [];
  let length = 0;
  let budget = maxChars;
  if (element.children.length > budget) return null;
  const pending: (HtmlNode | string)[] = [...element.children].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node === 'string') {
      parts.push(node);
      continue;
    }
    budget -= 1;
    if (budget < 0) return null;
    if (!isElement(node)) {
      length += node.text.length;
      if (length > maxChars) return null;
      parts.push(node.text);
    } else {
      // Checked before queuing, so one wide element cannot cost more than the budget.
      if (node.children.length > budget) return null;
      const separator = INLINE_TAGS.has(node.tag) ? '' : ' ';
      pending.push(separator);
      for (let child = node.children.length - 1; child >= 0; child -= 1) {
        const childNode = node.children[child];
        if (childNode !== undefined) pending.push(childNode);
      }
      pending.push(separator);
    }
  }
  return parts.join('');
}
