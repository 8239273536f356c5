// What the CLI, the admin API and the composition root ask of the lists' store, whichever it is
// (file-list-store.ts, redis-list-store.ts), and the parts both share: the rules in force as a
// swappable index (a reload builds a new one in slices, then swaps it, so a reader never sees
// half a file), and CSV read in slices that yield to the event loop (an import of 100,000 lines
// never holds it for more than a slice at a time: infra/runtime/event-loop-slices.ts).
import { getHeapStatistics } from 'node:v8';
import type { ListMatch, ListName, ListRule, OperatorLists } from '../../domain/ports/operator-lists.js';
import { createRuleIndex, type RuleIndex } from '../../domain/lists/rule-index.js';
import {
  csvRecords,
  ListCsvError,
  readHeader,
  readRuleRecord,
  EXPORT_COLUMNS,
  type RowOptions,
} from '../../domain/lists/list-csv.js';
import { createSlicer } from '../runtime/event-loop-slices.js';

/**
 * The most rules the lists hold, and so the most an import brings (docs/lists.md, "Size"). A
 * rule takes about 170 bytes of heap once held, and up to about 1 KiB while an import is read,
 * merged, indexed and written: 200,000 rules fit the heap the image gives a server (512 MiB at
 * the default CACHE_MAX_MB) beside a full cache. A 32 MiB body could hold 1.3 million short rules.
 */
export const MAX_RULES = 200_000;
/** Heap one imported rule may take while the import runs (measured peak about 400 bytes, twice that for the request's own copies). */
export const IMPORT_HEAP_BYTES_PER_RULE = 1024;

/** The lists would exceed what they may hold: a 413, nothing changed. */
export class ListsTooLarge extends Error {
  override name = 'ListsTooLarge';
}

/** The data lines of a CSV text (header, blank and comment lines included: an upper bound), counted without reading them. */
export function countCsvLines(text: string): number {
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
  return lines + 1;
}

/**
 * Refuses, before anything is read, an import whose rules with those already held would exceed
 * MAX_RULES, or that the heap left now could not take (a server started with a small limit).
 */
export function checkImportSize(importLines: number, heldRules: number): void {
  const rules = Math.max(0, importLines - 1);
  if (rules > MAX_RULES)
    throw new ListsTooLarge(
      `the import holds up to ${rules} rules; an import brings at most ${MAX_RULES} (split it, or use fewer, broader prefix rules)`,
    );
  if (rules + heldRules > MAX_RULES)
    throw new ListsTooLarge(
      `the lists hold ${heldRules} rules and the import up to ${rules}; the lists hold at most ${MAX_RULES}`,
    );
  const heap = getHeapStatistics();
  const free = heap.heap_size_limit - heap.used_heap_size;
  const needed = (rules + heldRules) * IMPORT_HEAP_BYTES_PER_RULE;
  if (needed > free)
    throw new ListsTooLarge(
      `the import of up to ${rules} rules needs about ${Math.ceil(needed / 1048576)} MiB of heap, and the service has ${Math.floor(free / 1048576)} MiB free now; import it in smaller parts`,
    );
}

