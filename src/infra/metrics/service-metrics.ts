// The service's Prometheus instruments, on a Registry of its own (never prom-client's global
// one, so two apps in one process – tests, the CLI – never share or clash). Created by the
// composition root; the HTTP layer, the engine hook, the cache and the fetchers feed it.
//
// Labels hold only closed vocabularies – route patterns, methods, status codes, slot and
// upstream names, failure reasons, cache states – never a phone number, a hash, a URL or a
// client address. `labelValue` enforces that for values that come from elsewhere.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const METRICS_PREFIX = 'phone_rep_';

/** What the engine reports for each slot of each lookup (structurally its SourceOutcomeEvent). */
export interface SourceOutcomeSample {
  slot: string;
  upstream: string;
  status: string;
  reason?: string;
  durationMs: number;
  cache: string;
}

/** One real request to an upstream, as seen by its fetcher. */
export interface UpstreamRequestSample {
  upstream: string;
  /** The HTTP status code answered ("200", "404"), or the outcome status (`blocked`, `error`). */
  status: string;
  /** The failure reason for outcomes; "" for plain responses. */
  reason: string;
  durationSeconds: number;
}

export type CacheReadResult = 'hit' | 'miss' | 'stale';
export type CircuitState = 'closed' | 'open' | 'half_open';
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'half_open', 'open'];

/** Read at scrape time, never pushed: what each upstream's fetcher and breaker say now. */
export interface UpstreamGaugeProbes {
  /** Per fetcher (`tellows`, `tellows-web`, …): epoch ms the pause ends, or 0. */
  pauses: ReadonlyArray<{ upstream: string; pausedUntilMs: () => number }>;
  /** Per source slot: its breaker's state. */
  circuits: ReadonlyArray<{ slot: string; upstream: string; state: () => CircuitState }>;
}

export interface ServiceMetrics {
  readonly registry: Registry;
  observeHttpRequest(sample: { method: string; route: string; statusCode: number; durationSeconds: number }): void;
  recordUpstreamRequest(sample: UpstreamRequestSample): void;
  recordSourceOutcome(sample: SourceOutcomeSample): void;
  recordCacheRead(layer: string, slot: string, result: CacheReadResult): void;
  recordRateLimitRejection(): void;
  /** A request refused with 503 by load shedding, by signal (`in_flight`, `event_loop`). */
  recordLoadShed(reason: string): void;
  /** Replaces the probes the pause and circuit gauges read at scrape time. */
  watchUpstreams(probes: UpstreamGaugeProbes): void;
}

export interface ServiceMetricsOptions {
  registry?: Registry;
  /** Process and Node.js runtime metrics (prom-client's default set). Default true. */
  collectProcessMetrics?: boolean;
  now?: () => number;
}

const SAFE_LABEL = /^[A-Za-z0-9_.:/\-() ]{0,64}$/;
/** A value that could carry a number (a long digit run) or a hash (a long hex/base64 run) is refused. */
const LOOKS_PERSONAL = /\d{6,}|[A-Za-z0-9_-]{24,}/;

/** A label value from a closed vocabulary, or `other`: nothing personal can slip into a label. */
// Label values come from small closed sets (routes, statuses, reasons): remember the verdict
// so the check costs a map lookup per observation; bounded in case a caller passes more.
const checkedLabels = new Map<string, string>();
const MAX_CHECKED_LABELS = 1000;

export function labelValue(value: string): string {
  const known = checkedLabels.get(value);
  if (known !== undefined) return known;
  const safe = SAFE_LABEL.test(value) && !LOOKS_PERSONAL.test(value) ? value : 'other';
  if (checkedLabels.size < MAX_CHECKED_LABELS) checkedLabels.set(value, safe);
  return safe;
}

const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8];

