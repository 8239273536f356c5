// The hot-path baseline: a bare Fastify server that answers the two phone routes with the
// exact JSON bodies the real server gave for the benched number, held in memory as strings.
// No parsing, lookup, validation, rate limiting, logging or hooks: the floor under our costs.
// Run as a child process: PORT and BARE_BODIES_FILE ({"full": "...", "score": "..."}) in env.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

interface Bodies {
  full: string;
  score: string;
}

async function main(): Promise<void> {
  const bodiesFile = process.env.BARE_BODIES_FILE;
  if (bodiesFile === undefined) throw new Error('BARE_BODIES_FILE is not set');
  const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')) as Bodies;
  const app = Fastify({ logger: false });
  app.get('/api/phone/:number', async (_request, reply) => reply.type('application/json; charset=utf-8').send(bodies.full));
  app.get('/api/phone/:number/score', async (_request, reply) => reply.type('application/json; charset=utf-8').send(bodies.score));
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
