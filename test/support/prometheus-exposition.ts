// A reader of the Prometheus text exposition format (version 0.0.4, what prom-client serves)
// that also applies the naming rules `promtool check metrics` enforces, so a test can say
// "a Prometheus server and its linter accept this scrape" without promtool installed.
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/
// Lint rules: https://github.com/prometheus/client_golang/tree/main/prometheus/testutil/promlint

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`… for histograms). */
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

export interface Exposition {
  families: Map<string, MetricFamily>;
  /** Every syntax error and lint finding, one sentence each with its line number; empty when clean. */
  problems: string[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** Units promtool wants in their base form (seconds, bytes…). */
const NON_BASE_UNITS = ['milliseconds', 'microseconds', 'nanoseconds', 'minutes', 'hours', 'days', 'kilobytes', 'megabytes', 'gigabytes'];

/** The sample-name suffixes a family of each type may use; the family name itself comes first. */
const SUFFIXES: Record<MetricType, readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/** Prometheus reads values with Go's ParseFloat, which takes NaN and Inf in any case (prom-client prints `Nan`). */
function parseValue(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  if (lower === 'nan') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** Reads `{a="x",b="y"}` from the start of `text`; returns the labels and the rest of the line. */
function parseLabels(text: string): { labels: Record<string, string>; rest: string } | string {
  const labels: Record<string, string> = {};
  let index = 1;
  for (;;) {
    while (text[index] === ' ') index += 1;
    if (text[index] === '}') return { labels, rest: text.slice(index + 1) };
    const nameMatch = /^[^=\s]*/.exec(text.slice(index));
    const name = nameMatch?.[0] ?? '';
    if (!LABEL_NAME.test(name)) return `bad label name "${name}"`;
    if (name.startsWith('__')) return `label name "${name}" is reserved`;
    if (name in labels) return `label "${name}" repeated`;
    index += name.length;
    if (text[index] !== '=' || text[index + 1] !== '"') return `label "${name}" lacks ="value"`;
    index += 2;
    let value = '';
    for (;;) {
      const char = text[index];
      if (char === undefined) return `label "${name}" has an unterminated value`;
      if (char === '"') break;
      if (char === '\n') return `label "${name}" has a raw newline`;
      if (char === '\\') {
        const escaped = text[index + 1];
        if (escaped === '\\') value += '\\';
        else if (escaped === '"') value += '"';
        else if (escaped === 'n') value += '\n';
        else return `label "${name}" has an invalid escape`;
        index += 2;
        continue;
      }
      value += char;
      index += 1;
    }
    labels[name] = value;
    index += 1;
    if (text[index] === ',') index += 1;
    else if (text[index] !== '}') return `label "${name}" is not followed by , or }`;
  }
}

function seriesKey(sample: Sample): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((name) => `${name}=${JSON.stringify(sample.labels[name])}`);
  return labels.length === 0 ? sample.name : `${sample.name}{${labels.join(',')}}`;
}

/** The family a sample belongs to, by its declared families and their types' suffixes. */
function familyOf(sampleName: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  const exact = families.get(sampleName);
  if (exact !== undefined && SUFFIXES[exact.type].includes('')) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family !== undefined && SUFFIXES[family.type].includes(suffix)) return family;
  }
  return undefined;
}

function lintFamily(family: MetricFamily, hasHelpLine: boolean, problems: string[]): void {
  const { name, type } = family;
  if (hasHelpLine && family.help.trim() === '') problems.push(`${name}: no help text`);
  if (type === 'counter' && !name.endsWith('_total')) problems.push(`${name}: counter metrics should have "_total" suffix`);
  if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: non-counter metrics should not have "_total" suffix`);
  if (/[a-z][A-Z]/.test(name)) problems.push(`${name}: metric names should be written in snake_case, not camelCase`);
  for (const unit of NON_BASE_UNITS) if (name.includes(`_${unit}`)) problems.push(`${name}: use base unit instead of "${unit}"`);
  for (const sample of family.samples) {
    for (const label of Object.keys(sample.labels)) if (/[a-z][A-Z]/.test(label)) problems.push(`${name}: label names should be written in snake_case, not camelCase ("${label}")`);
    if (type === 'counter' && !(sample.value >= 0)) problems.push(`${seriesKey(sample)}: a counter must be a non-negative number`);
    if (type === 'histogram' && sample.name.endsWith('_bucket') && !('le' in sample.labels)) problems.push(`${seriesKey(sample)}: a bucket needs an "le" label`);
    if (type === 'summary' && sample.name === name && !('quantile' in sample.labels)) problems.push(`${seriesKey(sample)}: a quantile needs a "quantile" label`);
  }
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, MetricFamily>();
  const problems: string[] = [];
  const seenSeries = new Set<string>();
  const finished = new Set<string>();
  let current: MetricFamily | undefined;
  const helpSeen = new Set<string>();
  const typeSeen = new Set<string>();

  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else problems.push('the exposition does not end with a newline');

  lines.forEach((line, index) => {
    const at = `line ${index + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (match === null) return; // a plain comment
      const [, keyword, name = '', rest = ''] = match;
      if (!METRIC_NAME.test(name)) {
        problems.push(`${at}: bad metric name "${name}"`);
        return;
      }
      if (finished.has(name)) {
        problems.push(`${at}: ${name} declared again after its samples`);
        return;
      }
      let family = families.get(name);
      if (family === undefined) {
        family = { name, type: 'untyped', help: '', samples: [] };
        families.set(name, family);
      } else if (family.samples.length > 0) {
        problems.push(`${at}: ${keyword ?? ''} of ${name} after its samples`);
      }
      if (current !== undefined && current !== family) finished.add(current.name);
      current = family;
      if (keyword === 'HELP') {
        if (helpSeen.has(name)) problems.push(`${at}: second HELP for ${name}`);
        helpSeen.add(name);
        family.help = rest;
      } else {
        if (typeSeen.has(name)) problems.push(`${at}: second TYPE for ${name}`);
        typeSeen.add(name);
        if (!TYPES.has(rest)) problems.push(`${at}: unknown type "${rest}" for ${name}`);
        else family.type = rest as MetricType;
      }
      return;
    }

    const nameMatch = /^[^{\s]+/.exec(line);
    const sampleName = nameMatch?.[0] ?? '';
    if (!METRIC_NAME.test(sampleName)) {
      problems.push(`${at}: bad metric name "${sampleName}"`);
      return;
    }
    let rest = line.slice(sampleName.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const parsed = parseLabels(rest);
      if (typeof parsed === 'string') {
        problems.push(`${at}: ${parsed}`);
        return;
      }
      labels = parsed.labels;
      rest = parsed.rest;
    }
    const fields = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || fields.length < 1 || fields.length > 2) {
      problems.push(`${at}: expected "name{labels} value [timestamp]"`);
      return;
    }
    const value = parseValue(fields[0] ?? '');
    if (value === undefined) {
      problems.push(`${at}: bad value "${fields[0] ?? ''}"`);
      return;
    }
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) problems.push(`${at}: bad timestamp "${fields[1]}"`);
    const family = familyOf(sampleName, families);
    if (family === undefined) {
      problems.push(`${at}: ${sampleName} has no HELP/TYPE of its own family`);
      return;
    }
    if (family !== current) {
      problems.push(`${at}: samples of ${family.name} are not grouped together`);
      return;
    }
    const sample: Sample = { name: sampleName, labels, value };
    const key = seriesKey(sample);
    if (seenSeries.has(key)) problems.push(`${at}: duplicate series ${key}`);
    seenSeries.add(key);
    family.samples.push(sample);
  });

  for (const family of families.values()) {
    if (!helpSeen.has(family.name)) problems.push(`${family.name}: no HELP line`);
    if (!typeSeen.has(family.name)) problems.push(`${family.name}: no TYPE line`);
    lintFamily(family, helpSeen.has(family.name), problems);
  }
  return { families, problems };
}
