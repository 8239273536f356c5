// Builds the HTTP application from its dependencies. Does no I/O: no socket, no file, no
// upstream is touched here, so tests can build it with fakes and drive it with inject().
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { fastifyTrustProxy, parseAddressRanges, type Config } from './config/config.js';
import { packageVersion } from './config/package-info.js';
import type { PhoneNumberParser } from './domain/phone-number.js';
import type { LookupService } from './domain/lookup/types.js';
import type { KeyedHasher } from './domain/ports/key-hasher.js';
import type { RateLimitStore } from './infra/rate-limit/rate-limit-store.js';
import { ApiError, rawProblemResponse, type ErrorCode } from './http/errors.js';
import './http/route-config.js';
import { guardConnections, type ConnectionGuard } from './http/connection-guard.js';
import { boundPipelining } from './http/pipelining.js';
import { responseInFlight } from './http/node-http-internals.js';
import { lazyChildLoggerFactory } from './http/lazy-request-logger.js';
import { RouteTable } from './http/route-table.js';
import { freshRequestId } from './http/request-id.js';
import {
  acceptEveryMethod,
  methodFallbacksPlugin,
  problemsPlugin,
  routerFailure,
  sendProblem,
} from './http/plugins/problems.js';
import { MAX_HEADER_FIELDS, requestContextPlugin } from './http/plugins/request-context.js';
import { rateLimitPlugin } from './http/plugins/rate-limit.js';
import { credentialFailuresPlugin } from './http/plugins/credential-failures.js';
import { clientOf, isExempt, lookupClientOf } from './http/client-address.js';
import { docsRoutes, openApiPlugin } from './http/plugins/openapi.js';
import { phoneRoutes } from './http/routes/phone-routes.js';
import { adminRoutes, adminRoutesOptions } from './http/routes/admin-routes.js';
import type { AdminConsoleDependencies } from './http/routes/admin-console-routes.js';
import { healthRoutes } from './http/routes/health-routes.js';
import { overloadPlugin } from './http/plugins/overload.js';
import { readinessRoutes } from './http/routes/readiness-routes.js';
import { metricsRoutes, observabilityPlugin } from './http/plugins/metrics.js';
import { webPageRoutes, type WebPageOptions } from './http/plugins/web-page.js';
import { consolePageRoutes, type ConsolePageOptions } from './http/plugins/console-page.js';
import type { ServiceMetrics } from './infra/metrics/service-metrics.js';
import type { FrontCache } from './http/front-cache.js';
import type { ListStore } from './infra/lists/list-store.js';
import type { TokenStore } from './infra/reports/token-store.js';
import type { CallerReports } from './domain/ports/caller-reports.js';
import { createReadinessCheck, type ReadinessCheck } from './infra/readiness/readiness.js';
import type { BlocklistFeed } from './infra/blocklist/blocklist-feed.js';
import type { TextFacts, VerdictRule } from './domain/verdict.js';
import { feedOffRoutes, feedRoutes } from './http/routes/feed-routes.js';
import { spamBlockerRoutes } from './http/routes/spamblocker-routes.js';
import { reportRoutes } from './http/routes/report-routes.js';
import type { ReporterTokens, ReportRecorder } from './domain/ports/caller-reports.js';
import type { ScreeningDependencies } from './http/routes/admin-stats-routes.js';
import { feedClientOf, type PendingCall } from './domain/ports/screening-record.js';
import type { ReportRating } from './domain/ports/caller-reports.js';
import type { ReportRefusalReason } from './infra/metrics/service-metrics.js';

