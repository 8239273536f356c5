// What every answer carries and every request must be before any work is done for it: the
// request id header, the public-API CORS headers on routes whose config asks for them (for a
// request that carries `Origin`, as every cross-origin request from a browser does), and the
// edge rules of the error contract (URL length, header count, exactly one Host, no body on a
// GET). One onRequest hook per route, chosen when the route is registered.
import fp from 'fastify-plugin';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
} from 'fastify';
import { announcesBody, ApiError } from '../errors.js';
import { routeFeatures } from '../route-config.js';

// The API is public, read-only and credential-free: any web page may call it (CORS).
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'RateLimit, RateLimit-Policy, Retry-After, X-Request-Id, X-Reputation-Score, X-Reputation-Risk, Preference-Applied',
};
const ALLOW_ORIGIN = 'access-control-allow-origin';
const EXPOSE_HEADERS = 'access-control-expose-headers';
const ALLOW_ORIGIN_VALUE = CORS_HEADERS['Access-Control-Allow-Origin'];
const EXPOSE_HEADERS_VALUE = CORS_HEADERS['Access-Control-Expose-Headers'];

export const MAX_URL_LENGTH = 2048;
/** Node is told to keep one header more than this (maxHeadersCount), so an excess is visible. */
export const MAX_HEADER_FIELDS = 100;

/** Why a request breaks the edge rules, or undefined when it does not. */
export function edgeViolation(request: FastifyRequest): ApiError | undefined {
  if (request.url.length > MAX_URL_LENGTH) return new ApiError('bad_request', 'The request URL is too long.');
  const raw = request.raw;
  const rawHeaders = raw.rawHeaders;
  if (rawHeaders.length > MAX_HEADER_FIELDS * 2)
    return new ApiError('bad_request', `At most ${MAX_HEADER_FIELDS} header fields are accepted.`);
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1) {
    // Node keeps the first Host and drops the others; RFC 9112 requires 400 for both cases.
    let hosts = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i];
      if (name !== undefined && name.length === 4 && name.toLowerCase() === 'host') hosts += 1;
    }
    if (hosts !== 1)
      return new ApiError(
        'bad_request',
        hosts === 0 ? 'A Host header is required.' : 'Exactly one Host header is allowed.',
      );
  }
  const method = raw.method;
  if ((method === 'GET' || method === 'HEAD') && announcesBody(request.headers)) {
    return new ApiError('bad_request', `A ${method} request takes no body.`);
  }
  return undefined;
}

export const requestContextPlugin = fp(
  async (app: FastifyInstance) => {
    // Once shutdown begins, a request arriving on an open keep-alive connection is refused
    // here, in the problem shape (Fastify's own return503OnClosing answers bare JSON).
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    // Callback style: nothing here waits, so no promise is made per request.
    const plain: onRequestHookHandler = (
      request: FastifyRequest,
      reply: FastifyReply,
      done: HookHandlerDoneFunction,
    ) => {
      reply.header('x-request-id', request.id);
      if (closing) return done(shuttingDown(reply));
      done(edgeViolation(request));
    };
    // Only a request with `Origin` is a CORS request (Fetch standard): a browser sends it on
    // every cross-origin call, a PBX or a curl does not, and its answer is 190 bytes and two
    // header fields shorter (a measurable share of a held answer's cost).
    const withCors: onRequestHookHandler = (
      request: FastifyRequest,
      reply: FastifyReply,
      done: HookHandlerDoneFunction,
    ) => {
      reply.header('x-request-id', request.id);
      if (request.headers.origin !== undefined)
        reply.header(ALLOW_ORIGIN, ALLOW_ORIGIN_VALUE).header(EXPOSE_HEADERS, EXPOSE_HEADERS_VALUE);
      if (closing) return done(shuttingDown(reply));
      done(edgeViolation(request));
    };
    app.addHook('onRoute', (route) => {
      const hook = routeFeatures(route.config).cors ? withCors : plain;
      route.onRequest = [hook, ...hooksOf(route.onRequest)];
    });
  },
  { name: 'request-context', fastify: '5.x' },
);

function shuttingDown(reply: FastifyReply): ApiError {
  reply.header('Connection', 'close');
  return new ApiError('shutting_down', 'The service is shutting down; retry on another instance.');
}

/** A route option's hooks as an array (Fastify accepts one function or an array). */
export function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