export interface ListStoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ListStore extends OperatorLists {
  readonly kind: 'file' | 'redis';
  /** Where the rules live, for messages (the file's path, or the Redis key). */
  readonly location: string;
  /** Adds a rule, or replaces the one with the same spelling (`replaced: true`). */
  put(rule: ListRule): Promise<{ replaced: boolean }>;
  /** Removes a rule; false when there was none. */
  remove(rule: string): Promise<boolean>;
  /** Adds or replaces every rule given, all at once (checked beforehand by the caller). */
  importRules(rules: readonly ListRule[]): Promise<{ added: number; replaced: number }>;
  /**
   * Replaces every rule held with `rules` (checked beforehand by the caller), at once: a restore.
   * Every instance goes from the old rules to the new ones in one change. `before`: the rules held
   * until then.
   */
  replaceRules(rules: readonly ListRule[]): Promise<{ before: number }>;
  /** Every rule held, expired ones included. */
  storedRules(): ListRule[];
  /** The rules as the index holds them (for `check`'s explanation). */
  index(): RuleIndex;
  /** Rules in force per list (the `phone_rep_list_rules` gauge). */
  countByList(now?: number): Record<ListName, number>;
  /** Reads the store again now, whatever the watchers say. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The rules in force as a swappable index with a version of its own: `swap` bumps it, so a new
 * index (whose own count starts again) never repeats a version an earlier one gave.
 */
export interface LiveIndex extends OperatorLists {
  current(): RuleIndex;
  swap(next: RuleIndex): void;
}

/**
 * Reloads one at a time: a request made while one runs asks for one more run after it (a change
 * seen during a read is never lost), and joins the run in progress. `running()` is the run in
 * progress, if any. `stopped()` ends the repeats once the store is closed.
 */
export interface SerialReloader {
  reload(): Promise<void>;
  running(): Promise<void> | undefined;
}

export function createSerialReloader(load: () => Promise<void>, stopped: () => boolean): SerialReloader {
  let current: Promise<void> | undefined;
  let again = false;
  return {
    reload() {
      if (current !== undefined) {
        again = true;
        return current;
      }
      current = (async () => {
        do {
          again = false;
          await load();
        } while (again && !stopped());
        current = undefined;
      })();
      return current;
    },
    running: () => current,
  };
}

export function createLiveIndex(initial: RuleIndex = createRuleIndex()): LiveIndex {
  let index = initial;
  let swaps = 0;
  return {
    current: () => index,
    swap(next) {
      index = next;
      swaps += 1;
    },
    match: (e164: string, now?: number): ListMatch | null => index.match(e164, now),
    activeRules: (now?: number) => index.activeRules(now),
    version: (now?: number) => `${swaps}.${index.version(now)}`,
  };
}

/** A CSV text as rules, read in slices; throws ListCsvError naming the first bad line (nothing is kept), or the line past `maxRules`. */
export async function readListCsvInSlices(
  text: string,
  options: RowOptions & { maxRules?: number },
): Promise<ListRule[]> {
  const rules: ListRule[] = [];
  let columns: ReturnType<typeof readHeader> | undefined;
  await createSlicer().forEach(csvRecords(text), ({ fields, number }) => {
    if (columns === undefined) {
      columns = readHeader(fields, number);
      return;
    }
    if (options.maxRules !== undefined && rules.length >= options.maxRules)
      throw new ListCsvError(number, `more than ${options.maxRules} rules: the lists hold at most ${options.maxRules}`);
    rules.push(readRuleRecord(fields, number, columns, options));
  });
  if (columns === undefined)
    throw new ListCsvError(1, `no header: the first line is ${EXPORT_COLUMNS.join(',')}`, 'header');
  return rules;
}

/** A new index holding `base`'s rules and then `rules` (later ones replacing earlier ones), built in slices. */
export async function buildIndexInSlices(
  rules: Iterable<ListRule>,
  base?: Iterable<ListRule>,
): Promise<{ index: RuleIndex; replaced: number }> {
  const index = createRuleIndex();
  const slicer = createSlicer();
  let replaced = 0;
  if (base !== undefined) await slicer.forEach(base, (rule) => index.set(rule));
  await slicer.forEach(rules, (rule) => {
    if (index.set(rule)) replaced += 1;
  });
  return { index, replaced };
}

/** Calls `each` on every item, yielding to the event loop between slices. */
export async function forEachInSlices<T>(items: Iterable<T>, each: (item: T) => void): Promise<void> {
  await createSlicer().forEach(items, each);
}

/** The rules by their spelling (later ones replacing earlier ones), built in slices. */
export async function mapRulesInSlices(rules: Iterable<ListRule>): Promise<Map<string, ListRule>> {
  const byRule = new Map<string, ListRule>();
  await forEachInSlices(rules, (rule) => byRule.set(rule.rule, rule));
  return byRule;
}

/**
 * CSV text of many rules as chunks, made in slices (each slice's lines joined as it ends): a
 * writer hands them on one by one, so no join or encoding of the whole text holds the loop.
 */
export async function formatCsvChunksInSlices(
  rules: Iterable<ListRule>,
  format: (rule: ListRule) => string,
  header: string,
): Promise<string[]> {
  const chunks: string[] = [];
  let lines: string[] = [header];
  const slicer = createSlicer();
  for (const rule of rules) {
    lines.push(format(rule));
    if (lines.length % 64 === 0 && slicer.due()) {
      chunks.push(`${lines.join('\n')}\n`);
      lines = [];
      await slicer.letThrough();
    }
  }
  if (lines.length > 0) chunks.push(`${lines.join('\n')}\n`);
  return chunks;
}

/** CSV text of many rules, made in slices (formatCsvChunksInSlices, joined). */
export async function formatCsvInSlices(
  rules: Iterable<ListRule>,
  format: (rule: ListRule) => string,
  header: string,
): Promise<string> {
  return (await formatCsvChunksInSlices(rules, format, header)).join('');
}

/** The error a store's write gives when it cannot be done (Redis down, the file's directory not writable). */
export class ListStoreUnavailable extends Error {
  override name = 'ListStoreUnavailable';
}
