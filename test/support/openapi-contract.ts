// Holds an answer of the service to the OpenAPI document the service itself publishes, the way a
// schema-driven client or tester reads it: the operation for the method and path, the response
// for the status (an undocumented status fails), the media type (an undocumented content type
// fails), the body against that media type's JSON Schema (2020-12, as OpenAPI 3.1 says), and the
// documented headers (a required one missing, a value off its schema, or a tracked header the
// response does not document, fails). Used by every HTTP suite for every answer it receives.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';

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
const TRACKED_HEADERS = ['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'allow', 'cache-control', 'etag', 'vary', 'content-encoding'];

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
    return Object.values(document.paths).flatMap((pathItem) => Object.values(pathItem).flatMap((operation) => operation.responses[status] ?? []));
  }

  /** Undefined when the answer matches one of the candidate responses; else the first mismatch. */
  function describeAgainstAny(where: string, method: string, answer: WireAnswer, candidates: ResponseObject[]): string | undefined {
    if (candidates.length === 0) return `${where}: status ${answer.status} is documented for no operation`;
    const mismatches = candidates.map((candidate) => describeResponseMismatch(where, method, answer, candidate));
    return mismatches.includes(undefined) ? undefined : mismatches[0];
  }

  function describeMismatch(answer: WireAnswer): string | undefined {
    const method = answer.method.toUpperCase();
    const pathname = normalisedPathname(answer.path);
    const status = String(answer.status);
    const matched = templates.find(({ pattern }) => pattern.test(pathname));
    if (matched === undefined) {
      if (OUTSIDE_DOCUMENT.some((outside) => outside.path.test(pathname) && outside.statuses.includes(answer.status))) return undefined;
      return describeAgainstAny(`${method} ${pathname} (no operation)`, method, answer, responsesFor(status));
    }
    const pathItem = document.paths[matched.template] ?? {};
    const operation = pathItem[method === 'HEAD' ? 'get' : method.toLowerCase()];
    if (operation === undefined) {
      // A method the path does not have: the documented 405 of its GET operation, or an answer
      // given before routing (a request Node could not parse), as documented for any operation.
      const where = `${method} ${matched.template} (a method the path does not have)`;
      const get = pathItem.get?.responses['405'];
      if (answer.status === 405) return get === undefined ? `${where}: 405 is not documented` : describeResponseMismatch(where, method, answer, get);
      return describeAgainstAny(where, method, answer, responsesFor(status));
    }
    const where = `${method} ${matched.template}`;
    const response = operation.responses[status];
    if (response === undefined) return `${where}: status ${status} is not documented`;
    return describeResponseMismatch(where, method, answer, response);
  }

  function describeResponseMismatch(where: string, method: string, answer: WireAnswer, response: ResponseObject): string | undefined {
    if (answer.headers !== undefined) {
      const headerProblem = describeHeaderMismatch(where, answer.headers, response.headers ?? {});
      if (headerProblem !== undefined) return headerProblem;
    }
    if (method === 'HEAD') return answer.body === '' ? undefined : `${where}: HEAD answer with a body`;
    const content = response.content;
    if (content === undefined) return answer.body === '' ? undefined : `${where}: ${answer.status} has a body but documents none`;
    const mediaType = answer.contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
    const media = content[mediaType];
    if (media === undefined) return `${where}: ${answer.status} with undocumented content type "${answer.contentType ?? ''}" (documented: ${Object.keys(content).join(', ')})`;
    if (media.schema === undefined) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return `${where}: ${answer.status} body is not JSON`;
    }
    const validate = validatorOf(media.schema);
    if (!validate(body)) return `${where}: ${answer.status} ${mediaType} body does not match the document: ${ajv.errorsText(validate.errors)}`;
    return undefined;
  }

  function describeHeaderMismatch(where: string, headers: NonNullable<WireAnswer['headers']>, documented: Record<string, HeaderObject>): string | undefined {
    const documentedNames = new Map(Object.entries(documented).map(([name, header]) => [name.toLowerCase(), header]));
    for (const [name, header] of documentedNames) {
      const value = headerValue(headers, name);
      if (value === undefined) {
        if (header.required === true) return `${where}: required header ${name} is missing`;
        continue;
      }
      if (header.schema !== undefined && !validatorOf(header.schema)(value)) return `${where}: header ${name}: ${JSON.stringify(value)} does not match its schema`;
    }
    for (const name of TRACKED_HEADERS) {
      if (!documentedNames.has(name) && headerValue(headers, name) !== undefined) return `${where}: carries the undocumented header ${name}`;
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

/** The path as the router sees it: `/..` resolved, query dropped, no trailing slash (ignoreTrailingSlash). */
function normalisedPathname(path: string): string {
  // The asterisk form (`GET *`) is routed as the root by Node and Fastify.
  if (path === '*') return '/';
  let pathname: string;
  try {
    pathname = new URL(path, 'http://127.0.0.1').pathname;
  } catch {
    pathname = path.split('?')[0] ?? path;
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
