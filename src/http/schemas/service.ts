// The service's own routes: liveness (`/health`, routes/health-routes.ts), readiness
// (`/health/ready`, routes/readiness-routes.ts) and the OpenAPI document (`/openapi.json`,
// plugins/openapi.ts), the `service` tag of the document.
import { Type } from '@sinclair/typebox';
import { BREAKER_STATES } from '../../domain/lookup/resilience.js';
import { SOURCE_STATUSES } from '../../domain/ports/source.js';
import { SOURCE_SLOTS } from '../../domain/report.js';
import { FailureCauseString, FailureReasonString, jsonResponse, literalUnion, Nullable } from './common.js';
import { ContentEncodingHeader, LiveNoStoreHeader, RequestIdHeader, VaryAcceptEncodingHeader } from './headers.js';
import {
  badRequestOutsidePhoneRoutes,
  methodNotAllowed,
  problemExample,
  problemSchema,
  unavailableWhileClosing,
} from './problems.js';

export const HealthSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    version: Type.String({ description: "The service's version (package.json's)", examples: ['0.1.0'] }),
    uptime: Type.Number({ description: 'Seconds since the process started' }),
    timestamp: Type.String({ description: 'ISO 8601 UTC with milliseconds', examples: ['2026-11-22T03:00:00.000Z'] }),
  },
  { additionalProperties: false },
);

const ReadinessStatus = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]);

const UpstreamReadinessSchema = Type.Object(
  {
    status: ReadinessStatus,
    slot: literalUnion(SOURCE_SLOTS),
    circuit: Type.Union([...BREAKER_STATES.map((state) => Type.Literal(state)), Type.Null()], {
      description: 'The breaker of this source; open means calls are refused at once until a probe succeeds',
    }),
    pausedUntil: Type.Union([Type.String(), Type.Null()], {
      description: 'ISO 8601 end of the pause after a 403/429, or null',
    }),
    lastOutcome: Type.Union([
      Type.Object(
        {
          status: literalUnion(SOURCE_STATUSES),
          reason: Type.Optional(FailureReasonString()),
          cause: Type.Optional(FailureCauseString()),
          at: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    lastFailure: Nullable(
      Type.Object(
        {
          status: Type.Union([Type.Literal('error'), Type.Literal('blocked')]),
          reason: FailureReasonString(),
          cause: FailureCauseString(),
          at: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: 'The last fetch that failed and its cause class, kept after later successes; null when none has' },
    ),
    reason: Type.Optional(
      Type.String({
        description:
          'Why the upstream is not ok when a probe says so: `layout changed` (the scheduled canary found a required marker missing)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReadinessSchema = Type.Object(
  {
    status: ReadinessStatus,
    timestamp: Type.String({ description: 'ISO 8601 UTC time of the evaluation' }),
    reason: Type.Optional(Type.String({ description: 'Why the service cannot answer, when status is down' })),
    dependencies: Type.Object(
      {
        upstreams: Type.Record(Type.String(), UpstreamReadinessSchema, {
          description: 'One member per upstream source, by name',
        }),
        numberingData: Type.Optional(
          Type.Object(
            {
              status: ReadinessStatus,
              dataDate: Type.Union([Type.String({ description: 'YYYY-MM-DD' }), Type.Null()]),
              ageDays: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
            },
            {
              additionalProperties: false,
              description:
                'The ARCEP numbering data in use; older than ARCEP_MAX_AGE_DAYS (120 by default) is degraded',
            },
          ),
        ),
        redis: Type.Optional(
          Type.Object(
            { status: ReadinessStatus },
            { additionalProperties: false, description: 'Present when REDIS_URL is set' },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'Readiness of the service and of each dependency' },
);

export const serviceRouteSchemas = {
  health: {
    operationId: 'getHealth',
    summary: 'Liveness: the service is up',
    description: 'Always 200 while the process serves; never rate limited and never calls an upstream.',
    tags: ['service'],
    response: {
      200: jsonResponse(
        'The service is up.',
        HealthSchema,
        { status: 'ok', version: '0.1.0', uptime: 3600.5, timestamp: '2026-11-22T03:00:00.000Z' },
        { 'Cache-Control': LiveNoStoreHeader },
      ),
      400: badRequestOutsidePhoneRoutes,
      405: methodNotAllowed({}),
      503: unavailableWhileClosing,
    },
  },
  readiness: {
    operationId: 'getReadiness',
    summary: 'Readiness: each dependency ok, degraded or down',
    description:
      'Reads the state the service keeps (last upstream outcomes, pauses, circuit breakers, Redis, ARCEP data date); never calls an upstream. 200 while the service can answer, even degraded; 503 only when it cannot (shutting down, numbering data missing).',
    tags: ['service'],
    response: {
      200: jsonResponse(
        'The service can answer (status ok or degraded).',
        ReadinessSchema,
        { status: 'ok', timestamp: '2026-11-22T03:00:00.000Z', dependencies: { upstreams: {} } },
        {},
      ),
      400: badRequestOutsidePhoneRoutes,
      405: methodNotAllowed({}),
      503: {
        description:
          'The service cannot answer: the readiness report says why; while the process closes, a problem document.',
        headers: { 'X-Request-Id': RequestIdHeader },
        content: {
          'application/json': {
            schema: ReadinessSchema,
            example: {
              status: 'down',
              timestamp: '2026-11-22T03:00:00.000Z',
              reason: 'shutting down',
              dependencies: { upstreams: {} },
            },
          },
          'application/problem+json': {
            schema: problemSchema(['shutting_down'], ''),
            example: problemExample('shutting_down'),
          },
        },
      },
    },
  },
  openApi: {
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    description: 'Served with `Access-Control-Allow-Origin: *` so tools on any origin can read it; never rate limited.',
    tags: ['service'],
    response: {
      200: {
        description: 'The OpenAPI document, in brotli or gzip when Accept-Encoding asks for one.',
        headers: {
          'X-Request-Id': RequestIdHeader,
          'Content-Encoding': ContentEncodingHeader,
          Vary: VaryAcceptEncodingHeader,
        },
        content: {
          'application/json': { schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) },
        },
      },
      400: badRequestOutsidePhoneRoutes,
      405: methodNotAllowed({}),
      503: unavailableWhileClosing,
    },
  },
} as const;