export interface AppDependencies {
  config: Config;
  parsePhoneNumber: PhoneNumberParser;
  lookupService: LookupService;
  rateLimitStore: RateLimitStore;
  hashKey: KeyedHasher;
  /** The `/verdict` rule, built from VERDICT_* once by the composition root (verdictRuleOf), which the feed shares. */
  verdictRule: VerdictRule;
  /** A pino logger; when absent the app logs nothing (tests). */
  logger?: FastifyBaseLogger;
  /** The service's version, shown by /health and the OpenAPI document (default package.json's). */
  version?: string;
  /** Epoch ms the process started, for /health's uptime. */
  startedAtMs?: number;
  /** Prometheus instruments; absent when METRICS_ENABLED=false (nothing is recorded). */
  metrics?: ServiceMetrics;
  /** What /health/ready reports; absent, it reports no dependency. */
  readiness?: ReadinessCheck;
  /** Finished answers of all-fresh numbers (composition root); absent, every answer is built. */
  frontCache?: FrontCache;
  /** The engine's clock (epoch ms), which the front cache's freshness follows (default Date.now). */
  now?: () => number;
  /** The operator's allow and block lists (docs/lists.md); absent, no list decides anything. */
  lists?: ListStore;
  /** The reporters' tokens (docs/reports.md), kept beside the lists; the admin API manages them. */
  tokens?: TokenStore;
  /** What the deployment's reporters said (docs/reports.md "In the answers"); absent, no report decides anything. */
  reports?: CallerReports;
  /** The lookup page at `/` (default on); `false` leaves it out. */
  webPage?: WebPageOptions | false;
  /** Where the operator's console page at /admin/ is read from (default: the build's, docs/console.md). */
  consolePage?: Pick<ConsolePageOptions, 'dir'>;
  /** The blocklist feed (composition root, when FEED_PASSWORD is set); absent, its routes are 404. */
  blocklistFeed?: BlocklistFeed;
  /** The reporters' tokens and where their votes go (docs/reports.md); absent, reporting is off (the report routes answer 401). */
  reporting?: { tokens: ReporterTokens; recorder: ReportRecorder };
  /** What the admin console's routes read (docs/console.md): the reports' review and dismissals, the setup. */
  adminConsole?: AdminConsoleDependencies;
  /** The console's record of screened calls, reports and feed fetches, and the sources' state (docs/console.md); absent, nothing is recorded. */
  screening?: ScreeningDependencies;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * How a server of the service names and logs its requests, the API's and ADMIN_PORT's alike: no
 * Fastify request lines (they hold the URL, and so a number); the observability plugin's one line
 * per request, with the route pattern; the caller's `X-Request-Id` when short and plain, else a
 * fresh UUID (never Fastify's `req-1`).
 */
export function requestLoggingOptions(): Pick<
  FastifyServerOptions,
  'logController' | 'childLoggerFactory' | 'genReqId'
> {
  return {
    logController: new LogController({ disableRequestLogging: true }),
    // The per-request child logger is made only when something logs for the request (the
    // access line does not need it): lazy-request-logger.ts.
    childLoggerFactory: lazyChildLoggerFactory,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : freshRequestId();
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    connections: ConnectionGuard;
  }
}

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, screening } = deps;
  const now = deps.now ?? Date.now;
  // Filled by the problems plugin as routes are registered; read by the framework-level
  // handlers below, which see requests Fastify's router could not take.
  const routeTable = new RouteTable();
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    // The observability plugin logs one line per request, with the route pattern only.
    ...requestLoggingOptions(),
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { maxParamLength: 512, ignoreTrailingSlash: true },
    // Every route but the report routes is GET, which set their own limit (report-routes.ts).
    bodyLimit: 1024,
    http: {
      // Node checks the headers and request deadlines on this sweep (30 s by default, which
      // let a dribbling connection live up to 45 s past a 15 s deadline).
      connectionsCheckingInterval: 500,
      // Checked by the request-context plugin, so a missing Host gets the problem shape.
      requireHostHeader: false,
    },
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    connectionTimeout: 30_000,
    // Longer than common load balancers' idle timeout (60 s), so the proxy closes first.
    keepAliveTimeout: 65_000,
    // The request-context plugin answers requests arriving during shutdown, in the problem shape.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    frameworkErrors: (error, request, reply) => {
      // Malformed percent-encoding, an over-long parameter: the route the path's shape
      // belongs to decides the error, never a bare framework page.
      void answerFrameworkError(request, reply, routeTable, routerFailure(routeTable, request.url, error.code));
    },
    clientErrorHandler: (error, socket) => writeRawProblem(socket, error, routeTable),
  });
  app.server.headersTimeout = config.HEADERS_TIMEOUT_MS;
  // One more than allowed, so the request-context plugin sees an excess and refuses it.
  app.server.maxHeadersCount = MAX_HEADER_FIELDS + 1;
  app.server.on('checkExpectation', answerUnsupportedExpectation);
  const connections = guardConnections(app.server, {
    maxConnections: config.MAX_CONNECTIONS,
    maxPerAddress: config.MAX_CONNECTIONS_PER_ADDRESS,
  });
  app.decorate('connections', connections);
  boundPipelining(app.server);
  // While shutting down, answers in flight tell their keep-alive connection to close.
  app.addHook('preClose', async () => connections.closeAfterResponses());
  acceptEveryMethod(app);
  // CardDAV's PROPFIND and REPORT carry an XML body (Node knows them as bodyless by default here).
  if (deps.blocklistFeed !== undefined)
    for (const method of ['PROPFIND', 'REPORT']) app.addHttpMethod(method, { hasBody: true, overrideExisting: true });

  // One exempt list for the rate limit and the upstream shares.
  const exemptList =
    config.RATE_LIMIT_EXEMPT === undefined ? undefined : parseAddressRanges(config.RATE_LIMIT_EXEMPT).list;
  // Cross-cutting plugins first: their onRoute hooks must see every route.
  await app.register(problemsPlugin, { table: routeTable });
  await app.register(requestContextPlugin);
  await app.register(overloadPlugin, {
    maxInFlight: config.MAX_IN_FLIGHT,
    maxEventLoopDelayMs: config.MAX_EVENT_LOOP_DELAY_MS,
    ...(deps.metrics ? { onShed: (reason: 'in_flight' | 'event_loop') => deps.metrics?.recordLoadShed(reason) } : {}),
  });
  await app.register(rateLimitPlugin, {
    max: config.RATE_LIMIT_MAX,
    windowSeconds: config.RATE_LIMIT_WINDOW_S,
    store: deps.rateLimitStore,
    hashKey: deps.hashKey,
    ...(exemptList === undefined ? {} : { exempt: exemptList }),
    ...(deps.metrics ? { onRejected: () => deps.metrics?.recordRateLimitRejection() } : {}),
  });
  await app.register(credentialFailuresPlugin);
  await app.register(observabilityPlugin, deps.metrics ? { metrics: deps.metrics } : {});
  const version = deps.version ?? packageVersion();
  await app.register(openApiPlugin, { version });

  // Route groups, each encapsulated.
  await app.register(phoneRoutes, {
    parsePhoneNumber: deps.parsePhoneNumber,
    lookupService: deps.lookupService,
    hashKey: deps.hashKey,
    ...(deps.frontCache === undefined ? {} : { frontCache: deps.frontCache }),
    now: deps.now ?? Date.now,
    lookupTimeoutMs: config.LOOKUP_TIMEOUT_MS,
    verdictRule: deps.verdictRule,
    legalHoursTimeZone: config.LEGAL_HOURS_TZ,
    cidMaxLength: config.CID_MAX_LENGTH,
    lookupClientOf: (request) => lookupClientOf(request, deps.hashKey, exemptList),
    ...(deps.lists === undefined ? {} : { lists: deps.lists }),
    reports: deps.reports,
    ...(deps.metrics === undefined
      ? {}
      : { onListMatch: (list: 'allow' | 'block') => deps.metrics?.recordListMatch(list) }),
    ...(deps.blocklistFeed === undefined ? {} : { onLookedUp: feedRecorder(deps.blocklistFeed, config) }),
    ...(screening === undefined ? {} : { onScreened: (call: PendingCall) => screening.recorder.noteCall(call) }),
  });
  await app.register(spamBlockerRoutes, { publicUrl: config.PUBLIC_URL });
  await app.register(reportRoutes, {
    parsePhoneNumber: deps.parsePhoneNumber,
    tokens: deps.reporting?.tokens,
    recorder: deps.reporting?.recorder,
    now: deps.now ?? Date.now,
    ...(deps.metrics === undefined && screening === undefined
      ? {}
      : {
          onReport: (rating: ReportRating) => {
            deps.metrics?.recordReport(rating);
            screening?.recorder.noteReport(now());
          },
        }),
    ...(deps.metrics === undefined
      ? {}
      : { onRefusal: (reason: ReportRefusalReason) => deps.metrics?.recordReportRefusal(reason) }),
  });
  if (deps.blocklistFeed !== undefined && config.FEED_PASSWORD !== undefined) {
    await app.register(feedRoutes, {
      feed: deps.blocklistFeed,
      user: config.FEED_USER,
      password: config.FEED_PASSWORD,
      publicUrl: config.PUBLIC_URL,
      ...(screening === undefined
        ? {}
        : {
            onFetch: (userAgent: string | undefined, entries: number) =>
              screening.recorder.noteFeedFetch({ client: feedClientOf(userAgent), atMs: now(), entries }),
          }),
    });
  } else if (config.FEED_PASSWORD === undefined) await app.register(feedOffRoutes);
  await app.register(healthRoutes, { startedAtMs: deps.startedAtMs ?? Date.now() - process.uptime() * 1000, version });
  await app.register(readinessRoutes, { readiness: deps.readiness ?? createReadinessCheck({ upstreams: [] }) });
  await app.register(docsRoutes);
  // The lists' admin API, here unless ADMIN_PORT gives it a server of its own (admin-app.ts).
  if (config.ADMIN_TOKEN !== undefined && config.ADMIN_PORT === undefined && deps.lists !== undefined) {
    await app.register(adminRoutes, adminRoutesOptions(deps, deps.lists, config.ADMIN_TOKEN, app.log, deps.tokens));
    // The operator's console: a sibling of the admin routes, outside their Bearer check (its data needs the token).
    await app.register(consolePageRoutes, consolePageOptions(deps));
  }
  if (deps.webPage !== false) await app.register(webPageRoutes, deps.webPage ?? {});
  // /metrics lives here unless METRICS_PORT gives it a server of its own (server.ts).
  if (deps.metrics && config.METRICS_ENABLED && config.METRICS_PORT === undefined)
    await app.register(metricsRoutes, { metrics: deps.metrics });

  // Last: 405/OPTIONS for every registered path and 404 for the rest.
  await app.register(methodFallbacksPlugin);
  return app;
}

