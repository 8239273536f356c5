// Per-client rate limit of docs/api.md#decisions-the-spec-leaves-open (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_S, 0 = off) on
// the routes whose config says `rateLimit: true` (as @fastify/rate-limit reads its route
// config), with RateLimit-Policy / RateLimit headers in the syntax of
// draft-ietf-httpapi-ratelimit-headers-10 and Retry-After on 429. Clients in RATE_LIMIT_EXEMPT
// (a PBX, by arrangement with the operator) are not counted and get no RateLimit headers.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isIPv4, isIPv6, type BlockList } from 'node:net';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import type { RateLimitStore } from '../../infra/rate-limit/rate-limit-store.js';
import { clientBucket } from '../client-address.js';
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

/** Whether the client address (request.ip, which honours TRUST_PROXY) is in the exempt list. */
export function isExempt(list: BlockList, address: string | undefined): boolean {
  if (address === undefined) return false;
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d: the IPv4 ranges apply to it.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped !== undefined) return list.check(mapped, 'ipv4') || list.check(bare, 'ipv6');
  if (isIPv4(bare)) return list.check(bare, 'ipv4');
  if (isIPv6(bare)) return list.check(bare, 'ipv6');
  return false;
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
    if (exempt !== undefined && isExempt(exempt, request.ip)) return;
    const key = hashKey(`ratelimit:${clientBucket(request.ip, request.socket.remoteAddress)}`);
    const decision = await store.hit(key, max, windowMs);
    const resetSeconds = Math.ceil(decision.resetMs / 1000);
    reply.header('RateLimit-Policy', policy);
    reply.header('RateLimit', `"default";r=${decision.remaining};t=${resetSeconds}`);
    if (!decision.allowed) {
      options.onRejected?.();
      throw new ApiError('too_many_requests', `At most ${max} requests per ${windowSeconds} s; retry later.`, undefined, {
        'Retry-After': String(Math.max(1, resetSeconds)),
      });
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
