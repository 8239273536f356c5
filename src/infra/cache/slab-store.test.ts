import { describe, expect, it } from 'vitest';
import {
  cellBytesOf,
  cellClassOf,
  CELL_GROWTH,
  CELL_OVERHEAD_BYTES,
  createSlabStore,
  MAX_SLAB_BYTES,
  MIN_CELL_BYTES,
  SLAB_OVERHEAD_BYTES,
} from './slab-store.js';

describe('slab store', () => {
  it('sizes classes from MIN_CELL_BYTES by CELL_GROWTH, each the smallest that holds the text and its length', () => {
    expect(cellBytesOf(0)).toBe(MIN_CELL_BYTES);
    for (let length = 0; length < 20_000; length += 7) {
      const cellClass = cellClassOf(length);
      expect(cellBytesOf(cellClass)).toBeGreaterThanOrEqual(length + 4);
      if (cellClass > 0) expect(cellBytesOf(cellClass - 1)).toBeLessThan(length + 4);
      // At most 1/8 of a cell (and its rounding to 8 bytes) goes unused.
      if (cellClass > 0) expect(cellBytesOf(cellClass)).toBeLessThanOrEqual(Math.ceil((length + 4) * CELL_GROWTH) + 8);
    }
  });

  it('stores and reads back text, each entry in its own cell', () => {
    const slabs = createSlabStore(64 * 1024 * 1024);
    const texts = Array.from({ length: 500 }, (_, index) => `[1,"${'x'.repeat(index * 3)}",${index}]`);
    const handles = texts.map((text, index) => slabs.store(`k${index}`, text));
    expect(new Set(handles).size).toBe(texts.length);
    for (const [index, handle] of handles.entries()) expect(slabs.text(handle)).toBe(texts[index]);
  });

  it('cuts slabs of at most MAX_SLAB_BYTES, charged their cells and bookkeeping, and releases a slab with its last cell', () => {
    const slabs = createSlabStore(1024 * 1024 * 1024);
    const text = 'a'.repeat(200);
    const cellBytes = cellBytesOf(cellClassOf(text.length));
    const cells = Math.floor(MAX_SLAB_BYTES / cellBytes);
    expect(slabs.wouldAllocate(text.length)).toBe(true);
    const first = slabs.store('a', text);
    expect(slabs.chargedBytes()).toBe(cells * (cellBytes + CELL_OVERHEAD_BYTES) + SLAB_OVERHEAD_BYTES);
    expect(slabs.slabCostOf(text.length)).toBe(slabs.chargedBytes());
    expect(slabs.wouldAllocate(text.length)).toBe(false);
    const handles = [first, ...Array.from({ length: cells }, (_, index) => slabs.store(`b${index}`, text))];
    expect(slabs.slabCount()).toBe(2);
    for (const handle of handles) slabs.free(handle);
    expect(slabs.slabCount()).toBe(0);
    expect(slabs.chargedBytes()).toBe(0);
  });

  it('takes a full slab back into use when one of its cells is freed', () => {
    const slabs = createSlabStore(1024 * 1024 * 1024);
    const text = 'a'.repeat(200);
    const cells = Math.floor(MAX_SLAB_BYTES / cellBytesOf(cellClassOf(text.length)));
    const handles = Array.from({ length: cells }, (_, index) => slabs.store(`k${index}`, text));
    expect(slabs.wouldAllocate(text.length)).toBe(true);
    const freed = handles[cells - 1] ?? -1;
    slabs.free(freed);
    expect(slabs.wouldAllocate(text.length)).toBe(false);
    expect(slabs.store('again', text)).toBe(freed);
    expect(slabs.slabCount()).toBe(1);
    expect(slabs.wouldAllocate(text.length)).toBe(true);
  });

  it('reuses a freed cell before cutting a new slab, and rewrites in place only within the same class', () => {
    const slabs = createSlabStore(1024 * 1024);
    const handles = Array.from({ length: 10 }, (_, index) => slabs.store(`k${index}`, `text ${index}`));
    const charged = slabs.chargedBytes();
    slabs.free(handles[3] ?? -1);
    const again = slabs.store('k10', 'text 10');
    expect(again).toBe(handles[3]);
    expect(slabs.chargedBytes()).toBe(charged);
    expect(slabs.rewrite(again, 'text 11')).toBe(true);
    expect(slabs.text(again)).toBe('text 11');
    expect(slabs.rewrite(again, 'y'.repeat(500))).toBe(false);
    expect(slabs.text(again)).toBe('text 11');
  });

  it('names the keys of the slab with the fewest live cells, so that its owner can empty it', () => {
    const slabs = createSlabStore(1024 * 1024);
    const small = Array.from({ length: 5 }, (_, index) => slabs.store(`s${index}`, 's'.repeat(10)));
    slabs.store('big', 'b'.repeat(5000));
    expect(slabs.fewestLiveKeys()).toEqual(['big']);
    for (const handle of small.slice(0, 5)) slabs.free(handle);
    expect(slabs.fewestLiveKeys()).toEqual(['big']);
    expect(slabs.slabCount()).toBe(1);
  });

  it('refuses to free a cell twice or to read a released slab', () => {
    const slabs = createSlabStore(1024 * 1024);
    const kept = slabs.store('a', 'one');
    const freed = slabs.store('b', 'two');
    slabs.free(freed);
    expect(() => slabs.free(freed)).toThrow(/twice/);
    slabs.free(kept);
    expect(() => slabs.text(kept)).toThrow(/released/);
  });
});
