// `/health` (docs/api.md#decisions-the-spec-leaves-open): no envelope, never rate limited, never calls an upstream.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { serviceRouteSchemas } from '../schemas/service.js';

export async function healthRoutes(
  app: FastifyInstance,
  options: { startedAtMs: number; version: string },
): Promise<void> {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/health', { config: { cors: true }, schema: serviceRouteSchemas.health }, async (_request, reply) => {
      // Never kept by a cache (it is about this moment; and, as a CORS route, its headers depend on Origin).
      reply.header('cache-control', 'no-store');
      return {
        status: 'ok' as const,
        version: options.version,
        uptime: Math.max(0, (Date.now() - options.startedAtMs) / 1000),
        timestamp: new Date().toISOString(),
      };
    });
}
