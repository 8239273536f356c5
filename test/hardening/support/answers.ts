// What every answer of the service must look like, whatever was asked: one of the documented
// statuses, and for each the documented body (the success envelope, the health result, or
// application/problem+json carrying both RFC 9457 members and the envelope's error style).
import type { FastifyInstance } from 'fastify';
import { routedPathname } from '../../support/contracts.js';

const WEB_PAGE_PATHS: ReadonlySet<string> = new Set(['/', '/assets/app.js', '/assets/styles.css']);

export const DOCUMENTED_STATUSES: ReadonlySet<number> = new Set([200, 304, 400, 404, 405, 429, 502, 503]);

const TITLES: Record<number, string[]> = {
  400: ['Invalid phone number format', 'Bad request'],
  404: ['Route not found'],
  405: ['Method not allowed'],
  429: ['Too many requests'],
  502: ['All data sources failed'],
  503: ['Service overloaded', 'Service unavailable'],
};

export interface SeenAnswer {
  method: string;
  /** The path as sent (possibly not valid URL syntax). */
  path: string;
  status: number;
  contentType: string | undefined;
  body: string;
}

/** Returns what is wrong with an answer, or undefined when it is a documented one. */
export function describeUndocumentedAnswer(answer: SeenAnswer): string | undefined {
  const { method, path, status, contentType, body } = answer;
  // The browsable reference serves its own static files and redirects: not part of the API contract.
  if (/^\/docs(\/|$|\?)/.test(path) && (status === 200 || status === 302 || status === 404)) return undefined;
  const pathname = routedPathname(path);
  // The web page and its assets, and the Prometheus text: their own content types, by design.
  if (
    (WEB_PAGE_PATHS.has(pathname.replace(/(.)\/$/, '$1')) || pathname === '/metrics' || pathname === '/metrics/') &&
    status === 200
  )
    return undefined;
  if (!DOCUMENTED_STATUSES.has(status)) return `status ${status}`;
  if (method === 'HEAD') return body === '' ? undefined : 'HEAD answer with a body';
  // If-None-Match naming the answer held (or `*`): no body.
  if (status === 304) return body === '' ? undefined : '304 with a body';
  if (status === 200) return describeUndocumentedSuccess(path, contentType, body);
  if (!contentType?.startsWith('application/problem+json'))
    return `error ${status} with content type ${contentType ?? 'none'}`;
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return `error ${status} body is not JSON`;
  }
  const titles = TITLES[status] ?? [];
  if (typeof problem.type !== 'string' || !problem.type.startsWith('/problems/')) return 'problem without type';
  if (typeof problem.title !== 'string' || !titles.includes(problem.title))
    return `problem title ${String(problem.title)} for ${status}`;
  if (problem.status !== status) return 'problem status differs from the HTTP status';
  if (typeof problem.requestId !== 'string' || problem.requestId === '') return 'problem without requestId';
  if (problem.success !== false) return 'problem without success:false';
  if (problem.error !== problem.title) return 'problem error differs from title';
  if (typeof problem.detail === 'string' && /\bat .+:\d+:\d+\)?/.test(problem.detail))
    return 'problem detail holds a stack trace';
  return undefined;
}

function describeUndocumentedSuccess(path: string, contentType: string | undefined, body: string): string | undefined {
  if (!contentType?.startsWith('application/json')) return `200 with content type ${contentType ?? 'none'}`;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return '200 body is not JSON';
  }
  const pathname = path.split('?')[0] ?? path;
  if (pathname.startsWith('/api/phone/')) {
    if (parsed.success !== true || typeof parsed.data !== 'object' || parsed.data === null)
      return '200 without the success envelope';
    const data = parsed.data as Record<string, unknown>;
    if (typeof data.number !== 'string') return '200 without data.number';
    const expected = /\/score\/?$/.test(pathname)
      ? ['number', 'risk', 'score']
      : /\/info\/?$/.test(pathname)
        ? ['number', 'phoneInfo']
        : ['number', 'phoneInfo', 'sources'];
    if (Object.keys(data).sort().join() !== expected.join()) return `200 data members ${Object.keys(data).join()}`;
    return undefined;
  }
  if (/^\/health\/ready\/?$/.test(pathname)) return typeof parsed.status === 'string' ? undefined : 'readiness body';
  if (pathname.startsWith('/health')) {
    return parsed.status === 'ok' && typeof parsed.uptime === 'number' && typeof parsed.timestamp === 'string'
      ? undefined
      : 'health body';
  }
  if (pathname.startsWith('/openapi.json')) return typeof parsed.openapi === 'string' ? undefined : 'openapi body';
  return `200 on an unexpected path ${pathname}`;
}

/**
 * A freshly started app may shed its first requests (503) while under-pressure still sees the
 * start-up stall; tests that need 200s wait for the first 200 from /health.
 */
export async function waitUntilServing(app: FastifyInstance, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await app.inject({ method: 'GET', url: '/health' });
    if (response.statusCode === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the app never answered /health with 200');
}
