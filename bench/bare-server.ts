// The hot-path baseline: the fastest bare Fastify server that answers the phone routes with the
// exact bytes the real server gave for the benched number: a synchronous handler sending a
// Buffer held in memory (and, for a client that accepts br, the same brotli bytes the real
// server sent). No parsing, lookup, validation, rate limiting, logging or hooks: the floor
// under our costs. (An async handler sending a string served about a third less under wrk,
// which made the service look nearer the floor than it is.)
//
// With TRIVIAL=1 it is not Fastify at all but node:http answering every request with the same
// bytes: what the load generator itself can drive, shown in the same run so that a ratio
// limited by the generator is seen as such.
// Run as a child process: PORT and BARE_BODIES_FILE in env; the file holds
// {"full", "score", "info"} (text) and {"fullBr", "scoreBr"} (base64, absent when not compressed).
//
// With CEILING_LOG_FILE set it is the *ceiling* instead: the same server plus only what any
// production service of this kind pays per request – one pino access line written to that
// file (asynchronously, as the real server writes it), a Prometheus counter and histogram
// bound to the route, and two headers (a request id and Vary). What the real server costs
// beyond the ceiling is its own work.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { destination as pinoDestination, pino } from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import { holdNextTickShape } from '../src/infra/runtime/tick-shape.js';

interface Bodies {
  full: string;
  score: string;
  info: string;
  fullBr?: string;
  scoreBr?: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function sender(text: string, brBase64: string | undefined) {
  const identity = Buffer.from(text, 'utf8');
  const br = brBase64 === undefined ? undefined : Buffer.from(brBase64, 'base64');
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.header('content-type', JSON_TYPE);
    if (br !== undefined && (request.headers['accept-encoding'] ?? '').includes('br'))
      return reply.header('content-encoding', 'br').send(br);
    return reply.send(identity);
  };
}

/** node:http answering every request with the full report's bytes: the load generator's own ceiling. */
async function startTrivial(bodies: Bodies, port: number): Promise<void> {
  const identity = Buffer.from(bodies.full, 'utf8');
  const server = createHttpServer((request, response) => {
    response.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': identity.length });
    response.end(identity);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

/** The ceiling's per-request costs: two headers, a counter and a histogram, one log line. */
function addCeilingCosts(app: FastifyInstance): void {
  const registers = [new Registry()];
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'requests',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'duration',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id).header('vary', 'Accept-Encoding');
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? '', status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        route: labels.route,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });
}

async function main(): Promise<void> {
  const bodiesFile = process.env.BARE_BODIES_FILE;
  if (bodiesFile === undefined) throw new Error('BARE_BODIES_FILE is not set');
  const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')) as Bodies;
  if (process.env.TRIVIAL === '1') return startTrivial(bodies, Number(process.env.PORT ?? 0));
  // As the service does (src/infra/runtime/tick-shape.ts): without it a process may, at random,
  // pay V8's slow path on every nextTick for its life, and the ratios would compare V8's states.
  await holdNextTickShape();
  const ceilingLog = process.env.CEILING_LOG_FILE;
  // Typed as Fastify's own logger, so the app is a plain FastifyInstance without a cast.
  const ceilingLogger = (dest: string): FastifyBaseLogger =>
    pino({ base: { pid: process.pid } }, pinoDestination({ dest, sync: false }));
  const app: FastifyInstance =
    ceilingLog === undefined
      ? Fastify({ logger: false })
      : Fastify({ loggerInstance: ceilingLogger(ceilingLog), disableRequestLogging: true });
  if (ceilingLog !== undefined) addCeilingCosts(app);
  app.get('/api/phone/:number', sender(bodies.full, bodies.fullBr));
  app.get('/api/phone/:number/score', sender(bodies.score, bodies.scoreBr));
  app.get('/api/phone/:number/info', sender(bodies.info, undefined));
  app.get('/health', async () => ({ status: 'ok' }));
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  process.once('SIGTERM', () => {
    void app.close().then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`bare server failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
