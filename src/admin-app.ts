// The admin API alone, on ADMIN_PORT (like METRICS_PORT): often bound to an interface the public
// cannot reach. The same routes, problems, request ids and log lines (route pattern, never the
// URL), limits on failed attempts and 404/405 as on the API port; and the operator's console
// (/admin/, docs/console.md); nothing else is served here.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { consolePageOptions, requestLoggingOptions, type AppDependencies } from './app.js';
import { consolePageRoutes } from './http/plugins/console-page.js';
import type { ListStore } from './infra/lists/list-store.js';
import type { TokenStore } from './infra/reports/token-store.js';
import { adminRoutes, adminRoutesOptions } from './http/routes/admin-routes.js';
import { methodFallbacksPlugin, problemsPlugin } from './http/plugins/problems.js';
import { rateLimitPlugin } from './http/plugins/rate-limit.js';
import { credentialFailuresPlugin } from './http/plugins/credential-failures.js';
import { observabilityPlugin } from './http/plugins/metrics.js';
import { requestContextPlugin } from './http/plugins/request-context.js';
import { RouteTable } from './http/route-table.js';
import { fastifyTrustProxy } from './config/config.js';

export async function buildAdminApp(
  deps: AppDependencies & { lists: ListStore; tokens?: TokenStore; logger?: FastifyBaseLogger },
  token: string,
): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...requestLoggingOptions(),
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { maxParamLength: 512, ignoreTrailingSlash: true },
    bodyLimit: 1024,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
  });
  await app.register(problemsPlugin, { table: new RouteTable() });
  await app.register(requestContextPlugin);
  await app.register(rateLimitPlugin, {
    max: config.RATE_LIMIT_MAX,
    windowSeconds: config.RATE_LIMIT_WINDOW_S,
    store: deps.rateLimitStore,
    hashKey: deps.hashKey,
  });
  await app.register(credentialFailuresPlugin);
  // The access line only: the admin API's requests are not the API's, so not in its metrics.
  await app.register(observabilityPlugin);
  await app.register(adminRoutes, adminRoutesOptions(deps, deps.lists, token, app.log, deps.tokens));
  // The operator's console: a sibling of the admin routes, outside their Bearer check (its data needs the token).
  await app.register(consolePageRoutes, consolePageOptions(deps));
  await app.register(methodFallbacksPlugin);
  return app;
}
