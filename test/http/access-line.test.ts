// The access line is written by the root logger with the request id as a field (plugins/metrics.ts)
// and the per-request child logger is made only when something else logs
// (src/http/lazy-request-logger.ts): over real HTTP, the line keeps the shape a child wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '../support/loggers.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';

describe('the access line without a child logger per request', () => {
  const capture = capturingLogger();
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      env: { MAX_EVENT_LOOP_DELAY_MS: '0' },
      logger: capture.logger,
      overrides: { sources: healthyFakeSources() },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('writes the line a child would have written, request id included, and makes no child for a served request', async () => {
    const childrenBefore = capture.children();
    const ids: string[] = [];
    for (const path of [
      '/api/phone/0612345678',
      '/api/phone/0612345678',
      '/api/phone/0612345678/score',
      '/health',
      '/api/phone/12ab',
    ]) {
      const answer = await fetch(`${server.baseUrl}${path}`);
      await answer.arrayBuffer();
      ids.push(answer.headers.get('x-request-id') ?? '');
    }
    expect(capture.children()).toBe(childrenBefore);
    const accessLines = capture.raw.filter((line) => line.includes('"msg":"request"'));
    expect(accessLines).toHaveLength(5);
    for (const [index, line] of accessLines.entries()) {
      // The key order of a child's line: its bindings (pid, then reqId) before the fields.
      expect(Object.keys(JSON.parse(line) as object)).toEqual([
        'level',
        'time',
        'pid',
        'reqId',
        'method',
        'route',
        'status',
        'durationMs',
        'msg',
      ]);
      expect((JSON.parse(line) as { reqId: string }).reqId).toBe(ids[index]);
    }
    expect(accessLines.map((line) => (JSON.parse(line) as { status: number }).status)).toEqual([
      200, 200, 200, 200, 400,
    ]);
  });
});
