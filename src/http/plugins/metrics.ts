// Prometheus metrics over HTTP (prom-client, https://github.com/siimon/prom-client): a hook
// that times every request by route pattern (never the raw URL, which holds the number), and
// the `/metrics` route, on the API port or – with METRICS_PORT – on a port of its own, so the
// scrape endpoint can stay off the public interface. Never rate limited.
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { ServiceMetrics } from '../../infra/metrics/service-metrics.js';

export function registerMetrics(app: FastifyInstance, options: { metrics: ServiceMetrics; exposeRoute: boolean }): void {
  const { metrics } = options;
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttpRequest({
      method: request.method,
      route: request.routeOptions.url ?? '(unmatched)',
      statusCode: reply.statusCode,
      durationSeconds: reply.elapsedTime / 1000,
    });
  });
  if (!options.exposeRoute) return;
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.header('Cache-Control', 'no-store').type(metrics.registry.contentType).send(body);
  });
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** The separate scrape server of METRICS_PORT: GET/HEAD /metrics, 404 for anything else. */
export async function startMetricsServer(options: { registry: Registry; port: number; host: string }): Promise<MetricsServer> {
  const { registry } = options;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(path === '/metrics' ? 405 : 404, { 'Content-Type': 'text/plain; charset=utf-8', ...(path === '/metrics' ? { Allow: 'GET, HEAD' } : {}) });
      response.end(path === '/metrics' ? 'Method not allowed\n' : 'Not found\n');
      return;
    }
    registry.metrics().then(
      (body) => {
        response.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      () => {
        response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        response.end('Metrics collection failed\n');
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
