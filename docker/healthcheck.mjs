// The image's HEALTHCHECK: exit 0 when /health/ready answers 200, 1 otherwise (503 while
// shutting down or without numbering data, no answer within 4 s, connection refused).
// Node itself, since the slim base has no curl. It asks the server on this container's
// loopback, at the port and address family the server listens on (PORT, HOST).
/* global fetch, AbortSignal */
import process from 'node:process';

const port = process.env.PORT || '3000';
const host = process.env.HOST || '0.0.0.0';
const address = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;

try {
  const answer = await fetch(`http://${address}:${port}/health/ready`, { signal: AbortSignal.timeout(4000) });
  await answer.body?.cancel();
  process.exitCode = answer.status === 200 ? 0 : 1;
} catch (error) {
  process.stderr.write(`health check failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
