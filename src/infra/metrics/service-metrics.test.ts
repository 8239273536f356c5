import { describe, expect, it } from 'vitest';
import { createServiceMetrics, labelValue, markerLabelValue } from './service-metrics.js';
import { instrumentSourceCache, instrumentUpstreamFetcher } from './instrument.js';
import type { CachedSourceResult, SourceResultCache } from '../../domain/ports/source-cache.js';
import type { UpstreamFetcher } from '../http/types.js';
import { parseExposition } from '../../../test/support/contracts.js';

describe('metric labels', () => {
  it('keep closed-vocabulary values and refuse anything that could be a number or a hash', () => {
    expect(labelValue('/api/phone/:number')).toBe('/api/phone/:number');
    expect(labelValue('circuit_open')).toBe('circuit_open');
    expect(labelValue('(unmatched)')).toBe('(unmatched)');
    expect(labelValue('/api/phone/0612345678')).toBe('other');
    expect(labelValue('+33612345678')).toBe('other');
    expect(labelValue('v3:primary:Zk3l0aQ1xW9sPq2mN7bV4cT8')).toBe('other');
    expect(labelValue('a'.repeat(80))).toBe('other');
  });
});

describe('canary marker labels', () => {
  it('keep a selector-like marker name and refuse a digit run or a control character', () => {
    expect(markerLabelValue('comments count (#count-comments or row "Nombre de commentaires")')).toBe(
      'comments count (#count-comments or row "Nombre de commentaires")',
    );
    expect(markerLabelValue('#securityLevelValue[data-security-level]')).toBe(
      '#securityLevelValue[data-security-level]',
    );
    expect(markerLabelValue('row for 0612345678')).toBe('other');
    expect(markerLabelValue('a\nb')).toBe('other');
  });

  it('expose the canary gauges: 1 for a missing marker, 0 for a found one, and the last run time', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    metrics.setCanaryMarkerMissing('telguarder', 'div.ai-number-stats-panel', true);
    metrics.setCanaryMarkerMissing('tellows', 'img.scoreimage', false);
    metrics.setCanaryLastRun('telguarder', 1_790_000_000);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'phone_rep_canary_marker_missing{upstream="telguarder",marker="div.ai-number-stats-panel"} 1',
    );
    expect(text).toContain('phone_rep_canary_marker_missing{upstream="tellows",marker="img.scoreimage"} 0');
    expect(text).toContain('phone_rep_canary_last_run_timestamp_seconds{upstream="telguarder"} 1790000000');
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

  it('counts fetcher requests with outcome, HTTP status and reason in separate labels', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    const answers: Array<Awaited<ReturnType<UpstreamFetcher['fetch']>>> = [
      { kind: 'response', response: { status: 200, headers: {}, body: '', url: 'http://127.0.0.1/x' } },
      { kind: 'response', response: { status: 404, headers: {}, body: '', url: 'http://127.0.0.1/x' } },
      { kind: 'failure', failure: { kind: 'blocked', reason: 'http_429', retryAfterMs: 1000 } },
      { kind: 'failure', failure: { kind: 'error', reason: 'http_5xx' } },
      { kind: 'failure', failure: { kind: 'error', reason: 'timeout' } },
    ];
    const fetcher = instrumentUpstreamFetcher(
      {
        upstream: 'telguarder',
        pausedUntil: () => 0,
        fetch: async () => answers.shift() ?? { kind: 'failure', failure: { kind: 'error', reason: 'connection' } },
      },
      metrics,
    );
    for (let i = 0; i < 5; i += 1)
      await fetcher.fetch({ url: 'http://127.0.0.1/0612345678', signal: new AbortController().signal });
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="telguarder",outcome="response",status_code="200",reason=""} 1',
    );
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="telguarder",outcome="response",status_code="404",reason=""} 1',
    );
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="telguarder",outcome="blocked",status_code="429",reason="http_429"} 1',
    );
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="telguarder",outcome="error",status_code="5xx",reason="http_5xx"} 1',
    );
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="telguarder",outcome="error",status_code="",reason="timeout"} 1',
    );
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="telguarder",outcome="error",status_code="",reason="connection"} 0',
    );
    expect(text).toContain('phone_rep_upstream_request_duration_seconds_count{upstream="telguarder"} 5');
    expect(text).not.toContain('0612345678');
  });

  it('does not count a spent budget or a pause as a request sent to the upstream', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    const answers: Array<Awaited<ReturnType<UpstreamFetcher['fetch']>>> = [
      { kind: 'failure', failure: { kind: 'blocked', reason: 'budget' } },
      { kind: 'failure', failure: { kind: 'blocked', reason: 'paused', retryAfterMs: 1000 } },
      { kind: 'failure', failure: { kind: 'error', reason: 'connection' } },
    ];
    const fetcher = instrumentUpstreamFetcher(
      {
        upstream: 'numeroinconnu',
        pausedUntil: () => 0,
        fetch: async () => answers.shift() ?? { kind: 'failure', failure: { kind: 'error', reason: 'connection' } },
      },
      metrics,
    );
    for (let i = 0; i < 3; i += 1)
      await fetcher.fetch({ url: 'http://127.0.0.1/x', signal: new AbortController().signal });
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('reason="budget"');
    expect(text).not.toContain('reason="paused"');
    expect(text).toContain(
      'phone_rep_upstream_requests_total{upstream="numeroinconnu",outcome="error",status_code="",reason="connection"} 1',
    );
    expect(text).toContain('phone_rep_upstream_request_duration_seconds_count{upstream="numeroinconnu"} 1');
  });

  it('counts cache reads per layer as hit, stale or miss', async () => {
    let now = 10_000;
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    const entry: CachedSourceResult = { status: 'ok', data: {}, fetchedAt: '', freshUntil: 20_000, staleUntil: 30_000 };
    const store = new Map<string, CachedSourceResult>([['v3:primary:abc', entry]]);
    const inner: SourceResultCache & { size(): number } = {
      get: async (key) => store.get(key),
      set: async (key, value) => {
        store.set(key, value);
      },
      size: () => store.size,
    };
    const cache = instrumentSourceCache(inner, 'memory', metrics, () => now);
    await cache.get('v3:primary:abc');
    now = 25_000;
    await cache.get('v3:primary:abc');
    now = 35_000;
    await cache.get('v3:primary:abc');
    await cache.get('v3:signals:def');
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

  it("drops prom-client's *_total gauges and serves an exposition that passes the promtool rules", async () => {
    const metrics = createServiceMetrics();
    metrics.observeHttpRequest({ method: 'GET', route: '/api/phone/:number', statusCode: 200, durationSeconds: 0.01 });
    metrics.recordSourceOutcome({ slot: 'primary', upstream: 'tellows', status: 'ok', durationMs: 12, cache: 'miss' });
    const { families, problems } = parseExposition(await metrics.registry.metrics());
    expect(problems).toEqual([]);
    for (const dropped of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ])
      expect(families.has(dropped)).toBe(false);
    // What they summed is still there, by type.
    expect(families.get('nodejs_active_handles')?.type).toBe('gauge');
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('counter');
    expect(families.get('phone_rep_http_request_duration_seconds')?.type).toBe('histogram');
  });

  it('has every counter series whose labels are known in advance at zero before anything is counted', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    instrumentUpstreamFetcher(
      {
        upstream: 'tellows',
        pausedUntil: () => 0,
        fetch: async () => ({ kind: 'failure', failure: { kind: 'error', reason: 'timeout' } }),
      },
      metrics,
    );
    const inner: SourceResultCache = { get: async () => undefined, set: async () => undefined };
    instrumentSourceCache(inner, 'redis', metrics);
    metrics.declareHttpRoute('GET', '/api/phone/:number');
    metrics.watchUpstreams({ pauses: [], circuits: [{ slot: 'primary', upstream: 'tellows', state: () => 'closed' }] });
    const { families, problems } = parseExposition(await metrics.registry.metrics());
    expect(problems).toEqual([]);

    const counters = [...families.values()].filter((family) => family.type === 'counter');
    expect(counters.map((family) => family.name).sort()).toEqual([
      'phone_rep_cache_reads_total',
      'phone_rep_csp_violations_total',
      'phone_rep_http_requests_total',
      'phone_rep_list_matches_total',
      'phone_rep_load_shed_total',
      'phone_rep_rate_limit_rejections_total',
      'phone_rep_report_refusals_total',
      'phone_rep_reports_total',
      'phone_rep_source_results_total',
      'phone_rep_upstream_requests_total',
    ]);
    for (const counter of counters) {
      expect(counter.samples.length, counter.name).toBeGreaterThan(0);
      for (const sample of counter.samples)
        expect(sample.value, `${counter.name} ${JSON.stringify(sample.labels)}`).toBe(0);
    }
    const labelsOf = (name: string) => families.get(name)?.samples.map((sample) => sample.labels) ?? [];
    expect(labelsOf('phone_rep_load_shed_total')).toEqual([{ reason: 'in_flight' }, { reason: 'event_loop' }]);
    expect(labelsOf('phone_rep_http_requests_total')).toEqual([
      { method: 'GET', route: '/api/phone/:number', status_code: '200' },
    ]);
    expect(labelsOf('phone_rep_cache_reads_total')).toHaveLength(9);
    expect(labelsOf('phone_rep_upstream_requests_total')).toContainEqual({
      upstream: 'tellows',
      outcome: 'blocked',
      status_code: '403',
      reason: 'http_403',
    });
    expect(labelsOf('phone_rep_upstream_requests_total')).not.toContainEqual({
      upstream: 'tellows',
      outcome: 'blocked',
      status_code: '',
      reason: 'paused',
    });
    expect(labelsOf('phone_rep_source_results_total')).toContainEqual({
      slot: 'primary',
      upstream: 'tellows',
      status: 'ok',
      reason: '',
      cache: 'stale',
    });
    expect(labelsOf('phone_rep_source_results_total')).toContainEqual({
      slot: 'primary',
      upstream: 'tellows',
      status: 'blocked',
      reason: 'challenge',
      cache: 'miss',
    });
    expect(labelsOf('phone_rep_source_results_total')).toContainEqual({
      slot: 'primary',
      upstream: 'tellows',
      status: 'error',
      reason: 'circuit_open',
      cache: 'miss',
    });
  });

  it('counts onto the series it declared at zero rather than beside them', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    metrics.recordLoadShed('in_flight');
    metrics.recordLoadShed('in_flight');
    const { families, problems } = parseExposition(await metrics.registry.metrics());
    expect(problems).toEqual([]);
    expect(families.get('phone_rep_load_shed_total')?.samples).toEqual([
      { name: 'phone_rep_load_shed_total', labels: { reason: 'in_flight' }, value: 2 },
      { name: 'phone_rep_load_shed_total', labels: { reason: 'event_loop' }, value: 0 },
    ]);
  });
});

