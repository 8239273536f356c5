// ADMIN_HOST and METRICS_HOST: the admin API's and the metrics' own ports listen on loopback
// unless told otherwise, whatever HOST the API listens on. Linux routes all of 127.0.0.0/8 to
// the loopback interface, so a socket bound to one of its addresses refuses the others: the API
// on 127.0.0.3 stands for a public interface, 127.0.0.2 for a LAN address.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';

const TOKEN = 'an-admin-token-of-at-least-32-characters';
const dir = mkdtempSync(join(tmpdir(), 'listen-hosts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The status of GET path on host:port, or the connection error's code. */
async function reach(host: string, port: number, path: string): Promise<number | string> {
  try {
    return (await fetch(`http://${host}:${port}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status;
  } catch (error) {
    const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
    return cause?.code ?? String(error);
  }
}

async function started(
  env: Record<string, string>,
): Promise<Awaited<ReturnType<typeof startServer>> & { metricsPort: number; adminPort: number }> {
  const config = loadConfig({
    HOST: '127.0.0.3',
    PORT: '0',
    METRICS_PORT: '0',
    ADMIN_PORT: '0',
    ADMIN_TOKEN: TOKEN,
    LISTS_FILE: join(dir, 'lists.csv'),
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...env,
  });
  const running = await startServer(config);
  const { metricsPort, adminPort } = running;
  if (metricsPort === undefined || adminPort === undefined) {
    await running.close();
    throw new Error('METRICS_PORT and ADMIN_PORT were set, yet a port is missing');
  }
  return { ...running, metricsPort, adminPort };
}

describe('ADMIN_HOST and METRICS_HOST', () => {
  it('default to loopback (127.0.0.1), not HOST', async () => {
    const running = await started({});
    try {
      expect(await reach('127.0.0.1', running.metricsPort, '/metrics')).toBe(200);
      expect(await reach('127.0.0.3', running.metricsPort, '/metrics')).toBe('ECONNREFUSED');
      expect(await reach('127.0.0.1', running.adminPort, '/admin/lists/rules')).toBe(200);
      expect(await reach('127.0.0.3', running.adminPort, '/admin/lists/rules')).toBe('ECONNREFUSED');
      // Neither is on the API port then.
      expect(await reach('127.0.0.3', running.port, '/metrics')).toBe(404);
      expect(await reach('127.0.0.3', running.port, '/admin/lists/rules')).toBe(404);
      expect(await reach('127.0.0.3', running.port, '/health')).toBe(200);
    } finally {
      await running.close();
    }
  });

  it('put each port on the address given', async () => {
    const running = await started({ METRICS_HOST: '127.0.0.2', ADMIN_HOST: '127.0.0.2' });
    try {
      expect(await reach('127.0.0.2', running.metricsPort, '/metrics')).toBe(200);
      expect(await reach('127.0.0.1', running.metricsPort, '/metrics')).toBe('ECONNREFUSED');
      expect(await reach('127.0.0.2', running.adminPort, '/admin/lists/rules')).toBe(200);
      expect(await reach('127.0.0.1', running.adminPort, '/admin/lists/rules')).toBe('ECONNREFUSED');
    } finally {
      await running.close();
    }
  });
});
