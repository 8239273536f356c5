// The published contracts tests hold the service's output to, read the way an outside tool
// reads them: the OpenAPI document the service serves (for every answer of every HTTP suite),
// and the Prometheus text exposition format with promtool's naming rules (for /metrics).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// Holds an answer of the service to the OpenAPI document the service itself publishes, the way a
// schema-driven client or tester reads it: the operation for the method and path, the response
// for the status (an undocumented status fails), the media type (an undocumented content type
// fails), the body against that media type's JSON Schema (2020-12, as OpenAPI 3.1 says), and the
// documented headers (a required one missing, a value off its schema, or a tracked header the
// response does not document, fails). Used by every HTTP suite for every answer it receives.
export interface WireAnswer {
  method: string;
  /** The request target as sent (path and query; possibly not valid URL syntax). */
  path: string;
  status: number;
  contentType: string | undefined;
  body: string;
  /** Response headers; absent for answers read off a raw socket, whose headers are not checked. */
  headers?: Headers | Record<string, string | string[] | number | undefined>;
}

export interface OpenApiContract {
  readonly document: OpenApiDocument;
  /** What in the answer the document does not say, or undefined when it is documented. */
  describeMismatch(answer: WireAnswer): string | undefined;
}

interface HeaderObject {
  required?: boolean;
  schema?: object;
}
interface MediaTypeObject {
  schema?: object;
}
interface ResponseObject {
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaTypeObject>;
}
interface OperationObject {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
}

// Headers the service sets with a meaning of its own: carrying one that the response does not
// document is a drift too.
const TRACKED_HEADERS = [
  'x-request-id',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'allow',
  'cache-control',
  'etag',
  'vary',
  'content-encoding',
];

// Paths the service answers that are not API operations: the lookup page and its assets, the
// Prometheus text, the browsable reference. Only their success is outside the document; their
// errors are problem documents like any other.
const OUTSIDE_DOCUMENT: readonly { path: RegExp; statuses: readonly number[] }[] = [
  { path: /^\/(?:assets\/app\.js|assets\/styles\.css)?$/, statuses: [200] },
  { path: /^\/metrics$/, statuses: [200] },
  { path: /^\/docs(?:\/.*)?$/, statuses: [200, 302, 304, 404] },
];