describe('HTTP request series', () => {
  it('count every answer onto its series, scrape after scrape, in step with the histogram', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    metrics.declareHttpRoute('GET', '/api/phone/:number');
    const counted = async (): Promise<Array<{ labels: Record<string, string>; value: number }>> => {
      const { families, problems } = parseExposition(await metrics.registry.metrics());
      expect(problems).toEqual([]);
      const histogramCounts = (families.get('phone_rep_http_request_duration_seconds')?.samples ?? []).filter(
        (sample) => sample.name.endsWith('_count'),
      );
      const counter = (families.get('phone_rep_http_requests_total')?.samples ?? []).map(({ labels, value }) => ({
        labels,
        value,
      }));
      // The counter and the histogram's count say the same of every series that has answered.
      for (const sample of histogramCounts)
        expect(counter).toContainEqual({ labels: sample.labels, value: sample.value });
      return counter;
    };
    const ok = { method: 'GET', route: '/api/phone/:number', status_code: '200' };
    const missing = { method: 'GET', route: '/api/phone/:number', status_code: '404' };
    expect(await counted()).toEqual([{ labels: ok, value: 0 }]);
    for (let index = 0; index < 3; index += 1)
      metrics.observeHttpRequest({
        method: 'GET',
        route: '/api/phone/:number',
        statusCode: 200,
        durationSeconds: 0.001,
      });
    metrics.observeHttpRequest({ method: 'GET', route: '/api/phone/:number', statusCode: 404, durationSeconds: 0.002 });
    expect(await counted()).toEqual([
      { labels: ok, value: 3 },
      { labels: missing, value: 1 },
    ]);
    // A scrape with nothing new changes nothing; answers after it are added, not lost or doubled.
    expect(await counted()).toEqual([
      { labels: ok, value: 3 },
      { labels: missing, value: 1 },
    ]);
    metrics.observeHttpRequest({ method: 'GET', route: '/api/phone/:number', statusCode: 200, durationSeconds: 0.001 });
    expect(await counted()).toEqual([
      { labels: ok, value: 4 },
      { labels: missing, value: 1 },
    ]);
  });
});

