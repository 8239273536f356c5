// Problem documents (RFC 9457): one schema per status with its exact titles, an example that
// is exactly what the error handler sends, and the problem answers more than one route group
// gives. A group's own problem answers are in its file.
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES, problemBody, type ErrorCode } from '../errors.js';
import { AllowHeader, NoStoreHeader, RequestIdHeader } from './headers.js';

const EXAMPLE_REQUEST_ID = '4f1c2b8e-9a43-4c3e-8d55-2f0e6b7a1c90';

function literals(values: readonly string[]): TSchema {
  return values.length === 1 ? Type.Literal(values[0] ?? '') : Type.Union(values.map((value) => Type.Literal(value)));
}

export function problemSchema(
  codes: readonly [ErrorCode, ...ErrorCode[]],
  description: string,
  extra: TProperties = {},
): TSchema {
  const titles = [...new Set(codes.map((code) => ERROR_CODES[code].title))];
  return Type.Object(
    {
      type: literals(codes.map((code) => `/problems/${code.replaceAll('_', '-')}`)),
      title: literals(titles),
      status: Type.Literal(ERROR_CODES[codes[0]].status),
      detail: Type.Optional(Type.String({ description: 'What went wrong, in a sentence for a person' })),
      requestId: Type.String({ description: 'The X-Request-Id of this answer' }),
      success: Type.Literal(false),
      error: literals(titles),
      ...extra,
    },
    {
      additionalProperties: false,
      description: ['RFC 9457 problem details, also in envelope style (success, error).', description]
        .filter((text) => text !== '')
        .join(' '),
    },
  );
}

/** An example problem answer: exactly what the error handler sends for this code. */
export function problemExample(
  code: ErrorCode,
  detail?: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return problemBody(code, EXAMPLE_REQUEST_ID, detail, extra);
}

export function problemResponse(
  description: string,
  schema: TSchema,
  example: Record<string, unknown>,
  headers: Record<string, object>,
) {
  return {
    description,
    headers: { 'X-Request-Id': RequestIdHeader, 'Cache-Control': NoStoreHeader, ...headers },
    content: { 'application/problem+json': { schema, example } },
  };
}

export const badRequestOutsidePhoneRoutes = problemResponse(
  'The request is malformed (an over-long URL, broken encoding).',
  problemSchema(['bad_request'], ''),
  problemExample('bad_request', 'The request URL is too long.'),
  {},
);
export const methodNotAllowed = (headers: Record<string, object>) =>
  problemResponse(
    'Another method than GET or HEAD was used on this path (OPTIONS answers a CORS preflight with 204).',
    problemSchema(['method_not_allowed'], ''),
    problemExample('method_not_allowed', 'POST is not allowed here; use GET or HEAD.'),
    { Allow: AllowHeader, ...headers },
  );
export const unavailableWhileClosing = problemResponse(
  'The service is shutting down.',
  problemSchema(['shutting_down'], ''),
  problemExample('shutting_down'),
  {},
);
