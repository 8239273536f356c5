// Load shedding, on the routes whose config says `shed: true`: when the process is past what
// it can serve, answer 503 at once (with Retry-After) instead of queueing until every client
// times out. Two signals:
// - API requests in flight over MAX_IN_FLIGHT (a burst of distinct cold lookups: the event
//   loop stays idle while they wait on upstreams, so only a count catches it);
// - mean event-loop delay over MAX_EVENT_LOOP_DELAY_MS in two sampling intervals in a row
//   (sustained CPU saturation). 0 turns it off. Measured with node:perf_hooks rather than
//   @fastify/under-pressure, which treats an interval without samples as infinite delay and
//   so shed every request after any start-up pause.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../errors.js';
import { routeFeatures } from '../route-config.js';
import { hooksOf } from './request-context.js';

export interface OverloadOptions {
  maxInFlight: number;
  maxEventLoopDelayMs: number;
  onShed?: (reason: 'in_flight' | 'event_loop') => void;
}

declare module 'fastify' {
  interface FastifyInstance {
    overload: { inFlight(): number; eventLoopDelayMs(): number };
  }
}

const RETRY_AFTER = { 'Retry-After': '2' };

export const overloadPlugin = fp(
  async (app: FastifyInstance, options: OverloadOptions) => {
    let inFlight = 0;
    // One shared listener: an admitted request leaves the count when its response closes,
    // whether it was answered or the client went away.
    const release = (): void => {
      inFlight -= 1;
    };
    let eventLoopDelayMs = 0;
    // Callback style: nothing here waits, so no promise is made per request.
    const shed = (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      if (inFlight >= options.maxInFlight) {
        options.onShed?.('in_flight');
        return done(
          new ApiError('overloaded', 'Too many requests in progress; retry shortly.', undefined, RETRY_AFTER),
        );
      }
      if (options.maxEventLoopDelayMs > 0 && eventLoopDelayMs > options.maxEventLoopDelayMs) {
        options.onShed?.('event_loop');
        return done(new ApiError('overloaded', 'Service under pressure; retry shortly.', undefined, RETRY_AFTER));
      }
      inFlight += 1;
      // 'close' is emitted once per response, so `on` (no wrapper closure) is enough.
      reply.raw.on('close', release);
      done();
    };
    app.addHook('onRoute', (route) => {
      if (routeFeatures(route.config).shed) route.onRequest = [...hooksOf(route.onRequest), shed];
    });
    app.decorate('overload', { inFlight: () => inFlight, eventLoopDelayMs: () => eventLoopDelayMs });
    if (options.maxEventLoopDelayMs <= 0) return;
    const resolutionMs = 10;
    const sampleIntervalMs = 500;
    const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    histogram.enable();
    let lastSampleAt = performance.now();
    let previousIntervalDelayMs = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      // No sample in the interval means the loop was blocked for (about) all of it.
      const intervalDelayMs =
        histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs) : now - lastSampleAt;
      // Only a sustained delay (two intervals in a row) sheds load: one long pause (start-up,
      // a large GC) is over by the time we would refuse anyone.
      eventLoopDelayMs = Math.min(intervalDelayMs, previousIntervalDelayMs);
      previousIntervalDelayMs = intervalDelayMs;
      lastSampleAt = now;
      histogram.reset();
    }, sampleIntervalMs);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      histogram.disable();
    });
  },
  { name: 'overload', fastify: '5.x' },
);