describe('cache memory gauges', () => {
  it('read the bytes charged, the entries and the process share of the cap at scrape time', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    const charged = { source: 1000, front: 200, spellings: 30 };
    metrics.watchCacheMemory({
      maxBytes: 8 * 1024 * 1024,
      charged: () => charged,
      entries: () => ({ source: 3, front: 1, spellings: 2 }),
    });
    let text = await metrics.registry.metrics();
    expect(text).toContain('phone_rep_cache_charged_bytes{cache="source"} 1000');
    expect(text).toContain('phone_rep_cache_charged_bytes{cache="front"} 200');
    expect(text).toContain('phone_rep_cache_charged_bytes{cache="spellings"} 30');
    expect(text).toContain('phone_rep_cache_entries{cache="front"} 1');
    expect(text).toContain(`phone_rep_cache_max_bytes ${8 * 1024 * 1024}`);
    charged.source = 5000;
    text = await metrics.registry.metrics();
    expect(text).toContain('phone_rep_cache_charged_bytes{cache="source"} 5000');
    expect(parseExposition(text).problems).toEqual([]);
  });

  it('say 0 for the cap before anything is watched', async () => {
    const metrics = createServiceMetrics({ collectProcessMetrics: false });
    expect(await metrics.registry.metrics()).toContain('phone_rep_cache_max_bytes 0');
  });
});
