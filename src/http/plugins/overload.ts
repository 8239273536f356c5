// Load shedding: when the process is past what it can serve, answer 503 at once (with
// Retry-After) instead of queueing until every client times out. Two signals:
// - API requests in flight over MAX_IN_FLIGHT (a burst of distinct cold lookups: the event
//   loop stays idle while they wait on upstreams, so only a count catches it);
// - mean event-loop delay over MAX_EVENT_LOOP_DELAY_MS in two sampling intervals in a row
//   (sustained CPU saturation). 0 turns it off. Measured with node:perf_hooks rather than
//   @fastify/under-pressure, which treats an interval without samples as infinite delay and
//   so shed every request after any start-up pause.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export interface OverloadOptions {
  maxInFlight: number;
  maxEventLoopDelayMs: number;
  onShed?: (reason: 'in_flight' | 'event_loop') => void;
}

const RETRY_AFTER = { 'Retry-After': '2' };

export async function registerOverloadProtection(app: FastifyInstance, options: OverloadOptions): Promise<{ inFlight: () => number; eventLoopDelayMs: () => number }> {
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
  let eventLoopDelayMs = 0;
  if (options.maxEventLoopDelayMs > 0) {
    const resolutionMs = 10;
    const sampleIntervalMs = 500;
    const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    histogram.enable();
    let lastSampleAt = performance.now();
    let previousIntervalDelayMs = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      // No sample in the interval means the loop was blocked for (about) all of it.
      const intervalDelayMs = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs) : now - lastSampleAt;
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
    app.addHook('onRequest', async (request) => {
      if (!request.url.startsWith('/api/') || eventLoopDelayMs <= options.maxEventLoopDelayMs) return;
      options.onShed?.('event_loop');
      throw new ApiError('overloaded', 'Service under pressure; retry shortly.', undefined, RETRY_AFTER);
    });
  }
  return { inFlight: () => inFlight, eventLoopDelayMs: () => eventLoopDelayMs };
}
