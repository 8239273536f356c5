// Fastify makes a child logger for every request (pino's child: a new object, its bindings
// serialised, a method rebuilt per level) whether or not anything logs for that request. The
// access line does not need one: plugins/metrics.ts writes it with the root logger and the
// request id as a field, which is byte for byte the line the child would write. So the child is
// made only when something else logs for the request (an error, a warning from Fastify): a held
// answer no longer pays for it (docs/hot-path.md).
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type LevelMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** A request's logger that becomes `parent.child(bindings, options)` on its first use. */
export class LazyRequestLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions | undefined) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** Whether the child logger has been made (something logged for the request). */
  get made(): boolean {
    return this.#made !== undefined;
  }

  #logger(): FastifyBaseLogger {
    this.#made ??=
      this.#options === undefined
        ? this.#parent.child(this.#bindings)
        : this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }

  #log(level: LevelMethod, args: unknown[]): void {
    const logger = this.#logger();
    Reflect.apply(logger[level], logger, args);
  }

  get level(): string {
    return this.#made?.level ?? this.#options?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#log('error', args);
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }

  info(...args: unknown[]): void {
    this.#log('info', args);
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }

  silent(...args: unknown[]): void {
    this.#log('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a LazyRequestLogger. Fastify passes options that are empty
 * unless the route sets its own log level or serialisers; empty ones are not passed on (pino
 * takes a slower path for any options object).
 */
export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const given = Object.keys(options).length === 0 ? undefined : options;
  return new LazyRequestLogger(logger, bindings, given);
}
