// The one HTML reader of the three page adapters: htmlparser2 (a maintained, forgiving,
// streaming parser) builds a domhandler tree, and this module adds the few queries the parsers
// need (by class, id, tag, attribute, text). Entities, in text and attributes, are decoded by
// the parser itself, so every string read here is plain text.
//
// One bound is ours: htmlparser2 keeps its open-element stack with `Array#unshift`, which makes
// a hostile page of thousands of unclosed elements quadratic. Past MAX_DEPTH open elements a new
// element is treated as empty (its content goes to its parent), which keeps the parse linear and
// every walk of the tree shallow; real pages nest a few dozen levels.
//
// A page has a second bound, on the parse work itself (parsePage): past MAX_PAGE_NODES nodes
// (elements, texts, comments) the tokenizer is stopped and the page is "too complex", which
// the page parsers answer as error(parse). A hostile 1 MiB page of nested tags otherwise costs
// a full parse plus every query's walk over 200,000 elements (about a second of event loop);
// cut there, it costs one fraction of a parse (well under 100 ms of CPU).
import { Parser } from 'htmlparser2';
import { DomHandler, isTag, isText } from 'domhandler';
import type { AnyNode, ChildNode, Document, Element, ParentNode } from 'domhandler';
import { cleanText, MAX_TEXT_LENGTH } from './text.js';

export type HtmlElement = Element;
export type HtmlParent = ParentNode;

/** Deeper nesting than this is flattened (see above). */
export const MAX_DEPTH = 256;

/**
 * The most nodes a page may have. Real pages of the three sites hold a few thousand (their
 * bulk is scripts and styles, one text node each); a hostile megabyte of tags packs 40,000 to
 * 200,000. Past this the page is refused, so that no query pattern of the parsers can multiply
 * a hostile tree's size into seconds of event loop.
 */
export const MAX_PAGE_NODES = 20_000;

class DepthTrackingHandler extends DomHandler {
  /** Nodes added so far: the parse-work counter. */
  nodes = 0;
  /** Called once when `nodes` passes `maxNodes`. */
  onExcess: (() => void) | undefined;

  constructor(private readonly maxNodes = Number.POSITIVE_INFINITY) {
    super();
  }

  get depth(): number {
    // The stack holds the document itself under the open elements.
    return this.tagStack.length - 1;
  }

  protected override addNode(node: ChildNode): void {
    this.nodes += 1;
    if (this.nodes === this.maxNodes + 1) this.onExcess?.();
    super.addNode(node);
  }
}

class BoundedParser extends Parser {
  private flattenCurrentTag = false;

