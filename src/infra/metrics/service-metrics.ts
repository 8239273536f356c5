// The service's Prometheus instruments, on a Registry of its own (never prom-client's global
// one, so two apps in one process – tests, the CLI – never share or clash). Created by the
// composition root; the HTTP layer, the engine hook, the cache and the fetchers feed it.
//
// Labels hold only closed vocabularies – route patterns, methods, status codes, slot and
// upstream names, failure reasons, cache states – never a phone number, a hash, a URL or a
// client address. `labelValue` enforces that for values that come from elsewhere.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { BLOCKED_REASONS, ERROR_REASONS } from '../../domain/ports/source.js';
import { CACHE_STATES, type CacheState } from '../../domain/lookup/types.js';
import { SOURCE_SLOTS } from '../../domain/report.js';
import { REPORT_RATINGS, type ReportRating } from '../../domain/ports/caller-reports.js';
import { renderAtMostEvery, type RenderMetrics } from './render-cache.js';
import { SeriesHistogram } from './series-histogram.js';

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

/**
 * How a fetcher's request ended: `response` when it handed an HTTP answer to the adapter,
 * else the outcome it decided itself (403/429 are `blocked`, the rest `error`).
 */
export type UpstreamRequestOutcome = 'response' | 'blocked' | 'error';

/** One request to an upstream, as seen by its fetcher. */
export interface UpstreamRequestSample {
  upstream: string;
  outcome: UpstreamRequestOutcome;
  /**
   * The HTTP status answered ("200", "404", "429"), "5xx" when the fetcher only kept the class,
   * or "" when no HTTP answer came back (transport failure).
   */
  statusCode: string;
  /** The failure reason of `blocked` and `error`; "" for `response`. */
  reason: string;
  durationSeconds: number;
}

export type CacheReadResult = CacheState;
const LOAD_SHED_REASONS = ['in_flight', 'event_loop'] as const;

/**
 * Why the report routes refused a request (docs/reports.md, "Reporting"): a closed set, so the
 * label never carries what was sent (a number, a token, a comment).
 */
export const REPORT_REFUSAL_REASONS = [
  'reporting_off',
  'missing_token',
  'invalid_token',
  'locked_out',
  'bad_body',
  'too_large',
  'invalid_number',
  'token_day_cap',
  'store_unavailable',
] as const;
export type ReportRefusalReason = (typeof REPORT_REFUSAL_REASONS)[number];

/**
 * The directives a violation of the console's Content-Security-Policy is counted under
 * (src/http/plugins/console-page.ts): the policy's and the finer ones browsers report
 * (`script-src-elem`); anything else is `other`, so the label never holds what a page sent.
 */
export const CSP_DIRECTIVES = [
  'default-src',
  'script-src',
  'script-src-elem',
  'script-src-attr',
  'style-src',
  'style-src-elem',
  'style-src-attr',
  'img-src',
  'connect-src',
  'font-src',
  'media-src',
  'object-src',
  'frame-src',
  'child-src',
  'worker-src',
  'manifest-src',
  'frame-ancestors',
  'base-uri',
  'form-action',
  'other',
] as const;
export type CspDirective = (typeof CSP_DIRECTIVES)[number];

/**
 * Every way a request sent to an upstream can end other than with a response (a pause or a
 * spent budget sends nothing, so it is not a request here): the series of
 * `upstream_requests_total` that exist at zero for each upstream from the start.
 */
const FETCHER_OUTCOMES: ReadonlyArray<{ outcome: UpstreamRequestOutcome; statusCode: string; reason: string }> = [
  { outcome: 'blocked', statusCode: '403', reason: 'http_403' },
  { outcome: 'blocked', statusCode: '429', reason: 'http_429' },
  { outcome: 'error', statusCode: '5xx', reason: 'http_5xx' },
  ...(['timeout', 'connection', 'too_large', 'redirect', 'decoding', 'aborted'] as const).map((reason) => ({
    outcome: 'error' as const,
    statusCode: '',
    reason,
  })),
];

