// Graceful shutdown under load: the real server process receives SIGTERM while eight clients
// keep sending lookups (a bounded number), each answered only after slow upstreams. Every
// lookup the server was working on when the signal came (its number had reached the upstreams)
// is answered in full (none lost), the other requests are either
// answered or refused at the door (never cut off after being read), and the process exits 0
// within its grace period. The same holds when the signal is repeated during the grace period
// (an impatient orchestrator, Ctrl-C twice): the repeats change nothing.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/redis.js';
import { spawnServer, startSlowUnknownUpstream, type SlowUpstream } from '../../harness/servers.js';

const UPSTREAM_DELAY_MS = 300;
const GRACE_MS = 5000;
const CLIENTS = 8;
const MAX_REQUESTS = 400;

interface Outcome {
  /** The eight digits after 06 that make this lookup's number unique. */
  digits: string;
  status?: number;
  error?: string;
}

/** One request on a fresh connection, so a refusal at the door is told apart from a cut. */
function lookupOnce(port: number, path: string): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const request = http.get(
      { host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: `body:${error.code ?? error.message}` }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
}

describe('hardening: graceful shutdown under load', () => {
  let upstream: SlowUpstream;
  beforeAll(async () => {
    upstream = await startSlowUnknownUpstream(UPSTREAM_DELAY_MS);
  });
  afterAll(async () => upstream.close());

  it.each([
    { name: 'one SIGTERM', signals: ['SIGTERM'] as const },
    { name: 'SIGTERM twice', signals: ['SIGTERM', 'SIGTERM'] as const },
    { name: 'SIGTERM then SIGINT', signals: ['SIGTERM', 'SIGINT'] as const },
  ])(
    '$name: loses no request sent before the first signal, refuses later ones cleanly, and exits 0 within the grace period',
    async ({ signals }) => {
      const server = await spawnServer({
        ...upstream.env,
        RATE_LIMIT_MAX: '0',
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        // Every lookup is a distinct number, so none is answered from the cache or coalesced.
        TELLOWS_RPM: '100000',
        NUMEROINCONNU_RPM: '100000',
        TELGUARDER_RPM: '100000',
        UPSTREAM_CONCURRENCY: '64',
      });
      const { child, port, exited } = server;
      // The first lookups warm the process (lazy data, JIT) before the load is measured.
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const warm = await lookupOnce(port, '/api/phone/0612345678');
        if ('status' in warm && warm.status === 200) break;
      }

      // The upstream is shared by the three cases: only what reaches it from this one counts.
      const earlierRequests = upstream.requestedUrls().length;
      const requestedHere = (): string[] => upstream.requestedUrls().slice(earlierRequests);
      let sent = 0;
      const outcomes: Outcome[] = [];
      const runClient = async (client: number): Promise<void> => {
        while (sent < MAX_REQUESTS) {
          sent += 1;
          const digits = String(40_000_000 + client * 1000 + sent).slice(-8);
          const result = await lookupOnce(port, `/api/phone/06${digits}`);
          outcomes.push({ digits, ...result });
          if ('error' in result && result.error === 'ECONNREFUSED') return;
        }
      };
      const clients = Array.from({ length: CLIENTS }, (_, client) => runClient(client));
      // Under load: every client has a lookup waiting on the slow upstreams.
      const reachedUpstream = (digits: string, urls: readonly string[]): boolean =>
        urls.some((url) => url.includes(digits));
      const lookupsAtUpstream = (): number =>
        new Set(
          requestedHere()
            .map((url) => /40\d{6}/.exec(url)?.[0])
            .filter((digits) => digits !== undefined),
        ).size;
      await waitFor(() => lookupsAtUpstream() >= CLIENTS, 20_000);
      child.kill(signals[0]);
      const signalledAt = Date.now();
      // What the server had read and was working on when the signal came: lookups whose number
      // had already reached the upstreams.
      const seenAtSignal = requestedHere();
      // The repeat is sent once the server has handled the first signal (two identical pending
      // signals would merge into one), while lookups accepted before it are still waiting on the
      // upstreams (UPSTREAM_DELAY_MS): in the middle of the grace period.
      for (const repeat of signals.slice(1)) {
        await server.printed(/received: finishing in-flight requests/);
        expect(child.kill(repeat), 'the process is still running when the signal is repeated').toBe(true);
      }
      await Promise.all(clients);
      const exitCode = await exited;
      const exitedAfterMs = Date.now() - signalledAt;

      const accepted = outcomes.filter((outcome) => reachedUpstream(outcome.digits, seenAtSignal));
      const rest = outcomes.filter((outcome) => !reachedUpstream(outcome.digits, seenAtSignal));
      expect(accepted.length).toBeGreaterThanOrEqual(CLIENTS);
      expect(accepted.filter((outcome) => outcome.status !== 200)).toEqual([]);
      // The rest: answered (200, or 503 while closing) or refused/reset at connect, never cut mid-answer.
      for (const outcome of rest) {
        if (outcome.status !== undefined) expect([200, 503]).toContain(outcome.status);
        else expect(outcome.error, JSON.stringify(outcome)).toMatch(/^(ECONNREFUSED|ECONNRESET)$/);
      }
      expect(exitCode, server.output()).toBe(0);
      if (signals.length > 1) expect(server.output()).toContain('received again: already shutting down');
      expect(exitedAfterMs).toBeLessThan(GRACE_MS);
    },
    60_000,
  );
});
