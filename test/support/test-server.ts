// Starts the real application on 127.0.0.1 with a chosen environment, for tests that send
// real HTTP requests. The numbering plan is parsed once per test file.
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createServiceDependencies, type ServiceOverrides } from '../../src/composition.js';
import type { NumberingPlan } from '../../src/domain/numbering/numbering-plan.js';
import { loadNumberingPlan } from '../../src/infra/arcep/load-numbering-plan.js';

let plan: NumberingPlan | undefined;
export function testNumberingPlan(): NumberingPlan {
  plan ??= loadNumberingPlan('data/arcep');
  return plan;
}

export interface TestServer {
  baseUrl: string;
  app: FastifyInstance;
  config: Config;
  close(): Promise<void>;
}

export async function startTestServer(options: { env?: Record<string, string>; overrides?: ServiceOverrides; logger?: Logger } = {}): Promise<TestServer> {
  const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', ...options.env });
  const deps = await createServiceDependencies(config, options.logger, { numberingPlan: testNumberingPlan(), ...options.overrides });
  const app = await buildApp({ ...deps.app, logger: options.logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    app,
    config,
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}
