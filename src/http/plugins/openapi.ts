// OpenAPI 3.1 document generated from the route schemas (@fastify/swagger,
// https://github.com/fastify/fastify-swagger) at /openapi.json, and a browsable reference at
// /docs (@fastify/swagger-ui, https://github.com/fastify/fastify-swagger-ui), served from
// the package's own files: no CDN.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'phone-reputation',
        version,
        description:
          'Whether to trust a telephone number: what the number is (formats, line type, original carrier, region, NPV) and what three reputation sources say about it. Free, no authentication; 30 requests per minute per client by default.',
        license: { name: 'See repository' },
      },
      tags: [
        { name: 'phone', description: 'Reports and scores' },
        { name: 'service', description: 'Health' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
