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

const OPEN_TAG = /<([a-zA-Z][a-zA-Z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
const ATTRIBUTE = /([^\s=/"'>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;
const VOID_TAGS = new Set(['img', 'br', 'hr', 'meta', 'link', 'input', 'source', 'area', 'base', 'col', 'embed', 'wbr']);

function parseAttributes(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of text.matchAll(ATTRIBUTE)) {
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
  const pattern = new RegExp(`<(/?)${tag}\\b(?:[^>"']|"[^"]*"|'[^']*')*>`, 'gi');
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

/**
 * Every element with that tag (in document order) whose attributes `accept` holds. The inner
 * HTML is only cut out for accepted elements, so scanning a large page stays linear-ish.
 */
export function findElements(html: string, tag: string, accept: (attributes: Attributes) => boolean = () => true): HtmlElement[] {
  const wanted = tag.toLowerCase();
  const found: HtmlElement[] = [];
  for (const match of html.matchAll(OPEN_TAG)) {
    if (match[1]?.toLowerCase() !== wanted) continue;
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
  }
  return found;
}

/** Like findElements but drops elements nested inside an earlier match (e.g. `li` in `li`). */
export function findOutermostElements(html: string, tag: string, accept?: (attributes: Attributes) => boolean): HtmlElement[] {
  const outermost: HtmlElement[] = [];
  let coveredUntil = -1;
  for (const element of findElements(html, tag, accept)) {
    if (element.start < coveredUntil) continue;
    outermost.push(element);
    coveredUntil = element.end;
  }
  return outermost;
}

/** The first element of any tag in the list matching `accept`, or undefined. */
export function findFirst(html: string, tags: readonly string[], accept: (attributes: Attributes) => boolean): HtmlElement | undefined {
  let first: HtmlElement | undefined;
  for (const tag of tags) {
    const element = findElements(html, tag, accept)[0];
    if (element && (first === undefined || element.start < first.start)) first = element;
  }
  return first;
}