  constructor(private readonly handler: DepthTrackingHandler) {
    super(handler, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
    // Stopping the tokenizer ends the parse: end() finds it paused and reads no further.
    handler.onExcess = () => this.pause();
  }

  override onopentagname(start: number, endIndex: number): void {
    this.flattenCurrentTag = this.handler.depth >= MAX_DEPTH;
    super.onopentagname(start, endIndex);
  }

  override onclosetag(start: number, endIndex: number): void {
    this.flattenCurrentTag = false;
    super.onclosetag(start, endIndex);
  }

  // htmlparser2 asks this while opening a tag and when its open tag ends: a void element is
  // never pushed on the parser's stack, and the tree handler closes it at once.
  protected override isVoidElement(name: string): boolean {
    return this.flattenCurrentTag || super.isVoidElement(name);
  }
}

/** Parses an HTML document (or a fragment) into a tree, all of it. Never throws, whatever the input. */
export function parseHtml(html: string): Document {
  const handler = new DepthTrackingHandler();
  const parser = new BoundedParser(handler);
  parser.end(html);
  return handler.root;
}

/** An upstream page's tree, or "too complex" when it passed the parse-work bound; `nodes` is the work done. */
export type PageTree = { kind: 'tree'; root: Document; nodes: number } | { kind: 'too_complex'; nodes: number };

/** Parses an upstream page within MAX_PAGE_NODES nodes of work. Never throws, whatever the input. */
export function parsePage(html: string, maxNodes = MAX_PAGE_NODES): PageTree {
  const handler = new DepthTrackingHandler(maxNodes);
  const parser = new BoundedParser(handler);
  parser.end(html);
  return handler.nodes > maxNodes
    ? { kind: 'too_complex', nodes: handler.nodes }
    : { kind: 'tree', root: handler.root, nodes: handler.nodes };
}

/** An attribute's value (decoded), or undefined; own keys only (`constructor` is no attribute). */
export function attribute(element: Element, name: string): string | undefined {
  return Object.hasOwn(element.attribs, name) ? element.attribs[name] : undefined;
}

export function classesOf(element: Element): string[] {
  return (attribute(element, 'class') ?? '').split(/\s+/).filter((name) => name !== '');
}

export function hasClass(element: Element, className: string): boolean {
  return classesOf(element).includes(className);
}

export const byClass =
  (className: string) =>
  (element: Element): boolean =>
    hasClass(element, className);
export const byId =
  (id: string) =>
  (element: Element): boolean =>
    attribute(element, 'id') === id;
export const byTag =
  (...tags: string[]) =>
  (element: Element): boolean =>
    tags.includes(element.name);

/** Every element under `root` (not `root` itself) matching `predicate`, in document order. */
export function findAll(root: ParentNode, predicate: (element: Element) => boolean): Element[] {
  const found: Element[] = [];
  const pending: AnyNode[] = [...root.children].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (!isTag(node)) continue;
    if (predicate(node)) found.push(node);
    for (let child = node.children.length - 1; child >= 0; child -= 1) {
      const childNode = node.children[child];
      if (childNode !== undefined) pending.push(childNode);
    }
  }
  return found;
}

export function findFirst(root: ParentNode, predicate: (element: Element) => boolean): Element | null {
  const pending: AnyNode[] = [...root.children].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (!isTag(node)) continue;
    if (predicate(node)) return node;
    for (let child = node.children.length - 1; child >= 0; child -= 1) {
      const childNode = node.children[child];
      if (childNode !== undefined) pending.push(childNode);
    }
  }
  return null;
}

/** How many elements a look inside one item (a comment, a row, a cell) covers: real ones hold a few dozen. */
export const ITEM_ELEMENTS = 200;

/**
 * Like `findFirst`, but looks at no more than `maxElements` elements: a bounded look inside one
 * item (a comment, a row) that a hostile page may have made contain the whole rest of the page.
 */
export function findFirstNear(
  root: ParentNode,
  predicate: (element: Element) => boolean,
  maxElements: number,
): Element | null {
  // A walk by child index, copying no child list: an element that holds 40,000 children (a
  // flattened hostile page) costs what the budget allows, not a copy of all of them.
  const stack: Array<{ parent: ParentNode; next: number }> = [{ parent: root, next: 0 }];
  let budget = maxElements;
  // Texts and comments cost no element of the budget, but their number is bounded too.
  let visits = 4 * maxElements;
  while (budget > 0 && visits > 0) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) return null;
    const node = frame.parent.children[frame.next];
    if (node === undefined) {
      stack.pop();
      continue;
    }
    frame.next += 1;
    visits -= 1;
    if (!isTag(node)) continue;
    budget -= 1;
    if (predicate(node)) return node;
    if (node.children.length > 0) stack.push({ parent: node, next: 0 });
  }
  return null;
}

/** The nearest ancestor matching `predicate`, or null. */
export function closest(element: Element, predicate: (element: Element) => boolean): Element | null {
  for (let node = element.parent; node !== null; node = node.parent) {
    if (isTag(node) && predicate(node)) return node;
  }
  return null;
}

/** Child elements only, without text nodes. */
export function childElements(element: ParentNode): Element[] {
  return element.children.filter(isTag);
}

export function nextElementSibling(element: Element): Element | null {
  for (let node = element.next; node !== null; node = node.next) if (isTag(node)) return node;
  return null;
}

export function previousElementSibling(element: Element): Element | null {
  for (let node = element.prev; node !== null; node = node.prev) if (isTag(node)) return node;
  return null;
}

