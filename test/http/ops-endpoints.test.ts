// The operator's endpoints over real HTTP: /metrics and /health/ready with the real adapters
// against the upstream sites' fixture pages on loopback, then the configuration switches
// (metrics off, metrics on their own port) and the readiness states that need the composition
// root (Redis down, shutting down).
import { Gauge, type Registry } from 'prom-client';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createServiceDependencies } from '../../src/composition.js';
import { startServer } from '../../src/server.js';
import { startMetricsServer } from '../../src/http/plugins/metrics.js';
import { gunzipSync } from 'node:zlib';
import type { RedisStatus } from '../../src/infra/readiness/readiness.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { startFixtureUpstreams, type FixtureUpstreams } from '../../harness/upstream-sites.js';
import { startTestServer, testNumberingPlan, type TestServer } from '../../harness/servers.js';
import { labelValues, parseExposition } from '../support/contracts.js';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function get(baseUrl: string, path: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

// /metrics on the API port is rate limited like the API: the scraper is a client of its own
// (127.0.0.2), as Prometheus is, so the lookups of the tests do not spend its limit.
function scrape(
  baseUrl: string,
  path = '/metrics',
  headers: Record<string, string> = {},
): Promise<Answer & { bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const scraping = http.get(`${baseUrl}${path}`, { localAddress: '127.0.0.2', agent: false, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') answerHeaders.set(name, value);
        resolve({ status: response.statusCode ?? 0, headers: answerHeaders, text: bytes.toString('utf8'), bytes });
      });
    });
    scraping.on('error', reject);
  });
}