export async function loadOpenApiContract(app: FastifyInstance): Promise<OpenApiContract> {
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}`);
  return createOpenApiContract(JSON.parse(response.body) as OpenApiDocument);
}

export function createOpenApiContract(document: OpenApiDocument): OpenApiContract {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The formats the document names (date-time, uri, …) are checked too, not ignored.
  addFormats.default(ajv);
  const validators = new Map<object, ValidateFunction>();
  const validatorOf = (schema: object): ValidateFunction => {
    let validate = validators.get(schema);
    if (validate === undefined) {
      validate = ajv.compile(schema);
      validators.set(schema, validate);
    }
    return validate;
  };
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
  }));

  /** For an answer no single operation owns: every response any operation documents for this status. */
  function responsesFor(status: string): ResponseObject[] {
    return Object.values(document.paths).flatMap((pathItem) =>
      Object.values(pathItem).flatMap((operation) => operation.responses[status] ?? []),
    );
  }

  /** Undefined when the answer matches one of the candidate responses; else the first mismatch. */
  function describeAgainstAny(
    where: string,
    method: string,
    answer: WireAnswer,
    candidates: ResponseObject[],
  ): string | undefined {
    if (candidates.length === 0) return `${where}: status ${answer.status} is documented for no operation`;
    const mismatches = candidates.map((candidate) => describeResponseMismatch(where, method, answer, candidate));
    return mismatches.includes(undefined) ? undefined : mismatches[0];
  }

  function describeMismatch(answer: WireAnswer): string | undefined {
    const method = answer.method.toUpperCase();
    const pathname = routedPathname(answer.path);
    const status = String(answer.status);
    const matched = templates.find(({ pattern }) => pattern.test(pathname));
    if (matched === undefined) {
      if (OUTSIDE_DOCUMENT.some((outside) => outside.path.test(pathname) && outside.statuses.includes(answer.status)))
        return undefined;
      return describeAgainstAny(`${method} ${pathname} (no operation)`, method, answer, responsesFor(status));
    }
    const pathItem = document.paths[matched.template] ?? {};
    const operation = pathItem[method === 'HEAD' ? 'get' : method.toLowerCase()];
    if (operation === undefined) {
      // A method the path does not have: the documented 405 of its GET operation, or an answer
      // given before routing (a request Node could not parse), as documented for any operation.
      const where = `${method} ${matched.template} (a method the path does not have)`;
      const get = pathItem.get?.responses['405'];
      if (answer.status === 405)
        return get === undefined
          ? `${where}: 405 is not documented`
          : describeResponseMismatch(where, method, answer, get);
      return describeAgainstAny(where, method, answer, responsesFor(status));
    }
    const where = `${method} ${matched.template}`;
    const response = operation.responses[status];
    if (response === undefined) return `${where}: status ${status} is not documented`;
    return describeResponseMismatch(where, method, answer, response);
  }

  function describeResponseMismatch(
    where: string,
    method: string,
    answer: WireAnswer,
    response: ResponseObject,
  ): string | undefined {
    if (answer.headers !== undefined) {
      const headerProblem = describeHeaderMismatch(where, answer.headers, response.headers ?? {});
      if (headerProblem !== undefined) return headerProblem;
    }
    if (method === 'HEAD') return answer.body === '' ? undefined : `${where}: HEAD answer with a body`;
    const content = response.content;
    if (content === undefined)
      return answer.body === '' ? undefined : `${where}: ${answer.status} has a body but documents none`;
    const mediaType = answer.contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
    const media = content[mediaType];
    if (media === undefined)
      return `${where}: ${answer.status} with undocumented content type "${answer.contentType ?? ''}" (documented: ${Object.keys(content).join(', ')})`;
    if (media.schema === undefined) return undefined;
    // A text representation's schema describes the body as one string.
    if (mediaType.startsWith('text/')) {
      const validateText = validatorOf(media.schema);
      return validateText(answer.body)
        ? undefined
        : `${where}: ${answer.status} ${mediaType} body does not match the document: ${ajv.errorsText(validateText.errors)}`;
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return `${where}: ${answer.status} body is not JSON`;
    }
    const validate = validatorOf(media.schema);
    if (!validate(body))
      return `${where}: ${answer.status} ${mediaType} body does not match the document: ${ajv.errorsText(validate.errors)}`;
    return undefined;
  }

  function describeHeaderMismatch(
    where: string,
    headers: NonNullable<WireAnswer['headers']>,
    documented: Record<string, HeaderObject>,
  ): string | undefined {
    const documentedNames = new Map(Object.entries(documented).map(([name, header]) => [name.toLowerCase(), header]));
    for (const [name, header] of documentedNames) {
      const value = headerValue(headers, name);
      if (value === undefined) {
        if (header.required === true) return `${where}: required header ${name} is missing`;
        continue;
      }
      if (header.schema !== undefined && !validatorOf(header.schema)(value))
        return `${where}: header ${name}: ${JSON.stringify(value)} does not match its schema`;
    }
    for (const name of TRACKED_HEADERS) {
      if (!documentedNames.has(name) && headerValue(headers, name) !== undefined)
        return `${where}: carries the undocumented header ${name}`;
    }
    return undefined;
  }

  return { document, describeMismatch };
}

function headerValue(headers: NonNullable<WireAnswer['headers']>, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** Drops leading and trailing C0 controls and spaces (U+0000–U+0020), as URL parsing does. */
function trimControlsAndSpaces(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start += 1;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end -= 1;
  return text.slice(start, end);
}

/** The path as the router sees it: `/..` resolved, query dropped, no trailing slash (ignoreTrailingSlash). */
export function routedPathname(path: string): string {
  // The asterisk form (`GET *`) is routed as the root by Node and Fastify.
  if (path === '*') return '/';
  // Leading and trailing spaces and controls are dropped, as URL parsing does (only inject()
  // can send them), and a leading `//` is a path here, not a host.
  const trimmed = trimControlsAndSpaces(path);
  let pathname: string;
  try {
    pathname = new URL(`http://127.0.0.1${trimmed.startsWith('/') ? '' : '/'}${trimmed}`).pathname;
  } catch {
    pathname = trimmed.split('?')[0] ?? trimmed;
  }
  return pathname.length > 1 ? pathname.replace(/\/$/, '') : pathname;
}

