// Overload: a burst far beyond what the service may hold at once (300 concurrent lookups of
// distinct numbers against MAX_IN_FLIGHT=20, every source slow) is shed at once with 503 and
// Retry-After instead of queueing, the admitted requests complete, nothing answers 500, and
// the service serves normally right after, without a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceOutcome } from '../../src/sources/source.js';
import { fakeSource, SAMPLE_DATA, type FakeSources } from '../support/fake-sources.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { waitUntilServing } from './support/answers.js';

const SOURCE_DELAY_MS = 800;
const MAX_IN_FLIGHT = 20;
const BURST = 300;

function slowly<T>(value: SourceOutcome<T>, signal: AbortSignal): Promise<SourceOutcome<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(value), SOURCE_DELAY_MS);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve({ status: 'error', reason: 'aborted' });
    });
  });
}

function slowSources(): FakeSources {
  return {
    primary: fakeSource('primary', (_number, signal) => slowly({ status: 'ok', data: structuredClone(SAMPLE_DATA.primary) }, signal)),
    community: fakeSource('community', (_number, signal) => slowly({ status: 'ok', data: structuredClone(SAMPLE_DATA.community) }, signal)),
    signals: fakeSource('signals', (_number, signal) => slowly({ status: 'ok', data: structuredClone(SAMPLE_DATA.signals) }, signal)),
  };
}

describe('hardening: overload', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0', MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) }, overrides: { sources: slowSources() } });
    await waitUntilServing(server.app);
  });
  afterAll(async () => {
    await server.close();
  });

  it('sheds a burst of 300 concurrent cold lookups with quick 503s, completes the admitted ones, and recovers', async () => {
    const startedAt = Date.now();
    const answers = await Promise.all(
      Array.from({ length: BURST }, async (_, index) => {
        const response = await fetch(`${server.baseUrl}/api/phone/06${String(10_000_000 + index).slice(-8)}`);
        const body = (await response.json()) as { success?: boolean; title?: string };
        return { status: response.status, retryAfter: response.headers.get('retry-after'), body, elapsedMs: Date.now() - startedAt };
      }),
    );
    const byStatus = new Map<number, number>();
    for (const answer of answers) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    expect([...byStatus.keys()].every((status) => status === 200 || status === 429 || status === 503), JSON.stringify([...byStatus])).toBe(true);
    const shed = answers.filter((answer) => answer.status === 503);
    const served = answers.filter((answer) => answer.status === 200);
    expect(shed.length).toBeGreaterThanOrEqual(BURST - MAX_IN_FLIGHT * 3);
    expect(served.length).toBeGreaterThan(0);
    for (const answer of shed) {
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(answer.body).toMatchObject({ success: false, title: 'Service overloaded' });
    }
    // Shed answers do not wait for the slow sources: most of them come back before any lookup could finish.
    const shedBeforeFirstLookupCouldEnd = shed.filter((answer) => answer.elapsedMs < SOURCE_DELAY_MS).length;
    expect(shedBeforeFirstLookupCouldEnd).toBeGreaterThan(shed.length / 2);
    for (const answer of served) expect(answer.body.success).toBe(true);

    // No restart: the next lookups are admitted and answered in full.
    const after = await Promise.all(Array.from({ length: 5 }, (_, index) => fetch(`${server.baseUrl}/api/phone/06${String(30_000_000 + index).slice(-8)}`)));
    expect(after.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    const health = await fetch(`${server.baseUrl}/health`);
    expect(health.status).toBe(200);
  }, 30_000);
});
