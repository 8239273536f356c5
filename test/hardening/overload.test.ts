// Overload: a burst far beyond what the service may hold at once (300 concurrent lookups of
// distinct numbers against MAX_IN_FLIGHT=20) is shed at once with 503 and Retry-After instead
// of queueing, the admitted requests complete, nothing answers 500, and the service serves
// normally right after, without a restart. The same holds for every spelling of the phone
// route's path. The sources answer only when the test opens a gate, so "shed at once" is
// shown without any clock: every refusal arrives while the admitted lookups are still held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceOutcome } from '../../src/domain/ports/source.js';
import { fakeSource, SAMPLE_DATA, type FakeSources } from '../../harness/lookup.js';
import { rawExchange, type RawAnswer } from '../../harness/loopback.js';
import { startTestServer, type TestServer } from '../../harness/servers.js';
import { waitUntilServing } from './support/answers.js';

interface Gate {
  opened: Promise<void>;
  open(): void;
}

function newGate(): Gate {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** The gate the sources wait on; a new one per test. */
let gate: Gate = newGate();

function held<T>(value: SourceOutcome<T>, signal: AbortSignal): Promise<SourceOutcome<T>> {
  return new Promise((resolve) => {
    void gate.opened.then(() => resolve(value));
    signal.addEventListener('abort', () => resolve({ status: 'error', reason: 'aborted' }));
  });
}

function gatedSources(): FakeSources {
  return {
    primary: fakeSource('primary', (_number, signal) =>
      held({ status: 'ok', data: structuredClone(SAMPLE_DATA.primary) }, signal),
    ),
    community: fakeSource('community', (_number, signal) =>
      held({ status: 'ok', data: structuredClone(SAMPLE_DATA.community) }, signal),
    ),
    signals: fakeSource('signals', (_number, signal) =>
      held({ status: 'ok', data: structuredClone(SAMPLE_DATA.signals) }, signal),
    ),
  };
}

// Deadlines far beyond the test's own, so no lookup ends on a timeout while the gate is shut.
const LONG_DEADLINES = { SOURCE_TIMEOUT_MS: '60000', LOOKUP_TIMEOUT_MS: '60000' };

/** A server whose sources wait on the gate, admitting at most `maxInFlight` lookups; opened and closed around the describe. */
function useGatedServer(maxInFlight: number): { server: TestServer } {
  const holder = {} as { server: TestServer };
  beforeAll(async () => {
    holder.server = await startTestServer({
      env: { RATE_LIMIT_MAX: '0', MAX_IN_FLIGHT: String(maxInFlight), ...LONG_DEADLINES },
      overrides: { sources: gatedSources() },
    });
    await waitUntilServing(holder.server.app);
  });
  afterAll(async () => {
    gate.open();
    await holder.server.close();
  });
  return holder;
}

interface Burst<T> {
  /** Resolves once `count` answers have arrived, with those answers. */
  first(count: number): Promise<T[]>;
  all(): Promise<T[]>;
}

function burst<T>(requests: Array<() => Promise<T>>): Burst<T> {
  const arrived: T[] = [];
  const waiters: Array<{ count: number; resolve: (answers: T[]) => void }> = [];
  const all = Promise.all(
    requests.map(async (send) => {
      const answer = await send();
      arrived.push(answer);
      for (const waiter of waiters.filter((w) => arrived.length >= w.count))
        waiter.resolve(arrived.slice(0, waiter.count));
      return answer;
    }),
  );
  return {
    first: (count) =>
      new Promise((resolve) =>
        arrived.length >= count ? resolve(arrived.slice(0, count)) : waiters.push({ count, resolve }),
      ),
    all: () => all,
  };
}

const distinctNumber = (first: number, index: number): string => `06${String(first + index).slice(-8)}`;

describe('hardening: overload', () => {
  const MAX_IN_FLIGHT = 20;
  const BURST = 300;
  const serving = useGatedServer(MAX_IN_FLIGHT);

  it('sheds a burst of 300 concurrent cold lookups with 503s while the admitted ones are held, completes those, and recovers', async () => {
    gate = newGate();
    const lookups = burst(
      Array.from({ length: BURST }, (_, index) => async () => {
        const response = await fetch(`${serving.server.baseUrl}/api/phone/${distinctNumber(10_000_000, index)}`);
        const body = (await response.json()) as { success?: boolean; title?: string };
        return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
      }),
    );
    // Nothing can finish while the gate is shut, so exactly MAX_IN_FLIGHT are admitted and
    // every other answer is a refusal that did not wait for any source.
    const shed = await lookups.first(BURST - MAX_IN_FLIGHT);
    expect(shed.map((answer) => answer.status)).toEqual(Array<number>(BURST - MAX_IN_FLIGHT).fill(503));
    for (const answer of shed) {
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(answer.body).toMatchObject({ success: false, title: 'Service overloaded' });
    }
    expect(serving.server.app.overload.inFlight()).toBe(MAX_IN_FLIGHT);
    gate.open();
    const answers = await lookups.all();
    const served = answers.filter((answer) => answer.status === 200);
    expect(served).toHaveLength(MAX_IN_FLIGHT);
    for (const answer of served) expect(answer.body.success).toBe(true);

    // No restart: the next lookups are admitted and answered in full.
    const after = await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        fetch(`${serving.server.baseUrl}/api/phone/${distinctNumber(30_000_000, index)}`),
      ),
    );
    expect(after.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    const health = await fetch(`${serving.server.baseUrl}/health`);
    expect(health.status).toBe(200);
  }, 60_000);
});

describe('hardening: overload through every spelling of the phone route', () => {
  const MAX_IN_FLIGHT = 5;
  const CONCURRENT = 30;
  const serving = useGatedServer(MAX_IN_FLIGHT);

  // Shedding attaches to the route, so any request line the router sends to the phone route
  // is counted and refused like the plain one: encoded letters, absolute form. Each spelling
  // looks up numbers of its own, so none is answered from an earlier one's cache.
  it.each([
    ['an encoded letter in the first segment', 51_000_000, (number: string) => `/%61pi/phone/${number}`],
    ['an encoded letter in the second segment', 52_000_000, (number: string) => `/api/%70hone/${number}/score`],
    ['the absolute form of the request line', 53_000_000, (number: string) => `http://x/api/phone/${number}`],
  ])(
    'sheds 30 concurrent slow lookups sent with %s past MAX_IN_FLIGHT=5 with 503 problem+json',
    async (_name, firstNumber, target) => {
      gate = newGate();
      const port = Number(new URL(serving.server.baseUrl).port);
      const lookups = burst<RawAnswer>(
        Array.from(
          { length: CONCURRENT },
          (_, index) => () =>
            rawExchange(
              port,
              `GET ${target(distinctNumber(firstNumber, index))} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
            ),
        ),
      );
      const shed = await lookups.first(CONCURRENT - MAX_IN_FLIGHT);
      for (const answer of shed) {
        expect(answer.status).toBe(503);
        expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(answer.headers['retry-after']).toMatch(/^\d+$/);
        expect(JSON.parse(answer.body)).toMatchObject({ status: 503, title: 'Service overloaded', success: false });
      }
      expect(serving.server.app.overload.inFlight()).toBe(MAX_IN_FLIGHT);
      gate.open();
      const answers = await lookups.all();
      // The admitted ones reached the phone route itself and were answered by it.
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(MAX_IN_FLIGHT);
      for (const answer of answers.filter((a) => a.status === 200))
        expect(JSON.parse(answer.body)).toMatchObject({ success: true });
    },
    30_000,
  );
});
