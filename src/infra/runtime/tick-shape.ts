// Holds one of Node's `process.nextTick` entries for the life of the process, so that the shape
// (V8's hidden class) every entry is made with never dies.
//
// Why, measured on Node 20.20.2 (V8 11.3) with `perf` and `%DebugPrint` (docs/hot-path.md, "The
// nextTick shape"): Node makes each entry as `{ [async_id_symbol], [trigger_async_id_symbol],
// callback, args }` (lib/internal/process/task_queues.js; Node 24 adds `[kAsyncContextFrame]`),
// and V8 remembers, for each of those computed keys, the one shape it saw there, weakly. Entries live for one turn of the event loop
// only, so a full garbage collection that runs between turns can find none alive and drop their
// shapes; the next entries are made with new shapes, V8 sees a second shape at those keys and
// marks them megamorphic for good, and from then on every `nextTick` call anywhere in the
// process (Node's own stream and http code calls it several times per answer) defines its keys
// through V8's runtime. Half of the server processes started for the hot-path bench ended up so,
// at random: 10–12 % of their CPU in `Runtime_DefineKeyedOwnPropertyInLiteral`, for their whole
// life. With one entry held, 0 of 30 did (9 of 24 without, in the same experiment).
//
// How: inside a nextTick callback, `async_hooks.executionAsyncResource()` is that callback's entry
// (documented: the resource of the current execution; Node's docs discourage the API for context
// tracking, which this is not, and nothing here reads or writes the entry's fields). Holding it
// keeps its shape, and the shapes it was built through, alive. tick-shape.test.ts fails loudly
// when Node stops handing out its nextTick entries so, or when the entries made later no longer
// share the held one's shape after full collections (then holding it would do nothing).
import { executionAsyncResource } from 'node:async_hooks';

let held: object | undefined;

/** Holds one nextTick entry (once per process; later calls resolve at once). */
export function holdNextTickShape(): Promise<void> {
  if (held !== undefined) return Promise.resolve();
  return new Promise((resolve) => {
    process.nextTick(() => {
      held = executionAsyncResource();
      resolve();
    });
  });
}

/** The entry held, for the tests. */
export function heldNextTickEntry(): object | undefined {
  return held;
}
