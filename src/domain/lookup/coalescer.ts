// Single-flight: concurrent fetches of the same key share one execution, so a burst of
// identical lookups costs each upstream one request. The in-process version is here; the
// scale-out issue extends it across instances with a short Redis lock (same interface).
//
// Cancellation is reference-counted: each caller may give up (its lookup deadline passed, its
// client left) and is released at once, but the shared work is aborted only when every caller
// has given up – one impatient caller never cancels the fetch others still wait for.

export interface CoalesceOptions<T> {
  /** When this aborts, this caller stops waiting (rejected with the signal's reason). */
  signal?: AbortSignal;
  /**
   * For a distributed coalescer: reads the result another instance produced while it holds the
   * lock (typically from the shared cache), polled until `signal` aborts. Unused in-process.
   */
  readSettled?: () => Promise<T | undefined>;
}

export interface FetchCoalescer {
  /**
   * Runs `work` unless a run with the same key is in flight, in which case the caller joins it.
   * `work`'s signal aborts when every caller that passed a signal has given up and no caller
   * without one remains; `work` must bound its own duration.
   */
  run<T>(key: string, work: (signal: AbortSignal) => Promise<T>, options?: CoalesceOptions<T>): Promise<T>;
}

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