export function createServiceMetrics(options: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = options.registry ?? new Registry();
  const now = options.now ?? Date.now;
  if (options.collectProcessMetrics !== false) collectDefaultMetrics({ register: registry });
  let probes: UpstreamGaugeProbes = { pauses: [], circuits: [] };
  const registers = [registry];

  const httpRequests = new Counter({
    name: `${METRICS_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by route pattern, method and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: `${METRICS_PREFIX}http_request_duration_seconds`,
    help: 'Time to answer an HTTP request, by route pattern, method and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const upstreamRequests = new Counter({
    name: `${METRICS_PREFIX}upstream_requests_total`,
    help: 'Requests to each upstream, by HTTP status or outcome (blocked/error) and reason',
    labelNames: ['upstream', 'status', 'reason'] as const,
    registers,
  });
  const upstreamDuration = new Histogram({
    name: `${METRICS_PREFIX}upstream_request_duration_seconds`,
    help: 'Duration of each upstream request (including budget and concurrency waits)',
    labelNames: ['upstream'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const sourceResults = new Counter({
    name: `${METRICS_PREFIX}source_results_total`,
    help: 'Per-lookup outcome of each source slot: status, reason and cache state',
    labelNames: ['slot', 'upstream', 'status', 'reason', 'cache'] as const,
    registers,
  });
  const sourceDuration = new Histogram({
    name: `${METRICS_PREFIX}source_duration_seconds`,
    help: 'Time a lookup waited for each source slot, by cache state',
    labelNames: ['slot', 'upstream', 'cache'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const cacheReads = new Counter({
    name: `${METRICS_PREFIX}cache_reads_total`,
    help: 'Source-result cache reads by cache layer, slot and result (hit, miss, stale)',
    labelNames: ['layer', 'slot', 'result'] as const,
    registers,
  });
  const rateLimitRejections = new Counter({
    name: `${METRICS_PREFIX}rate_limit_rejections_total`,
    help: 'Requests refused with 429 by the per-client rate limit',
    registers,
  });
  const loadShed = new Counter({
    name: `${METRICS_PREFIX}load_shed_total`,
    help: 'Requests refused with 503 by load shedding, by signal (in_flight, event_loop)',
    labelNames: ['reason'] as const,
    registers,
  });
  new Gauge({
    name: `${METRICS_PREFIX}upstream_paused`,
    help: '1 while the upstream is paused after a 403/429, else 0',
    labelNames: ['upstream'] as const,
    registers,
    collect() {
      this.reset();
      for (const pause of probes.pauses) this.set({ upstream: labelValue(pause.upstream) }, pause.pausedUntilMs() > now() ? 1 : 0);
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}upstream_pause_remaining_seconds`,
    help: 'Seconds until the upstream pause ends (0 when not paused)',
    labelNames: ['upstream'] as const,
    registers,
    collect() {
      this.reset();
      for (const pause of probes.pauses) {
        this.set({ upstream: labelValue(pause.upstream) }, Math.max(0, (pause.pausedUntilMs() - now()) / 1000));
      }
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}circuit_state`,
    help: 'Circuit breaker state per source slot: 1 for the current state (closed, half_open, open), 0 for the others',
    labelNames: ['slot', 'upstream', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const circuit of probes.circuits) {
        const current = circuit.state();
        for (const state of CIRCUIT_STATES) {
          this.set({ slot: labelValue(circuit.slot), upstream: labelValue(circuit.upstream), state }, state === current ? 1 : 0);
        }
      }
    },
  });

  return {
    registry,
    observeHttpRequest({ method, route, statusCode, durationSeconds }) {
      const labels = { method: labelValue(method), route: labelValue(route), status_code: String(statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, durationSeconds);
    },
    recordUpstreamRequest({ upstream, status, reason, durationSeconds }) {
      upstreamRequests.inc({ upstream: labelValue(upstream), status: labelValue(status), reason: labelValue(reason) });
      upstreamDuration.observe({ upstream: labelValue(upstream) }, durationSeconds);
    },
    recordSourceOutcome(sample) {
      const slot = labelValue(sample.slot);
      const upstream = labelValue(sample.upstream);
      const cache = labelValue(sample.cache);
      sourceResults.inc({ slot, upstream, status: labelValue(sample.status), reason: labelValue(sample.reason ?? ''), cache });
      sourceDuration.observe({ slot, upstream, cache }, sample.durationMs / 1000);
    },
    recordCacheRead(layer, slot, result) {
      cacheReads.inc({ layer: labelValue(layer), slot: labelValue(slot), result });
    },
    recordRateLimitRejection() {
      rateLimitRejections.inc();
    },
    recordLoadShed(reason) {
      loadShed.inc({ reason: labelValue(reason) });
    },
    watchUpstreams(next) {
      probes = next;
    },
  };
}
