// Runs async work one piece at a time, in the order asked: each piece starts once the one before
// it has settled, whether it succeeded or failed. The file stores (lists, reports) put every
// read-modify-write of their file through one, so two changes of one process never interleave.

/** A queue of one: `exclusive(run)` runs `run` after everything queued before it, and answers its result. */
export function oneAtATime(): <T>(run: () => Promise<T>) => Promise<T> {
  let queue: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const next = queue.then(run, run);
    queue = next.catch(() => undefined);
    return next;
  };
}
