// One loopback site for the canary's tests, the canary pointed at it: vitest hooks, so it lives
// here and not in harness/ (plain functions shared with the benches).
import { afterAll, beforeAll } from 'vitest';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from '../../harness/loopback.js';
import { loadConfig } from '../../src/config/config.js';
import { runCanary } from '../../src/sources/canary.js';
import type { UpstreamDescription } from '../../src/sources/common/wiring.js';

// One loopback server standing in for a real site while the canary checks one upstream against it: the
// test sets the handler, then runs the canary with the site's base URL pointed at the server.
export interface CanaryLoopback {
  /** What the stand-in site answers from now on. */
  handle(handler: LoopbackHandler): void;
  /** The stand-in's port. */
  port(): number;
  /** Runs only `upstream` with `urlVariables` (and `env`) pointing at the stand-in. */
  run(numbers: string[], env?: Record<string, string>): Promise<{ healthy: boolean; lines: string[] }>;
}

export function useCanaryLoopback(upstream: UpstreamDescription, urlVariables: string[]): CanaryLoopback {
  let server: LoopbackServer | undefined;
  let handler: LoopbackHandler = (_request, response) => response.writeHead(500).end();
  beforeAll(async () => {
    server = await startLoopbackServer((request, response) => handler(request, response));
  });
  afterAll(async () => {
    await server?.close();
  });
  return {
    handle(next) {
      handler = next;
    },
    port: () => server?.port ?? 0,
    async run(numbers, env = {}) {
      const url = server?.url ?? '';
      const lines: string[] = [];
      const config = loadConfig({ ...Object.fromEntries(urlVariables.map((name) => [name, url])), ...env });
      const healthy = await runCanary({ config, numbers, out: (line) => lines.push(line), upstreams: [upstream] });
      return { healthy, lines };
    },
  };
}
