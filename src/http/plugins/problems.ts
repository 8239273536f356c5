// Errors as problem+json (RFC 9457), for every way a request can fail inside Fastify: the error
// handler, 404 for paths nothing answers, 405 with Allow for every method a path does not
// answer, and OPTIONS on every path. The path table is built from the registered routes (an
// `onRoute` hook), never hand-kept: `problemsPlugin` goes first so it sees every route, and
// `methodFallbacksPlugin` last, when the table is complete.
import http from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  announcesBody,
  ApiError,
  invalidNumberError,
  problemBody,
  PROBLEM_CONTENT_TYPE,
  type ErrorCode,
} from '../errors.js';
import { routeFeatures, VARY_ON_CODING_AND_ORIGIN } from '../route-config.js';
import { RouteTable } from '../route-table.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The registered paths and their methods (see route-table.ts). */
    routeTable: RouteTable;
  }
}

/** Answered by the fallbacks, so never listed as what a path really answers. */
const FALLBACK = Symbol('method fallback');
const NOT_FOUND_PATTERN = '*';

const PREFLIGHT_HEADERS = { 'Access-Control-Allow-Headers': 'X-Request-Id', 'Access-Control-Max-Age': '86400' };

export async function sendProblem(reply: FastifyReply, requestId: string, error: ApiError): Promise<FastifyReply> {
  if (error.headers) reply.headers(error.headers);
  // A problem is about this request only: never kept by a cache, and never the success
  // answer's validators or coding if those were set before the failure.
  reply.removeHeader('etag');
  reply.removeHeader('content-encoding');
  reply.header('Cache-Control', 'no-store');
  reply.header('X-Request-Id', requestId);
  // A refused request whose body was never read: the rest of it must not be parsed as the next request.
  if (announcesBody(reply.request.headers)) reply.header('Connection', 'close');
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemBody(error.code, requestId, error.detail, error.extra)));
}

export function toApiError(error: FastifyError | ApiError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (error.validation || error.code === 'FST_ERR_VALIDATION')
    return new ApiError(routeFeatures(request.routeOptions.config).paramsError);
  if (status === 503) return new ApiError('shutting_down');
  if (status >= 400 && status < 500) return new ApiError('bad_request');
  return new ApiError('internal');
}

/**
 * The answer to a URL the router could not take (undecodable percent-encoding, an over-long
 * parameter): the route its shape belongs to says which error it is, as a validation failure would.
 */
export function routerFailure(table: RouteTable, url: string, code: string | undefined): ApiError {
  const path = url.split('?')[0] ?? url;
  const entry = table.match(path);
  const errorCode: ErrorCode =
    entry && entry.pattern !== NOT_FOUND_PATTERN ? entry.features.paramsError : 'bad_request';
  return new ApiError(errorCode, code === 'FST_ERR_BAD_URL' ? 'Malformed URL encoding.' : undefined);
}

export const problemsPlugin = fp(
  async (app: FastifyInstance, options: { table?: RouteTable }) => {
    const table = options.table ?? new RouteTable();
    app.decorate('routeTable', table);
    app.addHook('onRoute', (route) => {
      const config = route.config as { [FALLBACK]?: true } | undefined;
      if (config?.[FALLBACK] || route.url === NOT_FOUND_PATTERN) return;
      table.add(route.url, Array.isArray(route.method) ? route.method : [route.method], route.config);
    });
    app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
      const apiError = toApiError(error, request);
      if (apiError.status >= 500 && apiError.code === 'internal') {
        request.log.error({ err: { type: error.name, code: (error as FastifyError).code } }, 'unhandled error');
      }
      return sendProblem(reply, request.id, apiError);
    });
    // Only reachable for what the catch-all route cannot take; answered the same way.
    app.setNotFoundHandler(async (request, reply) => sendProblem(reply, request.id, new ApiError('route_not_found')));
  },
  { name: 'problems', fastify: '5.x' },
);