/**
 * prom-client's default gauges named `*_total` (promtool: "non-counter metrics should not have
 * _total suffix"). Dropped rather than renamed: each is the sum over the per-type gauge of the
 * same name without the suffix (`sum(nodejs_active_handles)`), so nothing is lost.
 */
const REJECTED_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;
export type CircuitState = 'closed' | 'open' | 'half_open';
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'half_open', 'open'];

/** Read at scrape time, never pushed: what each upstream's fetcher and breaker say now. */
export interface UpstreamGaugeProbes {
  /** Per fetcher (`tellows`, `tellows-web`, …): epoch ms the pause ends, or 0. */
  pauses: ReadonlyArray<{ upstream: string; pausedUntilMs: () => number }>;
  /** Per source slot: its breaker's state. */
  circuits: ReadonlyArray<{ slot: string; upstream: string; state: () => CircuitState }>;
}

/**
 * Read at scrape time: what the in-process caches are charged against CACHE_MAX_MB (this
 * process's share of it with WORKERS=n), by cache: `source` (per-source results and their
 * decoded objects), `front` (finished answers), `spellings` (the spelling and parse memos).
 */
export interface CacheMemoryProbe {
  /** This process's cap in bytes. */
  maxBytes: number;
  charged: () => Readonly<Record<string, number>>;
  entries: () => Readonly<Record<string, number>>;
}

export interface ServiceMetrics {
  readonly registry: Registry;
  /** The exposition for a scrape, rendered at most once per `renderIntervalMs` (render-cache.ts). */
  render: RenderMetrics;
  /** Replaces the probe the cache memory gauges read at scrape time. */
  watchCacheMemory(probe: CacheMemoryProbe): void;
  /** Makes a route's success series exist at zero before its first request. */
  declareHttpRoute(method: string, route: string): void;
  observeHttpRequest(sample: { method: string; route: string; statusCode: number; durationSeconds: number }): void;
  /** Makes every outcome series of one upstream's fetcher exist at zero. */
  declareUpstream(upstream: string): void;
  recordUpstreamRequest(sample: UpstreamRequestSample): void;
  recordSourceOutcome(sample: SourceOutcomeSample): void;
  /** Makes every slot and result series of one cache layer exist at zero. */
  declareCacheLayer(layer: string): void;
  recordCacheRead(layer: string, slot: string, result: CacheReadResult): void;
  recordRateLimitRejection(): void;
  /** A request refused with 503 by load shedding, by signal (`in_flight`, `event_loop`). */
  recordLoadShed(reason: string): void;
  /**
   * Replaces the probes the pause and circuit gauges read at scrape time; the slots named in
   * `circuits` get their per-lookup outcome series at zero.
   */
  watchUpstreams(probes: UpstreamGaugeProbes): void;
  /** The scheduled canary's verdict on one required marker of an upstream: 1 missing, 0 found. */
  setCanaryMarkerMissing(upstream: string, marker: string, missing: boolean): void;
  /** When the scheduled canary last finished a round on this upstream (epoch seconds). */
  setCanaryLastRun(upstream: string, epochSeconds: number): void;
  /** The operator's lists: how many rules are in force per list (read at scrape time). */
  watchLists(count: () => Readonly<Record<'allow' | 'block', number>>): void;
  /** A phone answer decided by the operator's lists. */
  recordListMatch(list: 'allow' | 'block'): void;
  /** A report recorded (POST /api/report, /api/rate), by the rating it was recorded as. */
  recordReport(rating: ReportRating): void;
  /** A request of the report routes refused, by reason (never what it held). */
  recordReportRefusal(reason: ReportRefusalReason): void;
  /** The reporters' tokens: how many are in force (read at scrape time). */
  watchReportTokens(count: () => number): void;
  /** A violation of the console's Content-Security-Policy a browser reported, by directive only. */
  recordCspViolation(directive: CspDirective): void;
}

export interface ServiceMetricsOptions {
  registry?: Registry;
  /** Process and Node.js runtime metrics (prom-client's default set). Default true. */
  collectProcessMetrics?: boolean;
  now?: () => number;
  /** Scrapes within this long of a render get its text (default METRICS_RENDER_INTERVAL_MS; 0 renders each time). */
  renderIntervalMs?: number;
}

