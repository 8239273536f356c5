// The limit on failed credentials (docs/operations.md#failed-credentials): the admin API's bearer
// token, the blocklist feed's password and its CardDAV Basic auth, and the reporters' tokens of the
// report routes (routes/report-routes.ts). Every client counts, those in
// RATE_LIMIT_EXEMPT included (they are exempt from the lookup limit, not from guessing), and
// RATE_LIMIT_MAX=0 does not turn it off.
//
// A client (its rate-limit bucket: the address, an IPv6 /64) may fail CREDENTIAL_FAILURES_MAX
// times in any CREDENTIAL_FAILURES_WINDOW_S seconds. Past that, every request of it that needs a
// credential is a 429 with Retry-After, before the credential is even read, until its oldest
// failure leaves the window: a right guess then looks like a wrong one, so the limit gives a
// guesser no answer. A success is never counted and never slows a client that has not failed.
//
// The count is kept in this process (per instance, per worker): a guesser spread over N
// instances gets N times the allowance, still some ten guesses a minute where it had thousands
// a second. The number of clients remembered is bounded; the oldest is forgotten first.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { clientKeyInput, clientOf } from '../client-address.js';
import { ApiError } from '../errors.js';

export const CREDENTIAL_FAILURES_MAX = 10;
export const CREDENTIAL_FAILURES_WINDOW_S = 60;
/** Clients whose failures are remembered at once; past it the longest-known one is forgotten. */
export const CREDENTIAL_FAILURES_CLIENTS = 10_000;

export interface CredentialFailures {
  /** Throws the 429 while the request's client is locked out; call it before reading a credential. */
  refuseLockedOut(request: FastifyRequest): void;
  /** Counts a failed credential of the request's client. */
  recordFailure(request: FastifyRequest): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The limit on failed credentials (credential-failures.ts), shared by every route that checks one. */
    credentialFailures: CredentialFailures;
  }
}

export interface CredentialFailuresOptions {
  max?: number;
  windowSeconds?: number;
  maxClients?: number;
  now?: () => number;
}

export function createCredentialFailures(options: CredentialFailuresOptions = {}): CredentialFailures {
  const max = options.max ?? CREDENTIAL_FAILURES_MAX;
  const windowMs = (options.windowSeconds ?? CREDENTIAL_FAILURES_WINDOW_S) * 1000;
  const maxClients = options.maxClients ?? CREDENTIAL_FAILURES_CLIENTS;
  const now = options.now ?? Date.now;
  /** Failure times per client bucket, oldest first, at most `max` long. */
  const failures = new Map<string, number[]>();

  const keyOf = (request: FastifyRequest): string => clientKeyInput(clientOf(request.ip, request.socket.remoteAddress));

  /** The client's failures still in the window (expired ones dropped, a client with none forgotten). */
  function liveFailures(key: string, at: number): number[] | undefined {
    const times = failures.get(key);
    if (times === undefined) return undefined;
    while (times.length > 0 && (times[0] ?? 0) <= at - windowMs) times.shift();
    if (times.length === 0) {
      failures.delete(key);
      return undefined;
    }
    return times;
  }

  return {
    refuseLockedOut(request) {
      const at = now();
      const times = liveFailures(keyOf(request), at);
      if (times === undefined || times.length < max) return;
      const retryAfterSeconds = Math.max(1, Math.ceil(((times[0] ?? at) + windowMs - at) / 1000));
      throw new ApiError(
        'too_many_requests',
        `Too many failed credentials: at most ${max} per ${windowMs / 1000} s; retry later.`,
        undefined,
        {
          'Retry-After': String(retryAfterSeconds),
        },
      );
    },
    recordFailure(request) {
      const at = now();
      const key = keyOf(request);
      const times = liveFailures(key, at);
      if (times !== undefined) {
        times.push(at);
        if (times.length > max) times.shift();
        return;
      }
      if (failures.size >= maxClients) {
        const oldest = failures.keys().next();
        if (oldest.done !== true) failures.delete(oldest.value);
      }
      failures.set(key, [at]);
    },
  };
}

/** Decorates the app with one limit for every route that checks a credential (the admin API, the feed, the report routes). */
export const credentialFailuresPlugin = fp(
  async (app: FastifyInstance, options: CredentialFailuresOptions) => {
    app.decorate('credentialFailures', createCredentialFailures(options));
  },
  { name: 'credential-failures', fastify: '5.x' },
);
