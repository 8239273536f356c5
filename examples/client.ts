// A small typed client for phone-reputation. Its types come from the service's own OpenAPI
// document, generated with openapi-typescript:
//
//   npx openapi-typescript http://localhost:3000/openapi.json -o examples/phone-reputation-api.d.ts
//
// test/http/openapi-document.test.ts generates them from the served document and type-checks
// this file against them, so the example cannot drift from the API.
import type { paths } from './phone-reputation-api.js';

// The GET operations (the report routes are POST only).
type WithGet = { get: { responses: unknown } };
type GetPath = { [K in keyof paths]: paths[K] extends WithGet ? K : never }[keyof paths];
type Operation<P extends GetPath> = Extract<paths[P], WithGet>['get']['responses'];

export type FullReport = Operation<'/api/phone/{number}'>[200]['content']['application/json'];
export type ScoreAnswer = Operation<'/api/phone/{number}/score'>[200]['content']['application/json'];
export type InvalidNumber = Operation<'/api/phone/{number}'>[400]['content']['application/problem+json'];
export type AllSourcesFailed = Operation<'/api/phone/{number}'>[502]['content']['application/problem+json'];
export type TooManyRequests = Operation<'/api/phone/{number}'>[429]['content']['application/problem+json'];
/** A report recorded (`POST /api/report`, with a reporter token). */
export type ReportRecorded = paths['/api/report']['post']['responses'][200]['content']['application/json'];

export type Lookup<T> =
  | { kind: 'ok'; answer: T }
  | { kind: 'invalid'; problem: InvalidNumber }
  | { kind: 'sources_failed'; problem: AllSourcesFailed }
  | { kind: 'retry_later'; retryAfterSeconds: number }
  | { kind: 'error'; status: number; detail: string };

async function lookup<T>(baseUrl: string, path: string): Promise<Lookup<T>> {
  const response = await fetch(new URL(path, baseUrl), {
    headers: { accept: 'application/json, application/problem+json' },
  });
  const body: unknown = await response.json();
  switch (response.status) {
    case 200:
      return { kind: 'ok', answer: body as T };
    case 400:
      return { kind: 'invalid', problem: body as InvalidNumber };
    case 502:
      return { kind: 'sources_failed', problem: body as AllSourcesFailed };
    case 429:
      return { kind: 'retry_later', retryAfterSeconds: Number(response.headers.get('retry-after') ?? '60') };
    default:
      return {
        kind: 'error',
        status: response.status,
        detail: (body as { detail?: string }).detail ?? response.statusText,
      };
  }
}

/** GET /api/phone/{number}: the full report. */
export function fetchFullReport(baseUrl: string, number: string): Promise<Lookup<FullReport>> {
  return lookup<FullReport>(baseUrl, `/api/phone/${encodeURIComponent(number)}`);
}

/** GET /api/phone/{number}/score: the score and its risk level. */
export function fetchScore(baseUrl: string, number: string): Promise<Lookup<ScoreAnswer>> {
  return lookup<ScoreAnswer>(baseUrl, `/api/phone/${encodeURIComponent(number)}/score`);
}

/** What a call blocker might decide: block NPV ranges and suspicious scores, even when the sources are down. */
export async function shouldBlock(baseUrl: string, number: string): Promise<boolean | 'unknown'> {
  const score = await fetchScore(baseUrl, number);
  switch (score.kind) {
    case 'ok':
      return score.answer.data.risk === 'suspicious' || score.answer.meta.hints.includes('npv');
    case 'sources_failed':
      // The 502 still carries the number's facts.
      return score.problem.phoneInfo.isNPV ? true : 'unknown';
    case 'invalid':
      console.error(`${score.problem.detail ?? score.problem.title} (${score.problem.code ?? 'invalid_number'})`);
      return 'unknown';
    default:
      return 'unknown';
  }
}

/** One line about a number, from its full report. */
export async function describeNumber(baseUrl: string, number: string): Promise<string> {
  const report = await fetchFullReport(baseUrl, number);
  if (report.kind !== 'ok') return `no report (${report.kind})`;
  const { phoneInfo, sources } = report.answer.data;
  const primaryScore = sources.primary.score === null ? 'no score' : `score ${sources.primary.score}/9`;
  return `${phoneInfo.national} (${phoneInfo.type}, ${phoneInfo.region}): ${primaryScore}, ${sources.community.commentsCount} community comments`;
}
