// Work cut into steps: a generator whose every `yield` marks a point where whoever runs it may
// pause. A step knows nothing of time or of the event loop; it only keeps each stretch of work
// between two yields small. infra/runtime/event-loop-slices.ts runs steps in slices with the
// loop let through between them; `runToEnd` runs them at once. The result is the same either way.

/** A computation cut into steps, ending with its result. */
export type Steps<T> = Generator<void, T, void>;

/** Runs steps to their end without pausing. */
export function runToEnd<T>(steps: Steps<T>): T {
  let next = steps.next();
  while (next.done !== true) next = steps.next();
  return next.value;
}
