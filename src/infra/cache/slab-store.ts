// Bytes kept outside the JS heap, in slabs: a few large Buffers, each cut into cells of one
// size, instead of one string (or one Buffer) per entry. The per-source cache keeps each
// entry's stored form here (memory-cache.ts), so what it holds neither churns through V8's old
// generation (where evicted entries leave half-empty pages and the heap grows by a factor of
// what it holds: docs/cache.md, "What the runtime keeps") nor pays a Buffer's native
// bookkeeping (about 770 bytes) per entry of a few hundred bytes.
//
// Cells come in size classes growing by CELL_GROWTH (at most 1/8 of a cell is unused), and a
// slab holds cells of one class. A slab whose last cell is freed is released at once, so a
// class no longer written gives its memory back. Only Node's public Buffer API is used
// (`Buffer.allocUnsafeSlow`, `write`, `toString`).
//
// The store does not decide what to keep: its owner (the LRU) frees cells, and asks before
// allocating whether a new slab would be needed (`wouldAllocate`) and what it would cost
// (`slabCostOf`), so that it can evict first.

/** The smallest cell, in bytes. */
export const MIN_CELL_BYTES = 64;
/** Each size class's cells are this much larger than the previous class's (rounded up to 8 bytes). */
export const CELL_GROWTH = 1.125;
/** A slab is never cut larger than this (a class whose cell is larger gets slabs of one cell). */
export const MAX_SLAB_BYTES = 1024 * 1024;
/** Bytes of each cell that hold the length of what it stores. */
const LENGTH_BYTES = 4;
/**
 * Charged per slab beyond its cells: its block's native bookkeeping (about 770 bytes measured for
 * a Buffer, docs/cache.md) and the slab object; plus CELL_OVERHEAD_BYTES per cell for its slots in
 * the slab's key list and free list (a JS array element each).
 */
export const SLAB_OVERHEAD_BYTES = 1024;
export const CELL_OVERHEAD_BYTES = 16;
/** A handle is slab id × HANDLE_CELLS + cell; a slab has at most MAX_SLAB_BYTES / MIN_CELL_BYTES cells. */
const HANDLE_CELLS = 65_536;

/** The cell size of a class. */
export function cellBytesOf(cellClass: number): number {
  return Math.ceil((MIN_CELL_BYTES * CELL_GROWTH ** cellClass) / 8) * 8;
}

/** The smallest class whose cells hold `bytes` of content (its length prefix included). */
export function cellClassOf(contentBytes: number): number {
  const bytes = contentBytes + LENGTH_BYTES;
  let cellClass = Math.max(0, Math.ceil(Math.log(bytes / MIN_CELL_BYTES) / Math.log(CELL_GROWTH)));
  while (cellClass > 0 && cellBytesOf(cellClass - 1) >= bytes) cellClass -= 1;
  while (cellBytesOf(cellClass) < bytes) cellClass += 1;
  return cellClass;
}

interface Slab {
  readonly id: number;
  readonly cellClass: number;
  readonly cellBytes: number;
  readonly bytes: Buffer;
  /** Per cell, the owner's key for what it holds (undefined when the cell is free). */
  readonly keys: (string | undefined)[];
  /** Free cells, as a stack. */
  readonly free: number[];
  live: number;
}

export interface SlabStore {
  /** True when storing `length` bytes needs a new slab (no free cell of its class). */
  wouldAllocate(length: number): boolean;
  /** What a new slab for `length` bytes would be charged. */
  slabCostOf(length: number): number;
  /** Stores ASCII text (one byte per character) under `key`, in a free cell or a new slab; returns its handle. */
  store(key: string, text: string): number;
  /** Writes text again in the same cell when it still fits its class: true when it did. */
  rewrite(handle: number, text: string): boolean;
  /** The text a handle holds. */
  text(handle: number): string;
  /** Frees a handle's cell (its slab is released with its last cell). */
  free(handle: number): void;
  /** The keys held by the slab with the fewest live cells (so that its owner can drop them and release it); empty when there is no slab. */
  fewestLiveKeys(): string[];
  /** Bytes charged for every slab held: cells, their slots and the slab's own bookkeeping. */
  chargedBytes(): number;
  slabCount(): number;
}

/**
 * A slab store whose slabs are cut from about `budget / 128` bytes (a power of two, at most
 * MAX_SLAB_BYTES), so that the one partly used slab per size class is a small part of the budget.
 */
