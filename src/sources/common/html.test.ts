import { describe, expect, it } from 'vitest';
import { byClass, byId, childElements, findAll, findFirst, nextElementSibling, parseHtml, rawText, shortRawText } from './html.js';
import { cleanText } from './text.js';

describe('parseHtml', () => {
  it('nests elements and finds them by class and id whatever the attribute order and quoting', () => {
    const root = parseHtml(`<DIV data-x='1' CLASS="a b" id=main><p class=b>one</p></div>`);
    const main = findFirst(root, byId('main'));
    expect(main?.tag).toBe('div');
    expect(main?.classes).toEqual(['a', 'b']);
    expect(findAll(root, byClass('b')).map((element) => element.tag)).toEqual(['div', 'p']);
  });

  it('closes an element at its matching end tag even with nested same-name elements', () => {
    const root = parseHtml('<div class="item"><div>inner</div><p class="t">text</p></div><p class="t">outside</p>');
    const item = findFirst(root, byClass('item'));
    expect(item === null ? [] : findAll(item, byClass('t')).map((element) => rawText(element))).toEqual(['text']);
  });

  it('ignores stray end tags and closes p, li and td implicitly', () => {
    const root = parseHtml('</span><ul><li>a<li>b</ul><p>one<div>two</div><table><tr><td>x<td>y</table>');
    expect(findAll(root, (element) => element.tag === 'li')).toHaveLength(2);
    const div = findFirst(root, (element) => element.tag === 'div');
    expect(div?.parent?.tag).toBe('#root');
    const firstCell = findFirst(root, (element) => element.tag === 'td');
    expect(firstCell === null ? null : nextElementSibling(firstCell)?.tag).toBe('td');
  });

  it('drops script, style and comment bodies even when they contain markup', () => {
    const root = parseHtml('<script>if (a<b) { x = "<div id=\'z\'>" }</script><!-- <div id="z"> --><style>p{}</style><div id="y">ok</div>');
    expect(findFirst(root, byId('z'))).toBeNull();
    expect(childElements(root).map((element) => element.tag)).toEqual(['script', 'style', 'div']);
  });

  it('joins inline elements without a space and blocks with one', () => {
    const root = parseHtml('<p>mer<span>de</span> et<br>fin</p><p>autre</p>');
    expect(cleanText(rawText(root))).toBe('merde et fin autre');
  });

  it('decodes entities in attribute values', () => {
    const root = parseHtml('<div data-v="a&amp;b"></div>');
    expect(findFirst(root, (element) => element.tag === 'div')?.attributes.get('data-v')).toBe('a&b');
  });

  it('treats tags named after Object properties as ordinary tags', () => {
    const root = parseHtml('<constructor><tostring>x</tostring></constructor><a_b>y</a_b>');
    expect(childElements(root).map((element) => element.tag)).toEqual(['constructor', 'a_b']);
  });

  it('stays bounded on very deep nesting', () => {
    const root = parseHtml('<div>'.repeat(10_000) + 'deep');
    expect(cleanText(rawText(root))).toBe('deep');
  });

  it('gives up on long texts in shortRawText', () => {
    const root = parseHtml('<p>short</p><p>' + 'x'.repeat(500) + '</p>');
    const [short, long] = childElements(root);
    expect(short === undefined ? null : shortRawText(short, 100)).toBe('short');
    expect(long === undefined ? 'missing' : shortRawText(long, 100)).toBeNull();
  });
});
