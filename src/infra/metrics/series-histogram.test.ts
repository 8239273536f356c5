// The guard of series-histogram.ts: it goes through prom-client's metric contract, not through
// prom-client's Histogram, so each test here renders it next to a prom-client Histogram fed the
// same observations and requires the same text and the same JSON. A prom-client release that
// renders or collects metrics another way fails here, before it ships.
import { AggregatorRegistry, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesHistogram } from './series-histogram.js';

const LABELS = ['method', 'route', 'status_code'] as const;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8];
type Labels = Record<(typeof LABELS)[number], string>;

/** Observations covering every bucket, a bound exactly, zero, and values above the last bound. */
const SAMPLES: Array<[Labels, number]> = [
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 0.0004],
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 0.005],
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 0.0051],
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 0.3],
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 8],
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 9.5],
  [{ method: 'GET', route: '/api/phone/:number', status_code: '200' }, 0],
  [{ method: 'GET', route: '/api/phone/:number/score', status_code: '429' }, 0.02],
  [{ method: 'HEAD', route: '(unmatched)', status_code: '404' }, 1.5],
  [{ method: 'GET', route: 'a "quoted" \\ route\nnext', status_code: '200' }, 0.07],
  [{ method: 'GET', route: '/api/phone/:number/score', status_code: '429' }, 3.25],
];

function pair(openMetrics = false) {
  const ours = new Registry<RegistryContentType>();
  const theirs = new Registry<RegistryContentType>();
  if (openMetrics) {
    ours.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    theirs.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  }
  const plain = new SeriesHistogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer, by "route"\\n.',
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [ours],
  });
  const reference = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer, by "route"\\n.',
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [theirs],
  });
  return { ours, theirs, plain, reference };
}

function feed({ plain, reference }: ReturnType<typeof pair>): void {
  for (const [labels, value] of SAMPLES) {
    plain.series(labels).observe(value);
    reference.labels(labels).observe(value);
  }
}

describe('SeriesHistogram, against prom-client Histogram', () => {
  it('renders the same exposition text for the same observations', async () => {
    const metrics = pair();
    feed(metrics);
    const text = await metrics.ours.metrics();
    expect(text).toBe(await metrics.theirs.metrics());
    // Not vacuous: the series, their buckets, sums and counts are there.
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/phone/:number",status_code="200"} 3',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/phone/:number",status_code="200"} 7',
    );
    expect(text).toContain(
      'http_request_duration_seconds_count{method="GET",route="/api/phone/:number/score",status_code="429"} 2',
    );
    expect(text).toContain(
      'http_request_duration_seconds_sum{method="GET",route="/api/phone/:number/score",status_code="429"} 3.27',
    );
  });

  it('renders the same OpenMetrics text', async () => {
    const metrics = pair(true);
    feed(metrics);
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
  });

  it('gives the same JSON, and aggregates across workers as prom-client does', async () => {
    const first = pair();
    const second = pair();
    feed(first);
    feed(second);
    second.plain.series({ method: 'GET', route: '/health', status_code: '200' }).observe(0.001);
    second.reference.labels({ method: 'GET', route: '/health', status_code: '200' }).observe(0.001);
    const ours = await first.ours.getMetricsAsJSON();
    const theirs = await first.theirs.getMetricsAsJSON();
    // prom-client adds `exemplar` fields that carry nothing without exemplars; the rest must match.
    const withoutExemplars = (json: unknown) =>
      JSON.parse(JSON.stringify(json, (key, value: unknown) => (key === 'exemplar' ? undefined : value))) as unknown;
    expect(withoutExemplars(ours)).toEqual(withoutExemplars(theirs));
    const aggregatedOurs = AggregatorRegistry.aggregate([ours, await second.ours.getMetricsAsJSON()]);
    const aggregatedTheirs = AggregatorRegistry.aggregate([theirs, await second.theirs.getMetricsAsJSON()]);
    const text = await aggregatedOurs.metrics();
    expect(text).toBe(await aggregatedTheirs.metrics());
    expect(text).toContain(
      'http_request_duration_seconds_count{method="GET",route="/api/phone/:number",status_code="200"} 14',
    );
  });

  it('shows a series from its first observation, as prom-client does, and resetMetrics empties it', async () => {
    const metrics = pair();
    const labels: Labels = { method: 'GET', route: '/api/phone/:number/info', status_code: '200' };
    const bound = metrics.plain.series(labels);
    metrics.reference.labels(labels);
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
    expect(await metrics.ours.metrics()).not.toContain('_count');
    bound.observe(0.002);
    metrics.reference.labels(labels).observe(0.002);
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
    metrics.ours.resetMetrics();
    metrics.theirs.resetMetrics();
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
    expect(await metrics.ours.metrics()).not.toContain('_count');
    // A series bound before the reset still counts after it.
    bound.observe(0.2);
    metrics.reference.labels(labels).observe(0.2);
    expect(await metrics.ours.metrics()).toBe(await metrics.theirs.metrics());
    expect(await metrics.ours.metrics()).toContain(
      'http_request_duration_seconds_count{method="GET",route="/api/phone/:number/info",status_code="200"} 1',
    );
  });

  it('binds one series per label set and refuses what prom-client refuses', () => {
    const { plain, ours } = pair();
    const labels: Labels = { method: 'GET', route: '/x', status_code: '200' };
    plain.series(labels).observe(0.1);
    plain.series({ ...labels }).observe(0.1);
    expect(() => plain.series(labels).observe(Number.NaN)).toThrow(TypeError);
    expect(() => plain.series(labels).observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => plain.series({ method: 'GET', route: '/x' } as Labels)).toThrow(/status_code/);
    expect(
      () => new SeriesHistogram({ name: 'a', help: 'a', labelNames: ['le'], buckets: [1], registers: [] }),
    ).toThrow(/le/);
    expect(() => new SeriesHistogram({ name: 'b', help: 'b', labelNames: [], buckets: [1, 1], registers: [] })).toThrow(
      /increase/,
    );
    // Registered once under its name, as prom-client registers its own metrics.
    expect(
      () =>
        new SeriesHistogram({
          name: 'http_request_duration_seconds',
          help: 'again',
          labelNames: LABELS,
          buckets: BUCKETS,
          registers: [ours],
        }),
    ).toThrow(/already been registered/);
    return ours.getMetricsAsJSON().then((json) => {
      const count = json[0]?.values.find(
        (value) => (value as { metricName?: string }).metricName === 'http_request_duration_seconds_count',
      );
      expect(count?.value).toBe(2);
    });
  });
});
