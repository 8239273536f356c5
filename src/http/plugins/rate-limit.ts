// Per-client rate limit of spec part 8 (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_S, 0 = off),
// with RateLimit-Policy / RateLimit headers in the syntax of
// draft-ietf-httpapi-ratelimit-headers-10 and Retry-After on 429.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyedHasher } from '../../infra/hash.js';
import type { RateLimitStore } from '../../infra/rate-limit/rate-limit-store.js';
import { clientBucket } from '../client-address.js';
import { ApiError } from '../errors.js';

export interface RateLimitOptions {
  max: number;
  windowSeconds: number;
  store: RateLimitStore;
  hashKey: KeyedHasher;
  onRejected?: () => void;
}

export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function createRateLimitHook(options: RateLimitOptions): RateLimitHook {
  const { max, windowSeconds, store, hashKey } = options;
  const windowMs = windowSeconds * 1000;
  const policy = `"default";q=${max};w=${windowSeconds}`;
  if (max === 0) return async () => {};
  return async (request, reply) => {
    const key = hashKey(`ratelimit:${clientBucket(request.ip)}`);
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