/** The value of one series, by its exact name and labels as printed. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics and readiness with the real adapters on loopback upstreams', () => {
  let upstreams: FixtureUpstreams;
  let server: TestServer;

  beforeAll(async () => {
    upstreams = await startFixtureUpstreams();
    // Each scrape renders: the counts are read right after the traffic (the 1 s render cache is tested below).
    // The shipped snapshot's age is not what these tests are about (ARCEP_MAX_AGE_DAYS is, below).
    server = await startTestServer({
      env: { ...upstreams.env, RATE_LIMIT_MAX: '5', MAX_EVENT_LOOP_DELAY_MS: '0', ARCEP_MAX_AGE_DAYS: '36500' },
      overrides: { metricsRenderIntervalMs: 0 },
    });
  });
  afterAll(async () => {
    await server.close();
    await upstreams.close();
  });

  it('serves every counter at zero before any lookup, in an exposition that passes the promtool rules', async () => {
    const { families, problems } = parseExposition((await scrape(server.baseUrl)).text);
    expect(problems).toEqual([]);
    const counters = [...families.values()].filter(
      (family) => family.type === 'counter' && family.name.startsWith('phone_rep_'),
    );
    expect(counters.length).toBeGreaterThanOrEqual(6);
    for (const counter of counters) expect(counter.samples.length, `${counter.name} has no series`).toBeGreaterThan(0);
    const series = (name: string) =>
      families.get(name)?.samples.map((sample) => ({ ...sample.labels, value: sample.value })) ?? [];
    expect(series('phone_rep_load_shed_total')).toEqual([
      { reason: 'in_flight', value: 0 },
      { reason: 'event_loop', value: 0 },
    ]);
    expect(series('phone_rep_upstream_requests_total')).toContainEqual({
      upstream: 'tellows-web',
      outcome: 'response',
      status_code: '200',
      reason: '',
      value: 0,
    });
    expect(series('phone_rep_upstream_requests_total')).toContainEqual({
      upstream: 'numeroinconnu',
      outcome: 'blocked',
      status_code: '429',
      reason: 'http_429',
      value: 0,
    });
    expect(series('phone_rep_source_results_total')).toContainEqual({
      slot: 'signals',
      upstream: 'telguarder',
      status: 'error',
      reason: 'timeout',
      cache: 'miss',
      value: 0,
    });
    expect(series('phone_rep_cache_reads_total')).toContainEqual({
      layer: 'memory',
      slot: 'community',
      result: 'hit',
      value: 0,
    });
    expect(series('phone_rep_http_requests_total')).toContainEqual({
      method: 'GET',
      route: '/api/phone/:number',
      status_code: '200',
      value: 0,
    });
    // The one HTTP request counted so far is this scrape's own, once it has been answered.
    for (const sample of families.get('phone_rep_http_requests_total')?.samples ?? []) expect(sample.value).toBe(0);
  });

  it('is ready with every dependency ok before any lookup, and never calls an upstream to say so', async () => {
    const answer = await get(server.baseUrl, '/health/ready');
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.text);
    expect(body.status).toBe('ok');
    expect(Object.keys(body.dependencies.upstreams).sort()).toEqual(['numeroinconnu', 'telguarder', 'tellows']);
    expect(body.dependencies.upstreams.tellows).toEqual({
      status: 'ok',
      slot: 'primary',
      circuit: 'closed',
      pausedUntil: null,
      lastOutcome: null,
      lastFailure: null,
    });
    expect(body.dependencies.numberingData).toMatchObject({ status: 'ok', dataDate: testNumberingPlan().dataDate });
    expect(body.dependencies.redis).toBeUndefined();
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(
      upstreams.requestCount('tellows') +
        upstreams.requestCount('numeroinconnu') +
        upstreams.requestCount('telguarder'),
    ).toBe(0);
  });

  it('after a few lookups, shows a paused upstream as down (service degraded, still 200) and counts it all in /metrics', async () => {
    const first = await get(server.baseUrl, '/api/phone/0612345678');
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text).meta.sources).toMatchObject({
      primary: { status: 'ok' },
      community: { status: 'ok' },
      signals: { status: 'ok' },
    });
    expect((await get(server.baseUrl, '/api/phone/06%2012%2034%2056%2078')).status).toBe(200); // cache hit
    upstreams.answerWith('numeroinconnu', { status: 429, headers: { 'retry-after': '120' } });
    const blocked = await get(server.baseUrl, '/api/phone/0698765432');
    expect(JSON.parse(blocked.text).meta.sources.community).toMatchObject({ status: 'blocked', reason: 'http_429' });
    expect((await get(server.baseUrl, '/api/phone/12ab')).status).toBe(400);
    expect((await get(server.baseUrl, '/no/such/route')).status).toBe(404);
    let limited = 0;
    for (let i = 0; i < 3; i += 1) if ((await get(server.baseUrl, '/api/phone/12ab')).status === 429) limited += 1;
    expect(limited).toBe(3);

    const ready = JSON.parse((await get(server.baseUrl, '/health/ready')).text);
    expect(ready.status).toBe('degraded');
    expect(ready.dependencies.upstreams.numeroinconnu).toMatchObject({
      status: 'down',
      lastOutcome: { status: 'blocked', reason: 'http_429' },
    });
    expect(Date.parse(ready.dependencies.upstreams.numeroinconnu.pausedUntil)).toBeGreaterThan(Date.now() + 60_000);
    expect(ready.dependencies.upstreams.tellows).toMatchObject({ status: 'ok', lastOutcome: { status: 'ok' } });

    const metrics = await scrape(server.baseUrl);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = metrics.text;
    // HTTP requests by route pattern and status.
    expect(
      sample(text, 'phone_rep_http_requests_total{method="GET",route="/api/phone/:number",status_code="200"}'),
    ).toBe(3);
    expect(
      sample(text, 'phone_rep_http_requests_total{method="GET",route="/api/phone/:number",status_code="400"}'),
    ).toBe(1);
    expect(
      sample(text, 'phone_rep_http_requests_total{method="GET",route="/api/phone/:number",status_code="429"}'),
    ).toBe(limited);
    expect(sample(text, 'phone_rep_http_requests_total{method="GET",route="(unmatched)",status_code="404"}')).toBe(1);
    expect(
      sample(
        text,
        'phone_rep_http_request_duration_seconds_count{method="GET",route="/api/phone/:number",status_code="200"}',
      ),
    ).toBe(3);
    expect(
      sample(
        text,
        'phone_rep_http_request_duration_seconds_sum{method="GET",route="/api/phone/:number",status_code="200"}',
      ),
    ).toBeGreaterThan(0);
    // Upstream requests by outcome, pause and circuit gauges.
    expect(
      sample(
        text,
        'phone_rep_upstream_requests_total{upstream="numeroinconnu",outcome="response",status_code="200",reason=""}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'phone_rep_upstream_requests_total{upstream="numeroinconnu",outcome="blocked",status_code="429",reason="http_429"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'phone_rep_upstream_requests_total{upstream="numeroinconnu",outcome="error",status_code="",reason="timeout"}',
      ),
    ).toBe(0);
    expect(sample(text, 'phone_rep_upstream_request_duration_seconds_count{upstream="tellows-web"}')).toBe(2);
    expect(sample(text, 'phone_rep_upstream_paused{upstream="numeroinconnu"}')).toBe(1);
    expect(sample(text, 'phone_rep_upstream_paused{upstream="telguarder"}')).toBe(0);
    expect(sample(text, 'phone_rep_upstream_pause_remaining_seconds{upstream="numeroinconnu"}')).toBeGreaterThan(60);
    expect(sample(text, 'phone_rep_circuit_state{slot="primary",upstream="tellows",state="closed"}')).toBe(1);
    // Per-slot outcomes and cache reads by layer.
    expect(
      sample(
        text,
        'phone_rep_source_results_total{slot="primary",upstream="tellows",status="ok",reason="",cache="miss"}',
      ),
    ).toBe(2);
    expect(
      sample(
        text,
        'phone_rep_source_results_total{slot="primary",upstream="tellows",status="ok",reason="",cache="hit"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'phone_rep_source_results_total{slot="community",upstream="numeroinconnu",status="blocked",reason="http_429",cache="miss"}',
      ),
    ).toBe(1);
    expect(sample(text, 'phone_rep_cache_reads_total{layer="memory",slot="primary",result="hit"}')).toBe(1);
    expect(
      sample(text, 'phone_rep_cache_reads_total{layer="memory",slot="primary",result="miss"}'),
    ).toBeGreaterThanOrEqual(2);
    // Rate-limit rejections and process metrics.
    expect(sample(text, 'phone_rep_rate_limit_rejections_total')).toBe(limited);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(sample(text, 'phone_rep_load_shed_total{reason="in_flight"}')).toBe(0);
    // Still well-formed once real traffic has filled it.
    expect(parseExposition(text).problems).toEqual([]);
  });

  it('never puts a phone number or a hash-looking value in a metric label', async () => {
    const text = (await scrape(server.baseUrl)).text;
    const values = labelValues(text);
    expect(values.length).toBeGreaterThan(50);
    for (const value of values) {
      expect(value).not.toMatch(/\d{6,}/);
      // A keyed hash is base64url or hex: a long run holding digits or capitals. V8's heap space
      // names (`shared_trusted_large_object` on Node 24) are long lower-case words.
      expect(value).not.toMatch(/(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{24,}/);
    }
    for (const digits of ['0612345678', '612345678', '33612345678', '0698765432', '698765432'])
      expect(text).not.toContain(digits);
  });

  it('after the limit is spent: /health/ready and the page still answer; /metrics on the API port is limited like the API', async () => {
    expect((await get(server.baseUrl, '/api/phone/12ab')).status).toBe(429);
    const refused = await get(server.baseUrl, '/metrics');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // The scraper's own address has its own limit.
    expect((await scrape(server.baseUrl)).status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      expect((await get(server.baseUrl, '/health/ready')).status).toBe(200);
      expect((await get(server.baseUrl, '/?number=0612345678')).status).toBe(200);
      expect((await get(server.baseUrl, '/assets/app.js')).status).toBe(200);
    }
  });

  it('documents /health/ready and its schema in the OpenAPI document', async () => {
    const doc = JSON.parse((await get(server.baseUrl, '/openapi.json')).text);
    const operation = doc.paths['/health/ready'].get;
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '405', '503']);
    expect(Object.keys(operation.responses['503'].content).sort()).toEqual([
      'application/json',
      'application/problem+json',
    ]);
    const schema = operation.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(['dependencies', 'reason', 'status', 'timestamp']);
    expect(doc.paths['/metrics']).toBeUndefined();
  });
});

describe('readiness states that need the composition root', () => {
  async function build(options: { redisStatus?: () => RedisStatus | Promise<RedisStatus>; maxAgeDays?: number } = {}) {
    const config = loadConfig({
      HASH_SECRET: 'test-secret-0123456789',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ARCEP_MAX_AGE_DAYS: String(options.maxAgeDays ?? 36_500),
    });
    const deps = await createServiceDependencies(config, undefined, {
      numberingPlan: testNumberingPlan(),
      sources: healthyFakeSources(),
      ...(options.redisStatus ? { redisStatus: options.redisStatus } : {}),
    });
    const app = await buildApp({ ...deps.app });
    return { deps, app };
  }

  it('reports Redis down as degraded with 200 (the service falls back to memory), and ok when Redis is', async () => {
    let redis: 'ok' | 'down' = 'down';
    const { deps, app } = await build({ redisStatus: () => redis });
    const down = await app.inject({ url: '/health/ready' });
    expect(down.statusCode).toBe(200);
    expect(down.json()).toMatchObject({ status: 'degraded', dependencies: { redis: { status: 'down' } } });
    redis = 'ok';
    expect((await app.inject({ url: '/health/ready' })).json()).toMatchObject({
      status: 'ok',
      dependencies: { redis: { status: 'ok' } },
    });
    await app.close();
    await deps.close();
  });

  it("reports the numbering data's age, and says degraded (still 200) once it is older than ARCEP_MAX_AGE_DAYS", async () => {
    const dataDate = testNumberingPlan().dataDate;
    const ageDays = Math.floor((Date.now() - Date.parse(`${dataDate}T00:00:00Z`)) / 86_400_000);
    expect(ageDays).toBeGreaterThan(1);
    const young = await build({ maxAgeDays: ageDays + 1 });
    expect((await young.app.inject({ url: '/health/ready' })).json()).toMatchObject({
      status: 'ok',
      dependencies: { numberingData: { status: 'ok', dataDate, ageDays } },
    });
    const old = await build({ maxAgeDays: ageDays - 1 });
    const answer = await old.app.inject({ url: '/health/ready' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({
      status: 'degraded',
      dependencies: { numberingData: { status: 'degraded', dataDate, ageDays } },
    });
    for (const { app, deps } of [young, old]) {
      await app.close();
      await deps.close();
    }
  });

  it('shares one evaluation among concurrent /health/ready callers', async () => {
    let probes = 0;
    // The probe answers only once all 25 requests have reached the route: they are concurrent
    // by construction, not because the probe happened to be slow enough.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { deps, app } = await build({
      redisStatus: async (): Promise<RedisStatus> => {
        probes += 1;
        await released;
        return 'ok';
      },
    });
    let arrived = 0;
    app.addHook('preHandler', async () => {
      arrived += 1;
      // After the last arrival's handler has run its synchronous part (the microtasks drain first).
      if (arrived === 25) setImmediate(release);
    });
    const answers = await Promise.all(Array.from({ length: 25 }, () => app.inject({ url: '/health/ready' })));
    expect(answers.every((answer) => answer.statusCode === 200)).toBe(true);
    expect(probes).toBe(1);
    expect(new Set(answers.map((answer) => answer.json<{ timestamp: string }>().timestamp)).size).toBe(1);
    await app.inject({ url: '/health/ready' });
    expect(probes).toBe(2);
    await app.close();
    await deps.close();
  });

  it('answers 503 down once shutdown has begun, so a load balancer stops sending traffic', async () => {
    const { deps, app } = await build();
    expect((await app.inject({ url: '/health/ready' })).statusCode).toBe(200);
    deps.beginShutdown();
    const answer = await app.inject({ url: '/health/ready' });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ status: 'down', reason: 'shutting down' });
    // The spec's /health is untouched by readiness.
    expect((await app.inject({ url: '/health' })).json()).toMatchObject({ status: 'ok' });
    await app.close();
    await deps.close();
  });
});

describe('metrics configuration', () => {
  it('METRICS_ENABLED=false: no /metrics route', async () => {
    const server = await startTestServer({
      env: { METRICS_ENABLED: 'false', MAX_EVENT_LOOP_DELAY_MS: '0' },
      overrides: { sources: healthyFakeSources() },
    });
    try {
      expect((await get(server.baseUrl, '/metrics')).status).toBe(404);
      expect((await get(server.baseUrl, '/health/ready')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('METRICS_PORT: /metrics on its own port, not on the API port', async () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '0',
    });
    const running = await startServer(config);
    try {
      expect(running.metricsPort).toBeGreaterThan(0);
      const scrape = await get(`http://127.0.0.1:${running.metricsPort}`, '/metrics');
      expect(scrape.status).toBe(200);
      expect(scrape.text).toContain('phone_rep_http_requests_total');
      expect((await get(`http://127.0.0.1:${running.metricsPort}`, '/other')).status).toBe(404);
      expect((await get(`http://127.0.0.1:${running.port}`, '/metrics')).status).toBe(404);
    } finally {
      await running.close();
    }
  });

  // A render walks the whole registry (~2 ms of CPU); a flood of scrapes made one each. A gauge
  // whose collect() runs once per render counts them. At most one render per second: scrapes
  // sent within the same second share one (the bound is checked against the time they took,
  // so a slow machine cannot make it fail).
  const SCRAPES = 20;

  function countRenders(registry: Registry): () => number {
    let renders = 0;
    registry.registerMetric(
      new Gauge({
        name: 'test_renders',
        help: 'Renders of this registry.',
        registers: [],
        collect() {
          renders += 1;
          this.set(renders);
        },
      }),
    );
    return () => renders;
  }

  async function scrapeMany(baseUrl: string): Promise<{ elapsedMs: number; texts: string[] }> {
    const startedAt = performance.now();
    const concurrent = await Promise.all(Array.from({ length: SCRAPES / 2 }, () => scrape(baseUrl)));
    const texts = concurrent.map((answer) => answer.text);
    for (let i = 0; i < SCRAPES / 2; i += 1) {
      const gzipped = await scrape(baseUrl, '/metrics', { 'accept-encoding': 'gzip' });
      expect(gzipped.status).toBe(200);
      expect(gzipped.headers.get('content-encoding')).toBe('gzip');
      texts.push(gunzipSync(gzipped.bytes).toString('utf8'));
    }
    return { elapsedMs: performance.now() - startedAt, texts };
  }

  it('on the API port, renders at most once a second however many scrapes arrive, plain or gzipped', async () => {
    const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', MAX_EVENT_LOOP_DELAY_MS: '0' });
    const deps = await createServiceDependencies(config, undefined, {
      numberingPlan: testNumberingPlan(),
      sources: healthyFakeSources(),
    });
    if (!deps.metrics) throw new Error('metrics are on by default');
    const renders = countRenders(deps.metrics.registry);
    const app = await buildApp({ ...deps.app });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const address = app.server.address();
      if (typeof address !== 'object' || address === null) throw new Error('no address');
      const { elapsedMs, texts } = await scrapeMany(`http://127.0.0.1:${address.port}`);
      expect(renders()).toBeGreaterThanOrEqual(1);
      expect(renders(), `${SCRAPES} scrapes in ${Math.round(elapsedMs)} ms`).toBeLessThanOrEqual(
        1 + Math.floor(elapsedMs / 1000),
      );
      if (renders() === 1) expect(new Set(texts).size).toBe(1);
    } finally {
      await app.close();
      await deps.close();
    }
  });

  it('on METRICS_PORT, renders at most once a second too', async () => {
    const config = loadConfig({ HASH_SECRET: 'test-secret-0123456789', MAX_EVENT_LOOP_DELAY_MS: '0' });
    const deps = await createServiceDependencies(config, undefined, {
      numberingPlan: testNumberingPlan(),
      sources: healthyFakeSources(),
    });
    if (!deps.metrics) throw new Error('metrics are on by default');
    const renders = countRenders(deps.metrics.registry);
    const metricsServer = await startMetricsServer({
      registry: deps.metrics.registry,
      render: deps.metrics.render,
      port: 0,
      host: '127.0.0.1',
    });
    try {
      const { elapsedMs } = await scrapeMany(`http://127.0.0.1:${metricsServer.port}`);
      expect(renders()).toBeGreaterThanOrEqual(1);
      expect(renders(), `${SCRAPES} scrapes in ${Math.round(elapsedMs)} ms`).toBeLessThanOrEqual(
        1 + Math.floor(elapsedMs / 1000),
      );
    } finally {
      await metricsServer.close();
      await deps.close();
    }
  });
});
