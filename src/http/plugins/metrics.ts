// Prometheus metrics over HTTP (prom-client, https://github.com/siimon/prom-client): a hook
// that times every request by route pattern (never the raw URL, which holds the number), and
// the `/metrics` route, on the API port or – with METRICS_PORT – on a port of its own, so the
// scrape endpoint can stay off the public interface. On the API port it is rate limited like the
// API (a flood of scrapes there raised the API's p99 thirtyfold); on METRICS_PORT it is not, and
// not served on the API port at all. The text is rendered at most once a second
// (infra/metrics/render-cache.ts) and gzipped once per render when the scraper accepts it
// (Prometheus does) and it is over the threshold.
import { createServer, type Server } from 'node:http';
import fp from 'fastify-plugin';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onResponseHookHandler,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import type { ServiceMetrics } from '../../infra/metrics/service-metrics.js';
import { renderAtMostEvery, type RenderMetrics } from '../../infra/metrics/render-cache.js';
import { compressDynamic, negotiateEncoding, type ContentCoding, varyOnAcceptEncoding } from '../encoding.js';
import { hooksOf } from './request-context.js';

/**
 * One onResponse hook per route for both the request's log line and its metrics, bound to the
 * route's pattern when the route is registered (so nothing is looked up per request and no
 * URL, which may hold a number, is ever read). The catch-all route reports `(unmatched)`.
 */
export const observabilityPlugin = fp(
  async (app: FastifyInstance, options: { metrics?: ServiceMetrics }) => {
    const { metrics } = options;
    const log = app.log;
    app.addHook('onRoute', (route) => {
      // GET routes get their 200 series at zero, so a rate over them is defined from the first
      // scrape. Other methods are left out: they only ever answer 405.
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.includes('GET') && route.url !== '*') metrics?.declareHttpRoute('GET', route.url);
      const pattern = route.url === '*' ? '(unmatched)' : route.url;
      // Callback style: nothing here waits, so no promise is made per request.
      const observe: onResponseHookHandler = (
        request: FastifyRequest,
        reply: FastifyReply,
        done: HookHandlerDoneFunction,
      ) => {
        const durationMs = reply.elapsedTime;
        metrics?.observeHttpRequest({
          method: request.method,
          route: pattern,
          statusCode: reply.statusCode,
          durationSeconds: durationMs / 1000,
        });
        // The root logger with the request id as a field: the same line the request's child
        // logger would write, without making that child (lazy-request-logger.ts).
        log.info(
          {
            reqId: request.id,
            method: request.method,
            route: pattern,
            status: reply.statusCode,
            durationMs: Math.round(durationMs * 10) / 10,
          },
          'request',
        );
        done();
      };
      route.onResponse = [...hooksOf(route.onResponse), observe];
    });
  },
  { name: 'observability', fastify: '5.x' },
);

/** The gzip form of each render, made once however many scrapes ask for it. */
const gzippedRenders = new WeakMap<Buffer, Promise<{ body: Buffer; coding?: ContentCoding }>>();

async function scrapeBody(
  render: RenderMetrics,
  acceptEncoding: string | undefined,
): Promise<{ body: Buffer; coding?: ContentCoding }> {
  const body = await render();
  if (negotiateEncoding(acceptEncoding, ['gzip']) !== 'gzip') return { body };
  let compressed = gzippedRenders.get(body);
  if (compressed === undefined) {
    compressed = compressDynamic('gzip', body);
    gzippedRenders.set(body, compressed);
  }
  return compressed;
}

/** `/metrics` on the API port (unless METRICS_PORT gives it a server of its own), rate limited like the API. */
export async function metricsRoutes(app: FastifyInstance, options: { metrics: ServiceMetrics }): Promise<void> {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/metrics', { schema: { hide: true }, config: { rateLimit: true } }, async (request, reply) => {
      const { body, coding } = await scrapeBody(options.metrics.render, request.headers['accept-encoding']);
      varyOnAcceptEncoding(reply);
      if (coding !== undefined) reply.header('Content-Encoding', coding);
      return reply.header('Cache-Control', 'no-store').type(options.metrics.registry.contentType).send(body);
    });
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The separate scrape server of METRICS_PORT: GET/HEAD /metrics, 404 for anything else. Not rate
 * limited (the port is meant for the scraper, off the public interface). `render` is the
 * service's (default: a render cache of its own over `registry`).
 */
export async function startMetricsServer(options: {
  registry: Registry;
  render?: RenderMetrics;
  port: number;
  host: string;
}): Promise<MetricsServer> {
  const { registry } = options;
  const render = options.render ?? renderAtMostEvery(registry);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(path === '/metrics' ? 405 : 404, {
        'Content-Type': 'text/plain; charset=utf-8',
        ...(path === '/metrics' ? { Allow: 'GET, HEAD' } : {}),
      });
      response.end(path === '/metrics' ? 'Method not allowed\n' : 'Not found\n');
      return;
    }
    scrapeBody(render, request.headers['accept-encoding']).then(
      ({ body, coding }) => {
        response.writeHead(200, {
          'Content-Type': registry.contentType,
          'Cache-Control': 'no-store',
          Vary: 'Accept-Encoding',
          'Content-Length': body.length,
          ...(coding === undefined ? {} : { 'Content-Encoding': coding }),
        });
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
