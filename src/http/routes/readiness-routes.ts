// `/health/ready`: the operator's view of each dependency (see infra/readiness). 200 while the
// service can answer (even `degraded`), 503 only when it cannot. Never rate limited, never
// cached, and it never calls an upstream. The spec's `/health` stays as it is.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ReadinessCheck } from '../../infra/readiness/readiness.js';

const Status = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')]);

const UpstreamReadinessSchema = Type.Object(
  {
    status: Status,
    slot: Type.Union([Type.Literal('primary'), Type.Literal('community'), Type.Literal('signals')]),
    circuit: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open'), Type.Null()], {
      description: 'The breaker of this source; open means calls are refused at once until a probe succeeds',
    }),
    pausedUntil: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 end of the pause after a 403/429, or null' }),
    lastOutcome: Type.Union([
      Type.Object(
        {
          status: Type.Union([Type.Literal('ok'), Type.Literal('not_found'), Type.Literal('blocked'), Type.Literal('error')]),
          reason: Type.Optional(Type.String()),
          at: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

export const ReadinessSchema = Type.Object(
  {
    status: Status,
    timestamp: Type.String({ description: 'ISO 8601 UTC time of the evaluation' }),
    reason: Type.Optional(Type.String({ description: 'Why the service cannot answer, when status is down' })),
    dependencies: Type.Object(
      {
        upstreams: Type.Record(Type.String(), UpstreamReadinessSchema, { description: 'One member per upstream source, by name' }),
        numberingData: Type.Optional(Type.Object(
          {
            status: Status,
            dataDate: Type.Union([Type.String({ description: 'YYYY-MM-DD' }), Type.Null()]),
            ageDays: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
          },
          { additionalProperties: false, description: 'The ARCEP numbering data in use; older than 365 days is degraded' },
        )),
        redis: Type.Optional(Type.Object({ status: Status }, { additionalProperties: false, description: 'Present when REDIS_URL is set' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'Readiness of the service and of each dependency' },
);

export function registerReadinessRoutes(app: FastifyInstance, options: { readiness: ReadinessCheck }): void {
  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['service'],
        summary: 'Readiness: each dependency ok, degraded or down',
        description:
          'Reads the state the service keeps (last upstream outcomes, pauses, circuit breakers, Redis, ARCEP data date); never calls an upstream. 200 while the service can answer, even degraded; 503 only when it cannot (shutting down, numbering data missing).',
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      },
    },
    async (_request, reply) => {
      const report = await options.readiness.evaluate();
      reply.header('Cache-Control', 'no-store');
      return reply.code(report.status === 'down' ? 503 : 200).send(report);
    },
  );
}
