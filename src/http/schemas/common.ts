// What every route group's schemas are built with: the small TypeBox helpers, the vocabularies
// more than one group publishes, and the shape of a JSON answer. The schemas of a group live in
// the file named for it (phone.ts, service.ts, admin.ts, feed.ts); the headers in headers.ts,
// the problem documents in problems.ts.
import { Type, type SchemaOptions, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { FAILURE_CAUSE_PATTERN, FAILURE_REASONS, type FailureCause } from '../../domain/ports/source.js';
import { RequestIdHeader } from './headers.js';

export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) =>
  Type.Union([schema, Type.Null()], options);

/** The schema of a closed vocabulary, from the `as const` array that defines it. */
export function literalUnion<const T extends readonly [string, ...string[]]>(
  values: T,
  options: SchemaOptions = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
}

/**
 * A failure reason on the hot path (every report's `meta`): the same closed set, published as
 * a string `enum` so that serialising it is a plain string write, where a union of 17 literals
 * would make fast-json-stringify validate each value against each branch.
 */
export const FailureReasonString = (description?: string) =>
  Type.Unsafe<(typeof FAILURE_REASONS)[number]>({
    type: 'string',
    enum: [...FAILURE_REASONS],
    ...(description === undefined ? {} : { description }),
  });
/** A failure's cause class (FAILURE_CAUSES, or `http_` and the status): a plain string with a pattern, published. */
const FAILURE_CAUSE_TEXT =
  'What the failure was, finer than `reason`: `dns`, `refused`, `reset`, `tls`, `timeout`, `http_<status>`, ' +
  '`blocked`, `layout`, `budget`, `breaker`… (docs/reliability.md#why-a-source-fails)';
export const FailureCauseString = (description = FAILURE_CAUSE_TEXT) =>
  Type.Unsafe<FailureCause>({ type: 'string', pattern: FAILURE_CAUSE_PATTERN, description });

export function jsonResponse(description: string, schema: TSchema, example: unknown, headers: Record<string, object>) {
  return {
    description,
    headers: { 'X-Request-Id': RequestIdHeader, ...headers },
    content: { 'application/json': { schema, example } },
  };
}
