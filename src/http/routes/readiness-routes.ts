// `/health/ready`: the operator's view of each dependency (see infra/readiness). 200 while the
// service can answer (even `degraded`), 503 only when it cannot. Never rate limited, never
// cached, and it never calls an upstream. The spec's `/health` stays as it is.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ReadinessCheck } from '../../infra/readiness/readiness.js';
import { serviceRouteSchemas } from '../schemas/service.js';

export async function readinessRoutes(app: FastifyInstance, options: { readiness: ReadinessCheck }): Promise<void> {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get(
      '/health/ready',
      { config: { cors: true }, schema: serviceRouteSchemas.readiness },
      async (_request, reply) => {
        const report = await options.readiness.evaluate();
        reply.header('Cache-Control', 'no-store');
        return reply.code(report.status === 'down' ? 503 : 200).send(report);
      },
    );
}