/** The console's options from the app's dependencies: its folder, and the CSP counter of the metrics. */
export function consolePageOptions(deps: Pick<AppDependencies, 'metrics' | 'consolePage'>): ConsolePageOptions {
  const { metrics } = deps;
  return {
    ...deps.consolePage,
    ...(metrics === undefined ? {} : { onCspViolation: (directive) => metrics.recordCspViolation(directive) }),
  };
}

/**
 * The blocklist feed's recording of looked-up numbers, for the clients whose lookups count
 * (FEED_RECORD_FROM, else RATE_LIMIT_EXEMPT): a stranger's lookups never enter the household's
 * feed, nor its record in clear. Undefined when nobody's count.
 */
function feedRecorder(
  feed: BlocklistFeed,
  config: Config,
): ((e164: string, facts: TextFacts, request: FastifyRequest) => void) | undefined {
  const setting = config.FEED_RECORD_FROM ?? config.RATE_LIMIT_EXEMPT;
  if (setting === undefined || setting === 'none') return undefined;
  const counted = parseAddressRanges(setting).list;
  return (e164, facts, request) => {
    if (isExempt(counted, clientOf(request.ip, request.socket.remoteAddress))) feed.recordLookup(e164, facts);
  };
}

/**
 * A request the router could not take runs no route hook, so it used to be answered outside the
 * rate limit (`/api/phone/%ZZ` as often as one liked). It counts against the client's limit when
 * the route its path's shape belongs to is limited, or when no route is (the catch-all 404 is):
 * past the limit it is a 429 like any other request.
 */
