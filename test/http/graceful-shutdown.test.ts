// The real server process: SIGTERM while a request is in flight lets that request finish,
// then the process exits on its own within the grace period.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, startSlowUnknownUpstream, type SlowUpstream } from '../../harness/servers.js';

describe('graceful shutdown', () => {
  let upstream: SlowUpstream;
  beforeAll(async () => {
    upstream = await startSlowUnknownUpstream(700);
  });
  afterAll(async () => upstream.close());

  it('completes a request in flight when SIGTERM arrives, then exits 0', async () => {
    const server = await spawnServer({ ...upstream.env, SHUTDOWN_GRACE_MS: '5000' });
    const reachedUpstream = upstream.nextRequest();
    const inFlight = fetch(`${server.baseUrl}/api/phone/0612345678/score`);
    // The request is in flight once the service is asking an upstream about it.
    await reachedUpstream;
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      success: true,
      data: { number: '0612345678', score: null, risk: 'unknown' },
    });
    expect(await server.exited, server.output()).toBe(0);
    // SHUTDOWN_GRACE_MS (5 s) is the deadline under test: the in-flight lookup takes under a
    // second, so the process must have ended well within it.
    expect(Date.now() - signalledAt).toBeLessThan(5000);
    // After shutdown nothing listens any more.
    await expect(fetch(`${server.baseUrl}/health`)).rejects.toThrow();
  }, 90_000);
});