/**
 * Registered after every route: for each path, OPTIONS (a CORS preflight where the route is
 * public) and 405 with Allow for every other method; and a catch-all 404 for other paths.
 * The 405 is decided before the body is read (preParsing), so a bad body never hides it.
 */
export const methodFallbacksPlugin = fp(
  async (app: FastifyInstance) => {
    const table = app.routeTable;
    const supported = app.supportedMethods;
    for (const entry of table.entries()) {
      const allow = table.allowOf(entry.pattern);
      const answered = new Set(allow.split(', '));
      // What a client may use instead, OPTIONS left out ("GET or HEAD", "POST").
      const usable = allow
        .split(', ')
        .filter((method) => method !== 'OPTIONS')
        .join(', ');
      const { rateLimit, cors } = entry.features;
      const config = { [FALLBACK]: true, rateLimit, cors };
      if (!entry.methods.has('OPTIONS')) {
        app.route({
          method: 'OPTIONS',
          url: entry.pattern,
          schema: { hide: true },
          config: { [FALLBACK]: true, cors },
          handler: async (_request, reply) => {
            reply.header('Allow', allow);
            if (cors)
              reply.headers({ 'Access-Control-Allow-Methods': allow.replace(', OPTIONS', ''), ...PREFLIGHT_HEADERS });
            return reply.code(204).send();
          },
        });
      }
      const others = supported.filter((method) => !answered.has(method));
      if (others.length === 0) continue;
      const refuse = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
        reply.header('Allow', allow);
        throw new ApiError(
          'method_not_allowed',
          `${request.method} is not allowed here; use ${usable.replace(/, ([^,]+)$/, ' or $1')}.`,
        );
      };
      app.route({
        method: others,
        url: entry.pattern,
        exposeHeadRoute: false,
        schema: { hide: true },
        config,
        preParsing: refuse,
        handler: refuse,
      });
    }
    app.route({
      method: supported,
      url: NOT_FOUND_PATTERN,
      exposeHeadRoute: false,
      schema: { hide: true },
      config: { rateLimit: true, cors: true },
      handler: async (request, reply) => {
        // The router gives up on an over-long parameter; the path's shape still names its route.
        const entry = table.match(request.url.split('?')[0] ?? request.url);
        const refusedText = entry?.features.refusedText;
        // A text route is always 200 for a GET: its answer for a number it cannot read.
        if (refusedText !== undefined && (request.method === 'GET' || request.method === 'HEAD')) {
          const answer = refusedText(queryOf(request.url));
          return reply
            .code(200)
            .headers(answer.headers)
            .header('vary', VARY_ON_CODING_AND_ORIGIN)
            .header('cache-control', 'no-store')
            .header('content-type', answer.contentType)
            .send(answer.body);
        }
        throw routerFailureOrNotFound(table, request.url);
      },
    });
  },
  { name: 'method-fallbacks', fastify: '5.x', dependencies: ['problems'] },
);

/** The query string of a request target, as name → first value. */
function queryOf(url: string): Record<string, string> {
  const query: Record<string, string> = {};
  const at = url.indexOf('?');
  if (at === -1) return query;
  for (const [name, value] of new URLSearchParams(url.slice(at + 1))) if (!(name in query)) query[name] = value;
  return query;
}

function routerFailureOrNotFound(table: RouteTable, url: string): ApiError {
  const entry = table.match(url.split('?')[0] ?? url);
  if (!entry) return new ApiError('route_not_found');
  // The only parameter the router refuses is one over its length bound, far above any number's.
  return entry.features.paramsError === 'invalid_number'
    ? invalidNumberError('too_long')
    : new ApiError(entry.features.paramsError);
}

/** Node knows more methods than Fastify routes by default; every one of them gets 404/405 too. */
export function acceptEveryMethod(app: FastifyInstance): void {
  for (const method of http.METHODS) {
    // CONNECT never reaches a request handler in Node (it is the 'connect' event).
    if (method === 'CONNECT' || app.supportedMethods.includes(method)) continue;
    app.addHttpMethod(method, { hasBody: false });
  }
}
