// The one way long work keeps this process's event loop free (the feed's rebuild, the lists'
// import and reload, a CardDAV body parsed or an answer rendered): it runs in slices of at most
// SLICE_BUDGET_MS and lets the loop through between them (a setImmediate turn, after the I/O
// poll, so requests and timers waiting are served). The work itself is cut into small steps
// (domain/steps.ts, or a loop over items) and knows nothing of time; the clock lives here.
//
// A task takes one slicer for its whole run, through every stage: an `await` between two stages
// lets no event through, so a clock per stage would let two stages' slices add up to one long
// hold. The clock starts when the slicer is made and again each time it lets the loop through;
// an await on I/O in between (which did let the loop turn) only makes the next pause come sooner.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Steps } from '../../domain/steps.js';

/**
 * The longest a slice holds the event loop, in ms: half the 10 ms a request may wait behind such
 * work at most (the feed's and the lists' bench targets, docs/benchmarks.md), leaving the other
 * half for a garbage collection or a step that overruns the budget.
 */
export const SLICE_BUDGET_MS = 5;

export interface Slicer {
  /** Whether this task has held the loop for the budget since it last let it through (one clock read). */
  due(): boolean;
  /** Lets the loop through now, and starts a new slice. */
  letThrough(): Promise<void>;
  /** Runs steps to their end, letting the loop through whenever a slice is spent. */
  run<T>(steps: Steps<T>): Promise<T>;
  /**
   * Calls `each` on every item in turn, letting the loop through whenever a slice is spent. Each
   * call is meant to be small (a rule indexed, a line formatted): the clock is read every
   * ITEMS_PER_CLOCK_READ items.
   */
  forEach<T>(items: Iterable<T>, each: (item: T) => void): Promise<void>;
}

/** Items `forEach` handles between two reads of the clock (a read costs about as much as a small item). */
const ITEMS_PER_CLOCK_READ = 16;

/** Lets the event loop through once: resolves on the next turn, after the I/O poll. */
export async function letLoopThrough(): Promise<void> {
  await nextTurn();
}

/** A slicer for one task; `turn` is how the loop is let through (a test may count the turns). */
export function createSlicer(turn: () => Promise<void> = letLoopThrough): Slicer {
  let sliceStart = performance.now();
  const slicer: Slicer = {
    due: () => performance.now() - sliceStart >= SLICE_BUDGET_MS,
    async letThrough() {
      await turn();
      sliceStart = performance.now();
    },
    async run(steps) {
      for (let next = steps.next(); ; next = steps.next()) {
        if (next.done === true) return next.value;
        if (slicer.due()) await slicer.letThrough();
      }
    },
    async forEach(items, each) {
      let count = 0;
      for (const item of items) {
        each(item);
        count += 1;
        if (count % ITEMS_PER_CLOCK_READ === 0 && slicer.due()) await slicer.letThrough();
      }
    },
  };
  return slicer;
}

/** Runs steps in slices, as a task of their own (createSlicer().run). */
export function runInSlices<T>(steps: Steps<T>): Promise<T> {
  return createSlicer().run(steps);
}
