// Builds the HTTP application from its dependencies. Does no I/O: no socket, no file, no
// upstream is touched here, so tests can build it with fakes and drive it with inject().
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { trustProxySetting, type Config } from './config/config.js';
import type { PhoneNumberParser } from './domain/phone-number.js';
import type { LookupService } from './domain/lookup/types.js';
import type { KeyedHasher } from './infra/hash.js';
import type { RateLimitStore } from './infra/rate-limit/rate-limit-store.js';
import { ApiError, problemBody, PROBLEM_CONTENT_TYPE, ERROR_CODES, type ErrorCode } from './http/errors.js';
import { createRateLimitHook } from './http/plugins/rate-limit.js';
import { registerOpenApi } from './http/plugins/openapi.js';
import { registerPhoneRoutes } from './http/routes/phone-routes.js';
import { registerHealthRoutes } from './http/routes/health-routes.js';
import { registerOverloadProtection } from './http/plugins/overload.js';
import { registerReadinessRoutes } from './http/routes/readiness-routes.js';
import { registerMetrics } from './http/plugins/metrics.js';
import { registerWebPage, WEB_PAGE_PATHS, type WebPageOptions } from './http/plugins/web-page.js';
import type { ServiceMetrics } from './infra/metrics/service-metrics.js';
import { createReadinessCheck, type ReadinessCheck } from './infra/readiness/readiness.js';

export interface AppDependencies {
  config: Config;
  parsePhoneNumber: PhoneNumberParser;
  lookupService: LookupService;
  rateLimitStore: RateLimitStore;
  hashKey: KeyedHasher;
  /** A pino logger; when absent the app logs nothing (tests). */
  logger?: FastifyBaseLogger;
  version?: string;
  /** Epoch ms the process started, for /health's uptime. */
  startedAtMs?: number;
  /** Prometheus instruments; absent when METRICS_ENABLED=false (nothing is recorded). */
  metrics?: ServiceMetrics;
  /** What /health/ready reports; absent, it reports no dependency. */
  readiness?: ReadinessCheck;
  /** The lookup page at `/` (default on); `false` leaves it out. */
  webPage?: WebPageOptions | false;
}

/** Paths that exist, with the methods they answer; any other method gets 405 with Allow. */
const KNOWN_PATHS = ['/api/phone/:number', '/api/phone/:number/score', '/health', '/health/ready', '/openapi.json'];
const OTHER_METHODS = ['DELETE', 'PATCH', 'POST', 'PUT'] as const;

