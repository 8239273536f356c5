import { describe, expect, it } from 'vitest';
import { createServiceMetrics, labelValue } from './service-metrics.js';
import { instrumentSourceCache, instrumentUpstreamFetcher } from './instrument.js';
import type { CachedSourceResult, SourceResultCache } from '../cache/source-cache.js';
import type { UpstreamFetcher } from '../http/types.js';

describe('metric labels', () => {
  it('keep closed-vocabulary values and refuse anything that could be a number or a hash', () => {
    expect(labelValue('/api/phone/:number')).toBe('/api/phone/:number');
    expect(labelValue('circuit_open')).toBe('circuit_open');
    expect(labelValue('(unmatched)')).toBe('(unmatched)');
    expect(labelValue('/api/phone/0612345678')).toBe('other');
    expect(labelValue('+33612345678')).toBe('other');
    expect(labelValue('v1:primary:Zk3l0aQ1xW9sPq2mN7bV4cT8')).toBe('other');
    expect(labelValue('a'.repeat(80))).toBe('other');
  });
});

describe('service metrics', () => {
  it('reads pause and circuit gauges at scrape time', async () => {
    let now = 1_000_000;
    let pausedUntil = 0;
    let state: 'closed' | 'open' | 'half_open' = 'closed';
    const metrics = createServiceMetrics({ collectProcessMetrics: false, now: () => now });
    metrics.watchUpstreams({
      pauses: [{ upstream: 'numeroinconnu', pausedUntilMs: () => pausedUntil }],
      circuits: [{ slot: 'community', upstream: 'numeroinconnu', state: () => state }],
    });
    let text = await metrics.registry.metrics();
    expect(text).toContain('phone_rep_upstream_paused{upstream="numeroinconnu"} 0');
    expect(text).toContain('phone_rep_circuit_state{slot="community",upstream="numeroinconnu",state="closed"} 1');
    pausedUntil = now + 90_000;
    state = 'open';
    text = await metrics.registry.metrics();
    expect(text).toContain('phone_rep_upstream_paused{upstream="numeroinconnu"} 1');
    expect(text).toContain('phone_rep_upstream_pause_remaining_seconds{upstream="numeroinconnu"} 90');
    expect(text).toContain('phone_rep_circuit_state{slot="community",upstream="numeroinconnu",state="open"} 1');
    expect(text).toContain('phone_rep_circuit_state{slot="community",upstream="numeroinconnu",state="closed"} 0');
    now += 100_000;
    expect(await metrics.registry.metrics()).toContain('phone_rep_upstream_paused{upstream="numeroinconnu"} 0');
  });

  it('counts fetcher requests by HTTP status or by outcome and reason', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    const answers: Array<Awaited<ReturnType<UpstreamFetcher['fetch']>>> = [
      { kind: 'response', response: { status: 200, headers: {}, body: '', url: 'http://127.0.0.1/x' } },
      { kind: 'outcome', outcome: { status: 'blocked', reason: 'http_429', retryAfterMs: 1000 } },
      { kind: 'outcome', outcome: { status: 'error', reason: 'timeout' } },
    ];
    const fetcher = instrumentUpstreamFetcher(
      { upstream: 'telguarder', pausedUntil: () => 0, fetch: async () => answers.shift() ?? { kind: 'outcome', outcome: { status: 'error', reason: 'connection' } } },
      metrics,
    );
    for (let i = 0; i < 3; i += 1) await fetcher.fetch({ url: 'http://127.0.0.1/0612345678', signal: new AbortController().signal });
    const text = await metrics.registry.metrics();
    expect(text).toContain('phone_rep_upstream_requests_total{upstream="telguarder",status="200",reason=""} 1');
    expect(text).toContain('phone_rep_upstream_requests_total{upstream="telguarder",status="blocked",reason="http_429"} 1');
    expect(text).toContain('phone_rep_upstream_requests_total{upstream="telguarder",status="error",reason="timeout"} 1');
    expect(text).toContain('phone_rep_upstream_request_duration_seconds_count{upstream="telguarder"} 3');
    expect(text).not.toContain('0612345678');
  });

  it('counts cache reads per layer as hit, stale or miss', async () => {
    let now = 10_000;
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    const entry: CachedSourceResult = { status: 'ok', data: {}, fetchedAt: '', freshUntil: 20_000, staleUntil: 30_000 };
    const store = new Map<string, CachedSourceResult>([['v1:primary:abc', entry]]);
    const inner: SourceResultCache & { size(): number } = {
      get: async (key) => store.get(key),
      set: async (key, value) => {
        store.set(key, value);
      },
      size: () => store.size,
    };
    const cache = instrumentSourceCache(inner, 'memory', metrics, () => now);
    await cache.get('v1:primary:abc');
    now = 25_000;
    await cache.get('v1:primary:abc');
    now = 35_000;
    await cache.get('v1:primary:abc');
    await cache.get('v1:signals:def');
    expect(cache.size()).toBe(1);
    const text = await metrics.registry.metrics();
    expect(text).toContain('phone_rep_cache_reads_total{layer="memory",slot="primary",result="hit"} 1');
    expect(text).toContain('phone_rep_cache_reads_total{layer="memory",slot="primary",result="stale"} 1');
    expect(text).toContain('phone_rep_cache_reads_total{layer="memory",slot="primary",result="miss"} 1');
    expect(text).toContain('phone_rep_cache_reads_total{layer="memory",slot="signals",result="miss"} 1');
  });

  it('keeps two registries apart', async () => {
    const a = createServiceMetrics({ collectProcessMetrics: false });
    const b = createServiceMetrics({ collectProcessMetrics: false });
    a.recordRateLimitRejection();
    expect(await a.registry.metrics()).toContain('phone_rep_rate_limit_rejections_total 1');
    expect(await b.registry.metrics()).toContain('phone_rep_rate_limit_rejections_total 0');
  });
});
