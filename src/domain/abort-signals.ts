// One signal aborted by any of several, detached from them when the work it bounds is done.
//
// `AbortSignal.any()` adds a WeakRef to every source signal's set of dependants and, on some Node
// lines, never removes it: 200,000 signals made on one long-lived source and collected left
// 11.2 MiB on the heap on Node 20.20.2 and 8.1 MiB on 26.10.0, 0.1 MiB on 24.21.0 (the floor).
// This module is leak-free on every line, so the service does not depend on which one runs it.
// Combined with the engine's `closing` signal, which lives as long as the process, every upstream
// fetch left one WeakRef and its set slot behind for good on Node 20: a heap snapshot after
// 30,000 distinct numbers held 90,068 of them, and RSS grew with every number that passed
// through the process, not with what the caches held (docs/cache.md, "What the runtime keeps",
// cause 1). Here the combined signal listens to its sources and stops listening on `release()`, so a long-lived source
// holds nothing once the work is over. `AbortSignal.any` is refused by lint in src/.

export interface LinkedSignal {
  /** Aborted, with the first source's reason, as soon as any source is. */
  readonly signal: AbortSignal;
  /** Detaches the signal from its sources (idempotent). Call it when the work it bounds is over. */
  release(this: void): void;
}

const NOTHING_TO_RELEASE = (): void => undefined;

export function anySignal(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: NOTHING_TO_RELEASE };
  }
  const release = (): void => {
    for (const source of sources) source.removeEventListener('abort', onAbort);
  };
  function onAbort(event: Event): void {
    release();
    controller.abort((event.target as AbortSignal).reason);
  }
  for (const source of sources) source.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release };
}