/** Text joins across these without a space ("mer<span>de</span>" stays one word). */
const INLINE_TAGS = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'em',
  'font',
  'i',
  'mark',
  'q',
  's',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'u',
]);
/** Their content is never text a user wrote. */
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'textarea', 'iframe', 'svg', 'head']);

/**
 * The text under a node, decoded, not yet cleaned; null once it passes `maxChars` characters or
 * as many nodes (lets a parser try every element as a short label in linear time), or with
 * `truncate` the text read until then. Block boundaries become spaces; inline elements join
 * without one.
 */
export function boundedText(
  root: AnyNode,
  maxChars: number,
  skip?: (element: Element) => boolean,
  truncate = false,
): string | null {
  if (isText(root)) return root.data.length <= maxChars ? root.data : truncate ? root.data.slice(0, maxChars) : null;
  if (!isTag(root) && !('children' in root)) return '';
  const parts: string[] = [];
  let length = 0;
  let budget = maxChars;
  const overflow = (): string | null => (truncate ? parts.join('') : null);
  // A truncated read only ever needs the first `budget` children of a wide element.
  const childrenToRead = (children: readonly AnyNode[]): AnyNode[] =>
    truncate ? children.slice(0, Math.max(0, budget)) : [...children];
  const rootChildren = 'children' in root ? root.children : [];
  if (!truncate && rootChildren.length > budget) return null;
  const pending: (AnyNode | string)[] = childrenToRead(rootChildren).reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node === 'string') {
      parts.push(node);
      continue;
    }
    budget -= 1;
    if (budget < 0) return overflow();
    if (isText(node)) {
      length += node.data.length;
      if (length > maxChars) {
        if (truncate) parts.push(node.data.slice(0, Math.max(0, maxChars - (length - node.data.length))));
        return overflow();
      }
      parts.push(node.data);
    } else if (isTag(node)) {
      if (SKIPPED_TAGS.has(node.name) || (skip !== undefined && skip(node))) continue;
      if (!truncate && node.children.length > budget) return null;
      const separator = INLINE_TAGS.has(node.name) ? '' : ' ';
      pending.push(separator);
      const children = childrenToRead(node.children);
      for (let child = children.length - 1; child >= 0; child -= 1) {
        const childNode = children[child];
        if (childNode !== undefined) pending.push(childNode);
      }
      pending.push(separator);
    }
  }
  return parts.join('');
}

/** The whole text under a node, decoded, not yet cleaned. */
export function rawText(root: AnyNode, skip?: (element: Element) => boolean): string {
  return boundedText(root, Number.POSITIVE_INFINITY, skip) ?? '';
}

/** How much of a subtree a field's text is read from: enough for any capped field, bounded on hostile pages. */
const FIELD_TEXT_READ = MAX_TEXT_LENGTH * 8;

/** The clean, capped text under a node: what a parser puts in a field. */
export function textOf(root: AnyNode | null, skip?: (element: Element) => boolean): string {
  return root === null ? '' : cleanText(boundedText(root, FIELD_TEXT_READ, skip, true) ?? '');
}

/** The clean text under a node when it is short (at most `maxChars`), else null. */
export function shortTextOf(root: AnyNode, maxChars: number): string | null {
  const text = boundedText(root, maxChars * 4);
  if (text === null) return null;
  const clean = cleanText(text, maxChars + 1);
  return clean.length > maxChars ? null : clean;
}

/** An element's own text: its text children only, not its descendants' ("Démarchage" of `<th>Démarchage <span>(9)</span></th>`). */
export function ownTextOf(element: Element): string {
  return cleanText(
    element.children
      .filter(isText)
      .map((node) => node.data)
      .join(' '),
  );
}

/** Plain text from a string that may hold markup or entities (an API field): parsed like a page, then cleaned. */
export function plainText(fragment: string, maxLength = MAX_TEXT_LENGTH): string {
  if (!/[<&]/.test(fragment)) return cleanText(fragment, maxLength);
  return cleanText(rawText(parseHtml(fragment)), maxLength);
}
