// What the operator console shows of an upstream's budget (docs/console.md): the per-minute
// budget and the requests this instance was granted of it in the last minute, counted to the second.
import { describe, expect, it } from 'vitest';
import type { HttpClient, HttpResult } from './types.js';
import { createUpstreamFetcher } from './upstream-fetcher.js';

const ok: HttpResult = {
  kind: 'response',
  response: { status: 200, headers: {}, body: '', url: 'http://127.0.0.1/x' },
};

describe('upstream fetcher: the budget used', () => {
  it('counts the requests granted in the sliding minute, and forgets them a minute later', async () => {
    let nowMs = Date.UTC(2026, 10, 30, 14);
    const client: HttpClient = { request: async () => ok };
    const fetcher = createUpstreamFetcher({
      upstream: 't',
      client,
      requestsPerMinute: 3,
      maxConcurrency: 2,
      now: () => nowMs,
    });
    expect(fetcher.budget?.()).toEqual({ used: 0, perMinute: 3 });
    for (let sent = 0; sent < 2; sent += 1)
      expect(await fetcher.fetch({ url: 'http://127.0.0.1/x', signal: AbortSignal.timeout(2000) })).toMatchObject({
        kind: 'response',
      });
    expect(fetcher.budget?.()).toEqual({ used: 2, perMinute: 3 });
    nowMs += 30_000;
    await fetcher.fetch({ url: 'http://127.0.0.1/x', signal: AbortSignal.timeout(2000) });
    expect(fetcher.budget?.()).toEqual({ used: 3, perMinute: 3 });
    // The budget is spent: a refusal is not counted as used.
    expect(await fetcher.fetch({ url: 'http://127.0.0.1/x', signal: AbortSignal.timeout(2000) })).toMatchObject({
      kind: 'failure',
      failure: { reason: 'budget' },
    });
    expect(fetcher.budget?.()).toEqual({ used: 3, perMinute: 3 });
    nowMs += 30_001;
    expect(fetcher.budget?.()).toEqual({ used: 1, perMinute: 3 });
  });
});
