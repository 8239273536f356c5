// Load shedding: when the process is past what it can serve, answer 503 at once (with
// Retry-After) instead of queueing until every client times out. Two signals:
// - API requests in flight over MAX_IN_FLIGHT (a burst of distinct cold lookups: the event
//   loop stays idle while they wait on upstreams, so only a count catches it);
// - event-loop delay over MAX_EVENT_LOOP_DELAY_MS (CPU saturation), measured by
//   @fastify/under-pressure (https://github.com/fastify/under-pressure). 0 turns it off.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export interface OverloadOptions {
  maxInFlight: number;
  maxEventLoopDelayMs: number;
  onShed?: (reason: 'in_flight' | 'event_loop') => void;
}

const RETRY_AFTER = { 'Retry-After': '2' };

export async function registerOverloadProtection(app: FastifyInstance, options: OverloadOptions): Promise<{ inFlight: () => number }> {
  const counted = new WeakSet<FastifyRequest>();
  let inFlight = 0;
  const release = async (request: FastifyRequest): Promise<void> => {
    if (counted.delete(request)) inFlight -= 1;
  };
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/')) return;
    if (inFlight >= options.maxInFlight) {
      options.onShed?.('in_flight');
      throw new ApiError('overloaded', 'Too many requests in progress; retry shortly.', undefined, RETRY_AFTER);
    }
    inFlight += 1;
    counted.add(request);
  });
  app.addHook('onResponse', release);
  app.addHook('onRequestAbort', release);
  if (options.maxEventLoopDelayMs > 0) {
    await app.register(underPressure, {
      maxEventLoopDelay: options.maxEventLoopDelayMs,
      sampleInterval: 100,
      pressureHandler: (_request, _reply, type) => {
        options.onShed?.('event_loop');
        throw new ApiError('overloaded', `Service under pressure (${type}); retry shortly.`, undefined, RETRY_AFTER);
      },
    });
  }
  return { inFlight: () => inFlight };
}
