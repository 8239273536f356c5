// Just enough HTML reading for the tellows page, without a DOM dependency: find elements by
// tag and class/id, read attributes, take an element's inner HTML by balancing its own tag.
// Tolerant by design: unclosed elements run to the end of the input.

export interface HtmlElement {
  tag: string;
  attributes: Record<string, string>;
  inner: string;
  /** Offsets of the whole element in the input (open tag start, close tag end). */
  start: number;
  end: number;
}

const ATTRIBUTE = /([^\s=/"'>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
const VOID_TAGS = new Set(['img', 'br', 'hr', 'meta', 'link', 'input', 'source', 'area', 'base', 'col', 'embed', 'wbr']);

/** Attributes past this many characters of a tag are ignored: bounds the work on a hostile tag. */
const MAX_TAG_TEXT = 4096;

function parseAttributes(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of text.slice(0, MAX_TAG_TEXT).matchAll(ATTRIBUTE)) {
    const name = match[1]?.toLowerCase();
    if (name === undefined || name in attributes) continue;
    attributes[name] = match[2] ?? match[3] ?? match[4] ?? '';
  }
  return attributes;
}

export type Attributes = Record<string, string>;

export function hasClass(attributes: Attributes, className: string): boolean {
  return (attributes.class ?? '').split(/\s+/).includes(className);
}

function findClose(html: string, tag: string, from: number): { innerEnd: number; end: number } {
  const pattern = new RegExp(`<(/?)${tag}\\b[^<>]*>`, 'gi');
  pattern.lastIndex = from;
  let depth = 1;
  for (let match = pattern.exec(html); match; match = pattern.exec(html)) {
    const selfClosing = match[0].endsWith('/>');
    if (match[1] === '/') depth -= 1;
    else if (!selfClosing) depth += 1;
    if (depth === 0) return { innerEnd: match.index, end: match.index + match[0].length };
  }
  return { innerEnd: html.length, end: html.length };
}

export interface FindOptions {
  /** Stop after this many elements. */
  limit?: number;
  /** Skip elements nested in an earlier match (e.g. `li` in `li`), and do not scan inside it. */
  outermostOnly?: boolean;
}

/**
 * Elements with that tag (in document order) whose attributes `accept` holds. The inner HTML
 * is only cut out for accepted elements; with `limit` or `outermostOnly` the scan stays linear
 * even when a hostile page leaves thousands of elements unclosed.
 */
export function findElements(
  html: string,
  tag: string,
  accept: (attributes: Attributes) => boolean = () => true,
  options: FindOptions = {},
): HtmlElement[] {
  const wanted = tag.toLowerCase();
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const pattern = new RegExp(`<(${wanted})\\b([^<>]*)>`, 'gi');
  const found: HtmlElement[] = [];
  for (let match = pattern.exec(html); match && found.length < limit; match = pattern.exec(html)) {
    const start = match.index;
    const openEnd = start + match[0].length;
    const attributes = parseAttributes(match[2] ?? '');
    if (!accept(attributes)) continue;
    let element: HtmlElement;
    if (VOID_TAGS.has(wanted) || match[0].endsWith('/>')) {
      element = { tag: wanted, attributes, inner: '', start, end: openEnd };
    } else {
      const close = findClose(html, wanted, openEnd);
      element = { tag: wanted, attributes, inner: html.slice(openEnd, close.innerEnd), start, end: close.end };
    }
    found.push(element);
    if (options.outermostOnly) pattern.lastIndex = Math.max(pattern.lastIndex, element.end);
  }
  return found;
}

/** The first matching element, or undefined. */
export function findElement(html: string, tag: string, accept?: (attributes: Attributes) => boolean): HtmlElement | undefined {
  return findElements(html, tag, accept, { limit: 1 })[0];
}

/** Elements not nested in an earlier match (e.g. the `li` of a list, not the `li` inside them). */
export function findOutermostElements(html: string, tag: string, accept?: (attributes: Attributes) => boolean): HtmlElement[] {
  return findElements(html, tag, accept, { outermostOnly: true });
}

/** The first element of any tag in the list matching `accept`, or undefined. */
export function findFirst(html: string, tags: readonly string[], accept: (attributes: Attributes) => boolean): HtmlElement | undefined {
  let first: HtmlElement | undefined;
  for (const tag of tags) {
    const element = findElement(html, tag, accept);
    if (element && (first === undefined || element.start < first.start)) first = element;
  }
  return first;
}
