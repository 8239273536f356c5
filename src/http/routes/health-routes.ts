// The spec's /health (part 2.3): no envelope, never rate limited, never calls an upstream.
import type { FastifyInstance } from 'fastify';
import { HealthSchema } from '../schemas.js';

export function registerHealthRoutes(app: FastifyInstance, options: { startedAtMs: number }): void {
  app.get(
    '/health',
    { schema: { tags: ['service'], summary: 'Liveness: the service is up', response: { 200: HealthSchema } } },
    async () => ({
      status: 'ok' as const,
      uptime: Math.max(0, (Date.now() - options.startedAtMs) / 1000),
      timestamp: new Date().toISOString(),
    }),
  );
}
