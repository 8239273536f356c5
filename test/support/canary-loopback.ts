// One loopback server standing in for a real site while a canary target runs against it: the
// test sets the handler, then runs the canary with the site's base URL pointed at the server.
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { runCanary } from '../../src/sources/canary.js';
import type { CanaryTarget } from '../../src/sources/markers.js';
import { startLoopbackServer, type LoopbackHandler, type LoopbackServer } from './loopback-server.js';

export interface CanaryLoopback {
  /** What the stand-in site answers from now on. */
  handle(handler: LoopbackHandler): void;
  /** Runs only `target` with `urlVariables` (and `env`) pointing at the stand-in. */
  run(numbers: string[], env?: Record<string, string>): Promise<{ healthy: boolean; lines: string[] }>;
}

export function useCanaryLoopback(target: CanaryTarget, urlVariables: string[]): CanaryLoopback {
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
    async run(numbers, env = {}) {
      const url = server?.url ?? '';
      const lines: string[] = [];
      const config = loadConfig({ ...Object.fromEntries(urlVariables.map((name) => [name, url])), ...env });
      const healthy = await runCanary({ config, numbers, out: (line) => lines.push(line), targets: [target] });
      return { healthy, lines };
    },
  };
}