// The API is public, read-only and credential-free: any web page may call it (CORS).
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'RateLimit, RateLimit-Policy, Retry-After, X-Request-Id',
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    // Our own onResponse hook logs one line per request, with the route pattern only.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustProxySetting(config),
    // A caller's id is kept for correlation when it is short and plain; otherwise ours.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 512, ignoreTrailingSlash: true },
    // Every route is GET: nothing legitimate has a body.
    bodyLimit: 1024,
    requestTimeout: 15_000,
    connectionTimeout: 30_000,
    // Longer than common load balancers' idle timeout (60 s), so the proxy closes first.
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors: (error, request, reply) => {
      // Malformed percent-encoding and similar router failures: a number-shaped path is an
      // invalid number, anything else a bad request, never a bare framework page.
      const code: ErrorCode = request.url.startsWith('/api/phone/') ? 'invalid_number' : 'bad_request';
      void sendProblem(reply, request.id, new ApiError(code, error.code === 'FST_ERR_BAD_URL' ? 'Malformed URL encoding.' : undefined));
    },
    clientErrorHandler: (error, socket) => writeRawProblem(socket, error),
  });
  app.server.headersTimeout = 10_000;
  app.server.maxHeadersCount = 100;

  const rateLimit = createRateLimitHook({
    max: config.RATE_LIMIT_MAX,
    windowSeconds: config.RATE_LIMIT_WINDOW_S,
    store: deps.rateLimitStore,
    hashKey: deps.hashKey,
    onRejected: deps.metrics ? () => deps.metrics?.recordRateLimitRejection() : undefined,
  });
  // /metrics lives here unless METRICS_PORT gives it a server of its own (server.ts).
  const exposeMetricsRoute = deps.metrics !== undefined && config.METRICS_ENABLED && config.METRICS_PORT === undefined;
  const knownPaths = [...KNOWN_PATHS, ...(deps.webPage === false ? [] : WEB_PAGE_PATHS), ...(exposeMetricsRoute ? ['/metrics'] : [])];

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    if (request.url.startsWith('/api/') || request.url.startsWith('/health')) reply.headers(CORS_HEADERS);
    if (request.url.length > 2048) throw new ApiError('bad_request', 'The request URL is too long.');
  });
  // One line per request; the route pattern, never the URL, so no number reaches the log.
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? '(unmatched)',
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });

  if (deps.metrics) registerMetrics(app, { metrics: deps.metrics, exposeRoute: exposeMetricsRoute });

  // While shutting down, answers in flight tell their keep-alive connection to close, so the
  // server does not wait on connections that turn idle after close() began.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('Connection', 'close');
  });

  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    const apiError = toApiError(error, request);
    if (apiError.status >= 500 && apiError.code === 'internal') {
      request.log.error({ err: { type: error.name, code: (error as FastifyError).code } }, 'unhandled error');
    }
    return sendProblem(reply, request.id, apiError);
  });

  await registerOverloadProtection(app, {
    maxInFlight: config.MAX_IN_FLIGHT,
    maxEventLoopDelayMs: config.MAX_EVENT_LOOP_DELAY_MS,
    ...(deps.metrics ? { onShed: (reason: string) => deps.metrics?.recordLoadShed(reason) } : {}),
  });

  app.setNotFoundHandler({ preHandler: rateLimit }, async (request, reply) => sendProblem(reply, request.id, new ApiError('route_not_found')));

  await registerOpenApi(app, deps.version ?? '0.0.0');
  registerHealthRoutes(app, { startedAtMs: deps.startedAtMs ?? Date.now() - process.uptime() * 1000 });
  registerReadinessRoutes(app, { readiness: deps.readiness ?? createReadinessCheck({ upstreams: [] }) });
  if (deps.webPage !== false) registerWebPage(app, deps.webPage);
  await registerPhoneRoutes(app, { parsePhoneNumber: deps.parsePhoneNumber, lookupService: deps.lookupService, rateLimit });

  for (const url of knownPaths) {
    app.route({
      method: [...OTHER_METHODS],
      url,
      schema: { hide: true },
      onRequest: url.startsWith('/api/') ? rateLimit : undefined,
      handler: async (request, reply) => {
        reply.header('Allow', 'GET, HEAD');
        return sendProblem(reply, request.id, new ApiError('method_not_allowed', `${request.method} is not allowed here; use GET or HEAD.`));
      },
    });
    app.options(url, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .code(204)
        .headers({ Allow: 'GET, HEAD', 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': 'X-Request-Id', 'Access-Control-Max-Age': '86400' })
        .send(),
    );
  }
  return app;
}

function toApiError(error: FastifyError | ApiError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (error.validation || error.code === 'FST_ERR_VALIDATION') {
    return new ApiError(request.url.startsWith('/api/phone/') ? 'invalid_number' : 'bad_request');
  }
  if (status === 503) return new ApiError('shutting_down');
  if (status >= 400 && status < 500) return new ApiError('bad_request');
  return new ApiError('internal');
}

async function sendProblem(reply: FastifyReply, requestId: string, error: ApiError): Promise<FastifyReply> {
  if (error.headers) reply.headers(error.headers);
  reply.header('X-Request-Id', requestId);
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemBody(error.code, requestId, error.detail, error.extra)));
}

/** Node-level parse errors (hostile headers, broken request lines) never reach Fastify. */
function writeRawProblem(socket: Socket, error: Error & { code?: string }): void {
  // A parse error can come after the request line and headers were read and answered (a body
  // framed by a bogus Transfer-Encoding): the client already has its answer, so a second one
  // on the same socket would be a stray response. Node's own default handler makes the same check.
  const answered = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
  if (!socket.writable || answered) {
    socket.destroy();
    return;
  }
  // Oversized headers included: the contract allows only 400 for a malformed request.
  void error;
  const code: ErrorCode = 'bad_request';
  const body = JSON.stringify(problemBody(code, randomUUID()));
  socket.end(
    `HTTP/1.1 ${ERROR_CODES[code].status} Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
