// Single-flight: concurrent fetches of the same key share one execution, so a burst of
// identical lookups costs each upstream one request. This is the in-process version; across
// instances, src/infra/redis/redis-fetch-coalescer.ts adds a short Redis lock (same port).
//
// A caller that gives up (its lookup deadline passed, its `?wait` is over, its client left) is
// released at once, but it only detaches: the shared work runs on to its own deadline whoever
// still waits, so its result reaches the cache for the next lookup, and an upstream that was
// merely slower than one caller's patience is not charged a `timeout` on its breaker. Only the
// starter's `runSignal` (shutdown) ends the work early.

import type { CoalesceOptions, FetchCoalescer } from '../ports/coalescer.js';

export type { CoalesceOptions, FetchCoalescer };

export interface InProcessCoalescer extends FetchCoalescer {
  /** Keys with a run in flight (tests, metrics). */
  inFlightCount(): number;
}

/** Given to work whose starter passed no runSignal: nothing ends it but its own deadline. */
const NEVER_ABORTED = new AbortController().signal;

export function createInProcessCoalescer(): InProcessCoalescer {
  const flights = new Map<string, Promise<unknown>>();

  function startFlight<T>(key: string, work: (signal: AbortSignal) => Promise<T>, runSignal: AbortSignal): Promise<T> {
    const flight = Promise.resolve()
      .then(() => work(runSignal))
      .finally(() => {
        if (flights.get(key) === flight) flights.delete(key);
      });
    flights.set(key, flight);
    return flight;
  }

  return {
    run<T>(key: string, work: (signal: AbortSignal) => Promise<T>, options: CoalesceOptions<T> = {}): Promise<T> {
      const { signal } = options;
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      const shared =
        (flights.get(key) as Promise<T> | undefined) ?? startFlight(key, work, options.runSignal ?? NEVER_ABORTED);
      if (signal === undefined) return shared;
      return new Promise<T>((resolve, reject) => {
        const detach = (): void => reject(signal.reason as Error);
        signal.addEventListener('abort', detach, { once: true });
        shared.then(
          (value) => {
            signal.removeEventListener('abort', detach);
            resolve(value);
          },
          (error: Error) => {
            signal.removeEventListener('abort', detach);
            reject(error);
          },
        );
      });
    },
    inFlightCount: () => flights.size,
  };
}
