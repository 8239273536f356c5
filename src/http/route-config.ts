// What a route asks of the cross-cutting plugins, in its `config` (the way @fastify/rate-limit
// reads `config.rateLimit`). Each plugin reads it once, when the route is registered, and
// attaches its hook to that route only: nothing is chosen from the request's URL.
import type { ErrorCode } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Counted against the client's rate limit (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_S). */
    rateLimit?: boolean;
    /** Refused with 503 when MAX_IN_FLIGHT or the event-loop delay says the process is full. */
    shed?: boolean;
    /** Answers to a request with `Origin` carry the public-API CORS headers; OPTIONS answers a preflight. */
    cors?: boolean;
    /** The error a schema validation failure of the path parameters becomes (default bad_request). */
    paramsError?: ErrorCode;
    /**
     * A text route's answer to a GET or HEAD the router matched by its shape but could not hand
     * to the route (a number segment over maxParamLength): always 200, as for any refused number.
     */
    refusedText?: RefusedTextAnswer;
  }
}

/** The 200 a text route gives a number it never saw; `query` is the request's query string, parsed. */
export type RefusedTextAnswer = (query: Readonly<Record<string, string>>) => {
  body: string;
  headers: Record<string, string>;
  contentType: string;
};

export interface RouteFeatures {
  rateLimit: boolean;
  shed: boolean;
  cors: boolean;
  paramsError: ErrorCode;
  refusedText: RefusedTextAnswer | undefined;
}

export function routeFeatures(config: unknown): RouteFeatures {
  const given = (typeof config === 'object' && config !== null ? config : {}) as Partial<RouteFeatures>;
  return {
    rateLimit: given.rateLimit === true,
    shed: given.shed === true,
    cors: given.cors === true,
    paramsError: given.paramsError ?? 'bad_request',
    refusedText: given.refusedText,
  };
}

/**
 * A CORS route's answers differ by whether the request carried `Origin` (the CORS headers are
 * sent only then), so every answer a cache may keep says so: the phone routes' answers, in one
 * `Vary` naming the coding too. Problems and `/health` are `no-store`: no cache keeps them.
 */
export const VARY_ON_CODING_AND_ORIGIN = 'Accept-Encoding, Origin';
