// Per-client rate limit of docs/api.md#decisions-the-spec-leaves-open (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_S, 0 = off) on
// the routes whose config says `rateLimit: true` (as @fastify/rate-limit reads its route
// config), with RateLimit-Policy / RateLimit headers in the syntax of
// draft-ietf-httpapi-ratelimit-headers-10 and Retry-After on 429. Clients in RATE_LIMIT_EXEMPT
// (a PBX, by arrangement with the operator) are not counted and get no RateLimit headers.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BlockList } from 'node:net';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import type { RateLimitStore } from '../../infra/rate-limit/rate-limit-store.js';
import { clientKeyInput, clientOf, isExempt } from '../client-address.js';
import { ApiError } from '../errors.js';
import { routeFeatures } from '../route-config.js';
import { hooksOf } from './request-context.js';

export interface RateLimitOptions {
  max: number;
  windowSeconds: number;
  store: RateLimitStore;
  hashKey: KeyedHasher;
  onRejected?: () => void;
  /** RATE_LIMIT_EXEMPT: the addresses and CIDR ranges not limited. */
  exempt?: BlockList;
}

export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The limit's hook (null when RATE_LIMIT_MAX=0), for answers given outside any route: framework errors. */
    clientRateLimit: RateLimitHook | null;
  }
}

export function createRateLimitHook(options: RateLimitOptions): RateLimitHook {
  const { max, windowSeconds, store, hashKey } = options;
  const windowMs = windowSeconds * 1000;
  const policy = `"default";q=${max};w=${windowSeconds}`;
  const { exempt } = options;
  return async function rateLimit(request, reply) {
    const client = clientOf(request.ip, request.socket.remoteAddress);
    if (exempt !== undefined && isExempt(exempt, client)) return;
    const key = hashKey(clientKeyInput(client));
    const decision = await store.hit(key, max, windowMs);
    const resetSeconds = Math.ceil(decision.resetMs / 1000);
    reply.header('RateLimit-Policy', policy);
    reply.header('RateLimit', `"default";r=${decision.remaining};t=${resetSeconds}`);
    if (!decision.allowed) {
      options.onRejected?.();
      throw new ApiError(
        'too_many_requests',
        `At most ${max} requests per ${windowSeconds} s; retry later.`,
        undefined,
        {
          'Retry-After': String(Math.max(1, resetSeconds)),
        },
      );
    }
  };
}

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, options: RateLimitOptions) => {
    // Off: no hook at all, so limited routes cost nothing.
    if (options.max === 0) {
      app.decorate('clientRateLimit', null);
      return;
    }
    const hook = createRateLimitHook(options);
    app.decorate('clientRateLimit', hook);
    app.addHook('onRoute', (route) => {
      if (routeFeatures(route.config).rateLimit) route.onRequest = [...hooksOf(route.onRequest), hook];
    });
  },
  { name: 'rate-limit', fastify: '5.x' },
);