export function createSlabStore(budget: number): SlabStore {
  const baseSlabBytes = Math.min(MAX_SLAB_BYTES, 2 ** Math.floor(Math.log2(Math.max(MIN_CELL_BYTES, budget / 128))));
  const slabs: (Slab | undefined)[] = [];
  const freeIds: number[] = [];
  /** Per class, its slabs with a free cell. */
  const open: Slab[][] = [];
  let charged = 0;

  const cellsOf = (cellBytes: number): number => Math.max(1, Math.floor(baseSlabBytes / cellBytes));
  const costOf = (cellBytes: number): number => {
    const cells = cellsOf(cellBytes);
    return cells * (cellBytes + CELL_OVERHEAD_BYTES) + SLAB_OVERHEAD_BYTES;
  };
  const openOf = (cellClass: number): Slab[] => (open[cellClass] ??= []);

  function slabOf(handle: number): Slab {
    const slab = slabs[Math.floor(handle / HANDLE_CELLS)];
    if (slab === undefined) throw new Error('a handle to a released slab');
    return slab;
  }

  function allocate(cellClass: number): Slab {
    const cellBytes = cellBytesOf(cellClass);
    const cells = cellsOf(cellBytes);
    const id = freeIds.pop() ?? slabs.length;
    // Not from Node's shared pool (allocUnsafeSlow), so a released slab frees its own block.
    const slab: Slab = {
      id,
      cellClass,
      cellBytes,
      bytes: Buffer.allocUnsafeSlow(cells * cellBytes),
      keys: new Array<string | undefined>(cells).fill(undefined),
      free: [],
      live: 0,
    };
    for (let cell = cells - 1; cell >= 0; cell -= 1) slab.free.push(cell);
    slabs[id] = slab;
    openOf(cellClass).push(slab);
    charged += costOf(cellBytes);
    return slab;
  }

  function release(slab: Slab): void {
    const list = openOf(slab.cellClass);
    const at = list.indexOf(slab);
    if (at >= 0) list.splice(at, 1);
    slabs[slab.id] = undefined;
    freeIds.push(slab.id);
    charged -= costOf(slab.cellBytes);
  }

  function write(slab: Slab, cell: number, text: string): void {
    const offset = cell * slab.cellBytes;
    slab.bytes.writeUInt32LE(text.length, offset);
    slab.bytes.write(text, offset + LENGTH_BYTES, text.length, 'latin1');
  }

  return {
    wouldAllocate: (length) => (open[cellClassOf(length)]?.length ?? 0) === 0,
    slabCostOf: (length) => costOf(cellBytesOf(cellClassOf(length))),
    store(key, text) {
      const cellClass = cellClassOf(text.length);
      const list = openOf(cellClass);
      const slab = list[list.length - 1] ?? allocate(cellClass);
      const cell = slab.free.pop();
      if (cell === undefined) throw new Error('an open slab without a free cell');
      // A slab is in its class's open list exactly while it has a free cell.
      if (slab.free.length === 0) list.pop();
      slab.live += 1;
      slab.keys[cell] = key;
      write(slab, cell, text);
      return slab.id * HANDLE_CELLS + cell;
    },
    rewrite(handle, text) {
      const slab = slabOf(handle);
      if (cellClassOf(text.length) !== slab.cellClass) return false;
      write(slab, handle % HANDLE_CELLS, text);
      return true;
    },
    text(handle) {
      const slab = slabOf(handle);
      const offset = (handle % HANDLE_CELLS) * slab.cellBytes;
      const start = offset + LENGTH_BYTES;
      return slab.bytes.toString('latin1', start, start + slab.bytes.readUInt32LE(offset));
    },
    free(handle) {
      const slab = slabOf(handle);
      const cell = handle % HANDLE_CELLS;
      if (slab.keys[cell] === undefined) throw new Error('a cell freed twice');
      slab.keys[cell] = undefined;
      slab.free.push(cell);
      slab.live -= 1;
      if (slab.live === 0) {
        release(slab);
        return;
      }
      // Its first free cell: it was full, so it was not in the open list.
      if (slab.free.length === 1) openOf(slab.cellClass).push(slab);
    },
    fewestLiveKeys() {
      let fewest: Slab | undefined;
      for (const slab of slabs)
        if (slab !== undefined && (fewest === undefined || slab.live < fewest.live)) fewest = slab;
      return fewest === undefined ? [] : fewest.keys.filter((key): key is string => key !== undefined);
    },
    chargedBytes: () => charged,
    slabCount: () => slabs.length - freeIds.length,
  };
}