async function answerFrameworkError(
  request: FastifyRequest,
  reply: FastifyReply,
  table: RouteTable,
  failure: ApiError,
): Promise<void> {
  const limit = request.server.clientRateLimit;
  const entry = table.match(request.url.split('?')[0] ?? request.url);
  if (limit !== null && (entry === undefined || entry.features.rateLimit)) {
    try {
      await limit(request, reply);
    } catch (refusal) {
      // A store that fails answers as the route would have been answered without a limit.
      await sendProblem(reply, request.id, refusal instanceof ApiError ? refusal : failure);
      return;
    }
  }
  await sendProblem(reply, request.id, failure);
}

/** `Expect` other than 100-continue: 417 in the problem shape instead of Node's bare answer. */
function answerUnsupportedExpectation(_request: IncomingMessage, response: ServerResponse): void {
  response.shouldKeepAlive = false;
  response.socket?.end(
    rawProblemResponse('expectation_failed', freshRequestId(), 'Only "Expect: 100-continue" is understood.'),
  );
}

/** Node-level parse errors (hostile headers, broken request lines, deadlines) never reach Fastify. */
function writeRawProblem(
  socket: Socket,
  error: Error & { code?: string; rawPacket?: unknown },
  table: RouteTable,
): void {
  // A parse error can come after the request line and headers were read and answered (a body
  // framed by a bogus Transfer-Encoding): the client already has its answer, so a second one
  // on the same socket would be a stray response. Node's own default handler makes the same check.
  const answered = responseInFlight(socket)?.headersSent === true;
  if (!socket.writable || answered) {
    socket.destroy();
    return;
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.end(rawProblemResponse('request_timeout', freshRequestId(), 'The request was not received in time.'));
    return;
  }
  // A method Node's parser does not know, on a path that exists: 405 like any other method.
  if (error.code === 'HPE_INVALID_METHOD' && Buffer.isBuffer(error.rawPacket)) {
    const path = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\/[^ ?\r\n]*)/.exec(
      error.rawPacket.subarray(0, 4096).toString('latin1'),
    )?.[1];
    const entry = path === undefined ? undefined : table.match(path);
    if (path !== undefined && entry && entry.pattern !== '*') {
      const allow = table.allowOf(entry.pattern);
      socket.end(
        rawProblemResponse('method_not_allowed', freshRequestId(), 'This method is not allowed here.', {
          Allow: allow,
        }),
      );
      return;
    }
  }
  // Oversized headers included: the contract answers 400 for a malformed request.
  const code: ErrorCode = 'bad_request';
  socket.end(rawProblemResponse(code, freshRequestId()));
}