/** One HTTP series: its labels, its requests counted and how many of them the counter holds. */
interface HttpSeries {
  readonly labels: Record<'method' | 'route' | 'status_code', string>;
  counted: number;
  published: number;
  record(durationSeconds: number): void;
}

const SAFE_LABEL = /^[A-Za-z0-9_.:/\-() ]{0,64}$/;
/** A value that could carry a number (a long digit run) or a hash (a long hex/base64 run) is refused. */
const LOOKS_PERSONAL = /\d{6,}|[A-Za-z0-9_-]{24,}/;

/** A label value from a closed vocabulary, or `other`: nothing personal can slip into a label. */
// Label values come from small closed sets (routes, statuses, reasons): remember the verdict
// so the check costs a map lookup per observation; bounded in case a caller passes more.
const checkedLabels = new Map<string, string>();
const MAX_CHECKED_LABELS = 1000;

/**
 * A marker name as a label value. Marker names come from the adapters' code (a closed set),
 * but they hold selectors and quotes that `labelValue` refuses; they still never carry a
 * digit run that could be a number, nor control characters.
 */
export function markerLabelValue(value: string): string {
  const hasControl = [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
  return hasControl || /\d{6,}/.test(value) ? 'other' : value.slice(0, 120);
}

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
  if (options.collectProcessMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    for (const name of REJECTED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }
  let probes: UpstreamGaugeProbes = { pauses: [], circuits: [] };
  const registers = [registry];

  // One series per (method, route, status), bound once (boundHttpSeries, below): a request then
  // costs one count and one histogram observation. Bounded: routes are patterns, never URLs, and
  // methods and statuses are finite. The count is a plain number, added to the counter when a
  // scrape collects it: one label lookup per series per scrape instead of one per request
  // (prom-client hashes and checks the labels on every inc, even a bound child's).
  const httpSeries = new Map<string, Map<number, HttpSeries>>();
  const httpRequests = new Counter({
    name: `${METRICS_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by route pattern, method and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers,
    collect() {
      for (const byStatus of httpSeries.values()) {
        for (const series of byStatus.values()) {
          if (series.counted === series.published) continue;
          this.inc(series.labels, series.counted - series.published);
          series.published = series.counted;
        }
      }
    },
  });
  // Observed on every answer: its series are plain numbers (series-histogram.ts), which took
  // prom-client's per-observation cost (8–15 % of a held answer's CPU) off the hot path.
  const httpDuration = new SeriesHistogram({
    name: `${METRICS_PREFIX}http_request_duration_seconds`,
    help: 'Time to answer an HTTP request, by route pattern, method and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const upstreamRequests = new Counter({
    name: `${METRICS_PREFIX}upstream_requests_total`,
    help: 'Requests to each upstream by outcome (response, blocked, error), HTTP status code and failure reason',
    labelNames: ['upstream', 'outcome', 'status_code', 'reason'] as const,
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
  for (const reason of LOAD_SHED_REASONS) loadShed.inc({ reason }, 0);
  new Gauge({
    name: `${METRICS_PREFIX}upstream_paused`,
    help: '1 while the upstream is paused after a 403/429, else 0',
    labelNames: ['upstream'] as const,
    registers,
    collect() {
      this.reset();
      for (const pause of probes.pauses)
        this.set({ upstream: labelValue(pause.upstream) }, pause.pausedUntilMs() > now() ? 1 : 0);
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
          this.set(
            { slot: labelValue(circuit.slot), upstream: labelValue(circuit.upstream), state },
            state === current ? 1 : 0,
          );
        }
      }
    },
  });

  let cacheMemory: CacheMemoryProbe | undefined;
  new Gauge({
    name: `${METRICS_PREFIX}cache_charged_bytes`,
    help: "Bytes charged against CACHE_MAX_MB (this process's share) by each in-process cache: source, front, spellings",
    labelNames: ['cache'] as const,
    registers,
    collect() {
      this.reset();
      for (const [cache, bytes] of Object.entries(cacheMemory?.charged() ?? {}))
        this.set({ cache: labelValue(cache) }, bytes);
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}cache_entries`,
    help: 'Entries held by each in-process cache: source (per-source results), front (numbers with finished answers), spellings',
    labelNames: ['cache'] as const,
    registers,
    collect() {
      this.reset();
      for (const [cache, count] of Object.entries(cacheMemory?.entries() ?? {}))
        this.set({ cache: labelValue(cache) }, count);
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}cache_max_bytes`,
    help: "This process's share of CACHE_MAX_MB in bytes (CACHE_MAX_MB divided by WORKERS); 0 when the caches are not in process",
    registers,
    collect() {
      this.set(cacheMemory?.maxBytes ?? 0);
    },
  });

  function declareSourceSlot(slot: string, upstream: string): void {
    const zero = (status: string, reason: string, cache: string): void => {
      sourceResults.inc({ slot: labelValue(slot), upstream: labelValue(upstream), status, reason, cache }, 0);
    };
    for (const cache of CACHE_STATES) {
      zero('ok', '', cache);
      zero('not_found', '', cache);
    }
    // Failures are never cached: they are always read as a miss.
    for (const reason of BLOCKED_REASONS) zero('blocked', reason, 'miss');
    for (const reason of ERROR_REASONS) zero('error', reason, 'miss');
  }

  const canaryMarkerMissing = new Gauge({
    name: `${METRICS_PREFIX}canary_marker_missing`,
    help: 'Scheduled canary: 1 when a required marker of the upstream was missing from its last judged page, 0 when found',
    labelNames: ['upstream', 'marker'] as const,
    registers,
  });
  const canaryLastRun = new Gauge({
    name: `${METRICS_PREFIX}canary_last_run_timestamp_seconds`,
    help: 'Scheduled canary: when its last round on the upstream ended (epoch seconds)',
    labelNames: ['upstream'] as const,
    registers,
  });

  let listCount: (() => Readonly<Record<'allow' | 'block', number>>) | undefined;
  new Gauge({
    name: `${METRICS_PREFIX}list_rules`,
    help: "Rules of the operator's lists in force, per list (expired ones left out)",
    labelNames: ['list'] as const,
    registers,
    collect() {
      const counts = listCount?.() ?? { allow: 0, block: 0 };
      this.set({ list: 'allow' }, counts.allow);
      this.set({ list: 'block' }, counts.block);
    },
  });
  let reportTokenCount: (() => number) | undefined;
  new Gauge({
    name: `${METRICS_PREFIX}report_tokens`,
    help: "Reporters' tokens in force (neither expired nor revoked)",
    registers,
    collect() {
      this.set(reportTokenCount?.() ?? 0);
    },
  });
  const listMatches = new Counter({
    name: `${METRICS_PREFIX}list_matches_total`,
    help: "Phone answers decided by the operator's lists, per list",
    labelNames: ['list'] as const,
    registers,
  });
  const listMatchesBound = {
    allow: listMatches.labels({ list: 'allow' }),
    block: listMatches.labels({ list: 'block' }),
  };
  listMatchesBound.allow.inc(0);
  listMatchesBound.block.inc(0);
  const reportsAccepted = new Counter({
    name: `${METRICS_PREFIX}reports_total`,
    help: 'Reports recorded (POST /api/report, /api/rate), by rating',
    labelNames: ['rating'] as const,
    registers,
  });
  for (const rating of REPORT_RATINGS) reportsAccepted.inc({ rating }, 0);
  const reportRefusals = new Counter({
    name: `${METRICS_PREFIX}report_refusals_total`,
    help: 'Requests of the report routes refused, by reason',
    labelNames: ['reason'] as const,
    registers,
  });
  for (const reason of REPORT_REFUSAL_REASONS) reportRefusals.inc({ reason }, 0);
  const cspViolations = new Counter({
    name: `${METRICS_PREFIX}csp_violations_total`,
    help: 'Violations of the console’s Content-Security-Policy reported by browsers, by directive',
    labelNames: ['directive'] as const,
    registers,
  });
  for (const directive of CSP_DIRECTIVES) cspViolations.inc({ directive }, 0);

  function boundHttpSeries(method: string, route: string, statusCode: number): HttpSeries {
    const routeKey = method === 'GET' ? route : `${method} ${route}`;
    let byStatus = httpSeries.get(routeKey);
    if (byStatus === undefined) {
      byStatus = new Map();
      httpSeries.set(routeKey, byStatus);
    }
    let series = byStatus.get(statusCode);
    if (series === undefined) {
      const labels = { method: labelValue(method), route: labelValue(route), status_code: String(statusCode) };
      const histogram = httpDuration.series(labels);
      const made: HttpSeries = {
        labels,
        counted: 0,
        published: 0,
        record(durationSeconds) {
          made.counted += 1;
          histogram.observe(durationSeconds);
        },
      };
      series = made;
      byStatus.set(statusCode, made);
    }
    return series;
  }

  return {
    registry,
    // On the wall clock, not `now` (the engine's, which tests may freeze): it bounds real CPU time.
    render: renderAtMostEvery(
      registry,
      options.renderIntervalMs === undefined ? {} : { intervalMs: options.renderIntervalMs },
    ),
    watchCacheMemory(probe) {
      cacheMemory = probe;
    },
    setCanaryMarkerMissing(upstream, marker, missing) {
      canaryMarkerMissing.set({ upstream: labelValue(upstream), marker: markerLabelValue(marker) }, missing ? 1 : 0);
    },
    setCanaryLastRun(upstream, epochSeconds) {
      canaryLastRun.set({ upstream: labelValue(upstream) }, epochSeconds);
    },
    declareHttpRoute(method, route) {
      // Bound now, so the first request of the route does not pay for it.
      boundHttpSeries(method, route, 200);
      httpRequests.inc({ method: labelValue(method), route: labelValue(route), status_code: '200' }, 0);
    },
    declareUpstream(upstream) {
      const name = labelValue(upstream);
      upstreamRequests.inc({ upstream: name, outcome: 'response', status_code: '200', reason: '' }, 0);
      for (const { outcome, statusCode, reason } of FETCHER_OUTCOMES)
        upstreamRequests.inc({ upstream: name, outcome, status_code: statusCode, reason }, 0);
    },
    declareCacheLayer(layer) {
      for (const slot of SOURCE_SLOTS)
        for (const result of CACHE_STATES) cacheReads.inc({ layer: labelValue(layer), slot, result }, 0);
    },
    observeHttpRequest({ method, route, statusCode, durationSeconds }) {
      boundHttpSeries(method, route, statusCode).record(durationSeconds);
    },
    recordUpstreamRequest({ upstream, outcome, statusCode, reason, durationSeconds }) {
      upstreamRequests.inc({
        upstream: labelValue(upstream),
        outcome,
        status_code: labelValue(statusCode),
        reason: labelValue(reason),
      });
      upstreamDuration.observe({ upstream: labelValue(upstream) }, durationSeconds);
    },
    recordSourceOutcome(sample) {
      const slot = labelValue(sample.slot);
      const upstream = labelValue(sample.upstream);
      const cache = labelValue(sample.cache);
      sourceResults.inc({
        slot,
        upstream,
        status: labelValue(sample.status),
        reason: labelValue(sample.reason ?? ''),
        cache,
      });
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
    watchLists(count) {
      listCount = count;
    },
    recordListMatch(list) {
      listMatchesBound[list].inc();
    },
    recordReport(rating) {
      reportsAccepted.inc({ rating });
    },
    recordReportRefusal(reason) {
      reportRefusals.inc({ reason });
    },
    recordCspViolation(directive) {
      cspViolations.inc({ directive });
    },
    watchReportTokens(count) {
      reportTokenCount = count;
    },
    watchUpstreams(next) {
      probes = next;
      for (const circuit of next.circuits) declareSourceSlot(circuit.slot, circuit.upstream);
    },
  };
}
