// Single-flight: concurrent fetches of the same key share one execution, so a burst of
// identical lookups costs each upstream one request. This is the in-process version; across
// instances, src/infra/redis/redis-fetch-coalescer.ts adds a short Redis lock (same port).
//
// Cancellation is reference-counted: each caller may give up (its lookup deadline passed, its
// client left) and is released at once, but the shared work is aborted only when every caller
// has given up – one impatient caller never cancels the fetch others still wait for.

import type { CoalesceOptions, FetchCoalescer } from '../ports/coalescer.js';

export type { CoalesceOptions, FetchCoalescer };

export interface InProcessCoalescer extends FetchCoalescer {
  /** Keys with a run in flight (tests, metrics). */
  inFlightCount(): number;
}

interface Flight {
  promise: Promise<unknown>;
  controller: AbortController;
  /** Callers still waiting; the work is aborted when it drops to zero. */
  holders: number;
}

export function createInProcessCoalescer(): InProcessCoalescer {
  const flights = new Map<string, Flight>();

  function startFlight<T>(key: string, work: (signal: AbortSignal) => Promise<T>): Flight {
    const controller = new AbortController();
    const flight: Flight = { promise: Promise.resolve(), controller, holders: 0 };
    // Work starts on the next microtask, so the first caller is registered as a holder
    // before work can observe its signal.
    flight.promise = Promise.resolve()
      .then(() => work(controller.signal))
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
      const flight = flights.get(key) ?? startFlight(key, work);
      const shared = flight.promise as Promise<T>;
      flight.holders += 1;
      if (signal === undefined) {
        // A caller without a signal holds the work until it settles.
        return shared;
      }
      return new Promise<T>((resolve, reject) => {
        const release = (): void => {
          flight.holders -= 1;
          if (flight.holders === 0) flight.controller.abort(signal.reason);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', release, { once: true });
        shared.then(
          (value) => {
            signal.removeEventListener('abort', release);
            resolve(value);
          },
          (error: Error) => {
            signal.removeEventListener('abort', release);
            reject(error);
          },
        );
      });
    },
    inFlightCount: () => flights.size,
  };
}