const contracts = new WeakMap<FastifyInstance, Promise<OpenApiContract>>();

/** The contract of a running app, read once per app. */
export function contractOf(app: FastifyInstance): Promise<OpenApiContract> {
  let contract = contracts.get(app);
  if (contract === undefined) {
    contract = loadOpenApiContract(app);
    contracts.set(app, contract);
  }
  return contract;
}

/** Fails with the mismatch when the answer is not the one the document describes. */
export async function expectDocumentedAnswer(app: FastifyInstance, answer: WireAnswer): Promise<void> {
  const mismatch = (await contractOf(app)).describeMismatch(answer);
  if (mismatch !== undefined) throw new Error(`answer not as documented: ${mismatch}\n${answer.body.slice(0, 300)}`);
}

/** What `fetchDocumented` read: the body as text, to be parsed by the test as it expects. */
export interface DocumentedAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** A request to the service over real HTTP (GET unless `init.method` says otherwise), its answer held to the document. */
export async function fetchDocumented(
  server: { baseUrl: string; app: FastifyInstance },
  path: string,
  init: RequestInit = {},
): Promise<DocumentedAnswer> {
  const response = await fetch(server.baseUrl + path, init);
  const text = await response.text();
  await expectDocumentedAnswer(server.app, {
    method: init.method ?? 'GET',
    path,
    status: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    body: text,
    headers: response.headers,
  });
  return { status: response.status, headers: response.headers, text };
}

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
const NON_BASE_UNITS = [
  'milliseconds',
  'microseconds',
  'nanoseconds',
  'minutes',
  'hours',
  'days',
  'kilobytes',
  'megabytes',
  'gigabytes',
];

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

/** Every label value of a Prometheus text exposition. */
export function labelValues(exposition: string): string[] {
  const values: string[] = [];
  for (const match of exposition.matchAll(/[a-z_]+="((?:[^"\\]|\\.)*)"/g)) values.push(match[1] ?? '');
  return values;
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
  if (type === 'counter' && !name.endsWith('_total'))
    problems.push(`${name}: counter metrics should have "_total" suffix`);
  if (type !== 'counter' && name.endsWith('_total'))
    problems.push(`${name}: non-counter metrics should not have "_total" suffix`);
  if (/[a-z][A-Z]/.test(name)) problems.push(`${name}: metric names should be written in snake_case, not camelCase`);
  for (const unit of NON_BASE_UNITS)
    if (name.includes(`_${unit}`)) problems.push(`${name}: use base unit instead of "${unit}"`);
  for (const sample of family.samples) {
    for (const label of Object.keys(sample.labels))
      if (/[a-z][A-Z]/.test(label))
        problems.push(`${name}: label names should be written in snake_case, not camelCase ("${label}")`);
    if (type === 'counter' && !(sample.value >= 0))
      problems.push(`${seriesKey(sample)}: a counter must be a non-negative number`);
    if (type === 'histogram' && sample.name.endsWith('_bucket') && !('le' in sample.labels))
      problems.push(`${seriesKey(sample)}: a bucket needs an "le" label`);
    if (type === 'summary' && sample.name === name && !('quantile' in sample.labels))
      problems.push(`${seriesKey(sample)}: a quantile needs a "quantile" label`);
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
