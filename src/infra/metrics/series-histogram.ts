// A Prometheus histogram whose series are plain numbers, for the one histogram observed on every
// HTTP answer. prom-client's own `observe`, even on a child bound with `labels()`, wraps the
// value in an object, checks and hashes the labels into a string key, and finds the bucket by
// a number-keyed property: about 1.4 µs per call here (a process that also observes its
// upstream histograms), and with the garbage it makes, 8–15 % of the CPU of a held answer
// (docs/hot-path.md, "The HTTP histogram"). A series made here is bound once, at the first
// answer of its route and status, and observing is a bucket search and three additions.
//
// The registry renders it through prom-client's metric contract: `name`, `help`, `type`,
// `aggregator`, and `get()` giving the values in the shape prom-client's own Histogram gives
// (`*_bucket` cumulative with `le` first, `+Inf`, `*_sum`, `*_count`); `reset()` for
// `registry.resetMetrics()`. That contract is prom-client's, not ours: series-histogram.test.ts
// renders this histogram and a prom-client Histogram fed the same observations and fails on
// any difference in the text or the JSON, so a prom-client release that renders metrics
// another way is caught before it ships. Checked with prom-client 15.1.3.
import type { Metric, Registry, RegistryContentType } from 'prom-client';

/** One value of prom-client's metric contract (`get()`). */
export interface MetricSample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/** What `get()` answers in prom-client's metric contract (its own types give `type` as an enum it never uses at run time). */
export interface MetricValues {
  name: string;
  help: string;
  type: 'histogram';
  values: MetricSample[];
  aggregator: 'sum';
}

/** One series: its labels and its counts, kept per bucket (not cumulative). */
export interface HistogramSeries {
  observe(value: number): void;
}

interface SeriesData<T extends string> {
  readonly labels: Readonly<Record<T, string>>;
  /** Observations per bucket, the last one for values above every bound (+Inf). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export interface SeriesHistogramOptions<T extends string> {
  name: string;
  help: string;
  labelNames: readonly T[];
  /** Upper bounds, increasing. */
  buckets: readonly number[];
  registers: ReadonlyArray<Registry<RegistryContentType>>;
}

export class SeriesHistogram<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly labelNames: readonly T[];
  private readonly upperBounds: readonly number[];
  private readonly bound = new Map<string, SeriesData<T>>();

  constructor(options: SeriesHistogramOptions<T>) {
    for (let i = 1; i < options.buckets.length; i += 1) {
      if ((options.buckets[i] ?? 0) <= (options.buckets[i - 1] ?? 0))
        throw new Error(`${options.name}: buckets must increase`);
    }
    if (options.labelNames.includes('le' as T)) throw new Error(`${options.name}: le is a reserved label name`);
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.upperBounds = [...options.buckets];
    // prom-client's registry takes any metric that answers `get()` (it renders through
    // `getForPromString()` only when a metric has one); its types name only its own classes.
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of these labels, bound: made on first use, the same one after. It is shown from
   * its first observation on, as prom-client shows a series.
   */
  series(labels: Readonly<Record<T, string>>): HistogramSeries {
    const key = this.labelNames.map((name) => labels[name]).join('\u0000');
    let data = this.bound.get(key);
    if (data === undefined) {
      const own = {} as Record<T, string>;
      for (const name of this.labelNames) {
        const value = labels[name];
        if (typeof value !== 'string') throw new Error(`${this.name}: label ${name} has no value`);
        own[name] = value;
      }
      data = { labels: own, counts: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
      this.bound.set(key, data);
    }
    const made = data;
    const bounds = this.upperBounds;
    const last = bounds.length;
    return {
      observe: (value: number): void => {
        // As prom-client: a value that is not a finite number is a caller's bug, not a sample.
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${String(value)}`);
        let index = 0;
        while (index < last && value > (bounds[index] as number)) index += 1;
        made.counts[index] = (made.counts[index] as number) + 1;
        made.sum += value;
        made.count += 1;
      },
    };
  }

  /** prom-client's metric contract: the values as its Histogram gives them from `get()`. */
  async get(): Promise<MetricValues> {
    const bucketName = `${this.name}_bucket`;
    const values: MetricSample[] = [];
    for (const data of this.bound.values()) {
      if (data.count === 0) continue;
      let cumulative = 0;
      this.upperBounds.forEach((bound, index) => {
        cumulative += data.counts[index] as number;
        values.push({ labels: { le: bound, ...data.labels }, value: cumulative, metricName: bucketName });
      });
      values.push(
        { labels: { le: '+Inf', ...data.labels }, value: data.count, metricName: bucketName },
        { labels: { ...data.labels }, value: data.sum, metricName: `${this.name}_sum` },
        { labels: { ...data.labels }, value: data.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** prom-client's metric contract (`registry.resetMetrics()`): every series back to nothing observed. */
  reset(): void {
    for (const data of this.bound.values()) {
      data.counts.fill(0);
      data.sum = 0;
      data.count = 0;
    }
  }
}
