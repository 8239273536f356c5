// Building the console's DOM: elements made with their text as text (never HTML), so nothing an
// API answer holds (a label, a comment) can become markup; no inline style, so the CSP's
// `style-src 'self'` holds.
type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

/** `h('button', { type: 'button', onclick: … }, 'Save')`; a false or absent attribute is left out. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with its attributes. */
export function s(
  tag: keyof SVGElementTagNameMap,
  attributes: Record<string, string | number> = {},
  ...children: Child[]
): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  append(element, children);
  return element;
}

/** Replaces the children of `parent`. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A table with a caption, a header row and one row per item. */
export function table(
  caption: string,
  headers: readonly string[],
  rows: ReadonlyArray<readonly Child[]>,
  attributes: Attributes = {},
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      attributes,
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
      h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
    ),
  );
}

/** A label and its control, tied by id. */
export function field(id: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
  control.id = id;
  if (hint !== undefined) control.setAttribute('aria-describedby', `${id}-hint`);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    hint === undefined ? null : h('p', { class: 'hint', id: `${id}-hint` }, hint),
  );
}

/** A select of `options` ([value, text]), `chosen` selected. */
export function select(
  name: string,
  options: ReadonlyArray<readonly [string, string]>,
  chosen = '',
): HTMLSelectElement {
  const element = h('select', { name });
  for (const [value, text] of options) {
    const option = h('option', { value }, text);
    if (value === chosen) option.selected = true;
    element.appendChild(option);
  }
  return element;
}
