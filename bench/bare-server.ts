// The hot-path baseline: a bare Fastify server that answers the phone routes with the exact
// bodies the real server gave for the benched number, held in memory: as strings, and, for a
// client that accepts br, as the same brotli bytes the real server sent. No parsing, lookup,
// validation, rate limiting, logging or hooks: the floor under our costs.
// Run as a child process: PORT and BARE_BODIES_FILE in env; the file holds
// {"full", "score", "info"} (text) and {"fullBr", "scoreBr"} (base64, absent when not compressed).
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

interface Bodies {
  full: string;
  score: string;
  info: string;
  fullBr?: string;
  scoreBr?: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function sender(text: string, brBase64: string | undefined) {
  const br = brBase64 === undefined ? undefined : Buffer.from(brBase64, 'base64');
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply.type(JSON_TYPE);
    if (br !== undefined && (request.headers['accept-encoding'] ?? '').includes('br')) return reply.header('content-encoding', 'br').send(br);
    return reply.send(text);
  };
}

async function main(): Promise<void> {
  const bodiesFile = process.env.BARE_BODIES_FILE;
  if (bodiesFile === undefined) throw new Error('BARE_BODIES_FILE is not set');
  const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')) as Bodies;
  const app = Fastify({ logger: false });
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
