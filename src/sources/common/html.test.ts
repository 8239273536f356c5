import { describe, expect, it } from 'vitest';
import {
  attribute,
  byClass,
  byId,
  byTag,
  childElements,
  classesOf,
  findAll,
  findFirst,
  findFirstNear,
  MAX_DEPTH,
  MAX_PAGE_NODES,
  nextElementSibling,
  ownTextOf,
  parseHtml,
  parsePage,
  plainText,
  rawText,
  shortTextOf,
  textOf,
} from './html.js';

describe('parseHtml', () => {
  it('nests elements and finds them by class and id whatever the attribute order and quoting', () => {
    const root = parseHtml(`<DIV data-x='1' CLASS="a b" id=main><p class=b>one</p></div>`);
    const main = findFirst(root, byId('main'));
    expect(main?.name).toBe('div');
    expect(main === null ? [] : classesOf(main)).toEqual(['a', 'b']);
    expect(findAll(root, byClass('b')).map((element) => element.name)).toEqual(['div', 'p']);
  });

  it('closes an element at its matching end tag even with nested same-name elements', () => {
    const root = parseHtml('<div class="item"><div>inner</div><p class="t">text</p></div><p class="t">outside</p>');
    const item = findFirst(root, byClass('item'));
    expect(item === null ? [] : findAll(item, byClass('t')).map((element) => textOf(element))).toEqual(['text']);
  });

  it('ignores stray end tags and closes p, li and td implicitly', () => {
    const root = parseHtml('</span><ul><li>a<li>b</ul><p>one<div>two</div><table><tr><td>x<td>y</table>');
    expect(findAll(root, byTag('li'))).toHaveLength(2);
    const div = findFirst(root, byTag('div'));
    expect(div?.parent?.type).toBe('root');
    const firstCell = findFirst(root, byTag('td'));
    expect(firstCell === null ? null : nextElementSibling(firstCell)?.name).toBe('td');
  });

  it('drops script, style and comment bodies from the text, even when they contain markup', () => {
    const root = parseHtml(
      '<script>if (a<b) { x = "<div id=\'z\'>" }</script><!-- <div id="z"> --><style>p{}</style><div id="y">ok</div>',
    );
    expect(findFirst(root, byId('z'))).toBeNull();
    expect(childElements(root).map((element) => element.name)).toEqual(['script', 'style', 'div']);
    expect(textOf(root)).toBe('ok');
  });

  it('joins inline elements without a space and blocks with one', () => {
    const root = parseHtml('<p>mer<span>de</span> et<br>fin</p><p>autre</p>');
    expect(textOf(root)).toBe('merde et fin autre');
  });

  it('decodes &oelig; as œ, and &uuml;, &deg;, &eacute;, numeric and hex references in text', () => {
    expect(textOf(parseHtml('<p>c&oelig;ur, M&uuml;ller, 30&deg;, &eacute;t&eacute;, &#233;&#xE9;&#x1F600;</p>'))).toBe(
      'cœur, Müller, 30°, été, éé😀',
    );
  });

  it('decodes entities in attribute values', () => {
    const div = findFirst(parseHtml('<div data-v="a&amp;b&oelig;"></div>'), byTag('div'));
    expect(div === null ? null : attribute(div, 'data-v')).toBe('a&bœ');
  });

  it('reads no attribute named after an Object property that the element does not carry', () => {
    const div = findFirst(parseHtml('<div class="x"></div>'), byTag('div'));
    expect(div === null ? 'missing' : attribute(div, 'constructor')).toBeUndefined();
  });

  it('treats tags named after Object properties as ordinary tags', () => {
    const root = parseHtml('<constructor><tostring>x</tostring></constructor><a_b>y</a_b>');
    expect(childElements(root).map((element) => element.name)).toEqual(['constructor', 'a_b']);
  });

  it('flattens nesting deeper than its bound and keeps every text', () => {
    const root = parseHtml(`${'<div>'.repeat(10_000)}deep`);
    expect(rawText(root).trim()).toBe('deep');
    let depth = 0;
    for (let element = findFirst(root, byTag('div')); element !== null; element = childElements(element)[0] ?? null)
      depth += 1;
    expect(depth).toBeLessThanOrEqual(MAX_DEPTH + 1);
  });

  it('parses 512 KiB of nested unclosed markup without going quadratic', () => {
    // Each of these, 35 000 levels deep, costs minutes in a parser that shifts its whole stack.
    for (const unit of ['<table><tr><td>', '<b><i>', '<p><div>']) {
      const root = parseHtml(`${unit.repeat(Math.floor((512 * 1024) / unit.length))}end`);
      expect(rawText(root).trim()).toBe('end');
    }
  }, 60_000);

  it('gives up on long texts in shortTextOf', () => {
    const [short, long] = childElements(parseHtml(`<p>short</p><p>${'x'.repeat(500)}</p>`));
    expect(short === undefined ? null : shortTextOf(short, 100)).toBe('short');
    expect(long === undefined ? 'missing' : shortTextOf(long, 100)).toBeNull();
  });

  it('reads a field text from a bounded part of a huge subtree, never the whole of it', () => {
    const root = parseHtml(`<p>start ${'<i>x</i>'.repeat(50_000)}</p>`);
    const text = textOf(root);
    expect(text.startsWith('start x')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(1000);
  });

  it("reads an element's own text without its children's", () => {
    const th = findFirst(parseHtml('<th>Démarchage <span class="small">(9)</span></th>'), byTag('th'));
    expect(th === null ? null : ownTextOf(th)).toBe('Démarchage');
  });

  it('keeps raw text decoded but not cleaned, for the parsers to clean', () => {
    expect(rawText(parseHtml('<p>a&nbsp;&nbsp;b</p>'))).toBe(' a\u00a0\u00a0b ');
  });
});

describe('plainText', () => {
  it('strips markup and decodes entities in an API string', () => {
    expect(plainText('Encore <b>eux</b> &amp; c&oelig;ur')).toBe('Encore eux & cœur');
  });

  it('leaves a text without markup or entities as it is, cleaned', () => {
    expect(plainText('  a  b\u202e ')).toBe('a b');
  });
});

describe('parsePage: the parse-work bound', () => {
  const MIB = 1024 * 1024;

  it('stops a megabyte of nested tags as soon as it passes MAX_PAGE_NODES nodes, and says so', () => {
    for (const unit of ['<div>', '<div class="comment-item">', '<table><tr><td>', '<b>x</b>', '<!---->x']) {
      const tree = parsePage(unit.repeat(Math.floor(MIB / unit.length)));
      expect(tree.kind, unit).toBe('too_complex');
      // The counter is the work done: the tokenizer stopped at the node that passed the bound.
      expect(tree.nodes, unit).toBe(MAX_PAGE_NODES + 1);
    }
  });

  it('parses a page within the bound whole, and counts its nodes', () => {
    const tree = parsePage('<p>a</p>'.repeat(100));
    expect(tree.kind).toBe('tree');
    expect(tree.nodes).toBe(200);
    if (tree.kind === 'tree') expect(findAll(tree.root, byTag('p'))).toHaveLength(100);
    expect(parsePage('<p>a</p>'.repeat(10), 19).kind).toBe('too_complex');
  });

  it('findFirstNear looks at its budget of elements, not at every child of a flattened element', () => {
    const root = parseHtml(`<div id="top">${'<i></i>'.repeat(40_000)}<b>late</b></div>`);
    const top = findFirst(root, byId('top'));
    expect(top === null ? -1 : childElements(top).length).toBe(40_001);
    expect(top === null ? 'missing' : findFirstNear(top, byTag('b'), 200)).toBeNull();
    expect(top === null ? null : findFirstNear(top, byTag('i'), 200)?.name).toBe('i');
  });
});
