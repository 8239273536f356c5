// The engine's single-flight port: concurrent fetches of one key share one execution. In process
// it is src/domain/lookup/coalescer.ts; across instances src/infra/redis/redis-fetch-coalescer.ts.

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
