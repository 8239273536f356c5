// The engine's single-flight port: concurrent fetches of one key share one execution. In process
// it is src/domain/lookup/coalescer.ts; across instances src/infra/redis/redis-fetch-coalescer.ts.

export interface CoalesceOptions<T> {
  /** When this aborts, this caller stops waiting (rejected with the signal's reason); the run goes on. */
  signal?: AbortSignal;
  /**
   * Ends the run itself (shutdown), handed to `work`. Taken from the caller that starts the run;
   * callers that join it share the run as it is. Callers leaving never end a run.
   */
  runSignal?: AbortSignal;
  /**
   * For a distributed coalescer: reads the result another instance produced while it holds the
   * lock (typically from the shared cache), polled until it appears or the wait is over. Unused
   * in-process.
   */
  readSettled?: () => Promise<T | undefined>;
}

export interface FetchCoalescer {
  /**
   * Runs `work` unless a run with the same key is in flight, in which case the caller joins it.
   * A caller that gives up (its `signal`) detaches: the run goes on for whoever waits and for
   * what it writes. `work`'s signal aborts only with `runSignal`, so `work` must bound its own
   * duration (a fetch has its source deadline).
   */
  run<T>(key: string, work: (signal: AbortSignal) => Promise<T>, options?: CoalesceOptions<T>): Promise<T>;
}
