// The console's one way to the admin API: same origin, the token as Bearer, JSON in and out.
// The token lives in this module's memory only (no cookie, no storage): a new tab, a reload or
// sign-out forgets it.
let token: string | undefined;

export function signedIn(): boolean {
  return token !== undefined;
}

export function forgetToken(): void {
  token = undefined;
}

/** A refused or failed call, with what the console shows of it. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(`${status}: ${detail}`);
  }
}

/** Called when a signed-in call answers 401: the token is no longer good (rotated), so the console signs out. */
let onExpired: () => void = () => undefined;
export function whenExpired(handler: () => void): void {
  onExpired = handler;
}

async function failureOf(response: Response): Promise<ApiFailure> {
  let detail = response.statusText;
  try {
    const body = (await response.json()) as { detail?: string; title?: string };
    detail = body.detail ?? body.title ?? detail;
  } catch {
    // Not a problem document: the status text says enough.
  }
  const retry = Number(response.headers.get('retry-after'));
  return new ApiFailure(response.status, detail, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

async function send(path: string, init: RequestInit, given = token): Promise<Response> {
  const headers = new Headers(init.headers);
  if (given !== undefined) headers.set('Authorization', `Bearer ${given}`);
  const response = await fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
  if (!response.ok) {
    const failure = await failureOf(response);
    if (response.status === 401 && given === token && token !== undefined) {
      token = undefined;
      onExpired();
    }
    throw failure;
  }
  return response;
}

/** Signs in: the token is kept only when the admin API takes it. */
export async function signIn(candidate: string): Promise<void> {
  // The lightest admin route every deployment with the console has.
  await send('/admin/setup', { method: 'GET' }, candidate);
  token = candidate;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await send(path, { method: 'GET' })).json()) as T;
}

export async function getText(path: string): Promise<string> {
  return (await send(path, { method: 'GET' })).text();
}

/** PUT, POST or DELETE with an optional JSON (or CSV) body; the answer's JSON, or undefined for a 204. */
export async function change<T = unknown>(
  method: 'PUT' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<T | undefined> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'Content-Type': contentType };
  }
  const response = await send(path, init);
  return response.status === 204 ? undefined : ((await response.json()) as T);
}

/** A path segment: `+33162*` → `%2B33162*`. */
export const segment = (value: string): string => encodeURIComponent(value);

// ---- What the admin API answers (docs/api.md; the contract of docs/console.md)
export { DECIDED_BY, VERDICTS, type DecidedBy, type Verdict } from '../../domain/verdict-names.js';
import type { DecidedBy, Verdict } from '../../domain/verdict-names.js';

export interface StatsBucket {
  hour: string;
  verdicts: Record<Verdict, number>;
  decidedBy: Record<DecidedBy, number>;
}
export interface Status {
  sources: Array<{
    slot: string;
    name: string;
    state: 'ok' | 'failing';
    failingSince: string | null;
    breaker: 'closed' | 'open' | 'half_open';
    budgetUsed: number;
    budgetPerMinute: number;
  }>;
  feedClients: Array<{ client: string; lastFetchAt: string; entries: number }>;
  reports: { last24h: number; last7d: number };
  tokens: Array<{ id: string; label: string; lastUsedAt: string | null }>;
}
export interface Call {
  at: string;
  number: string;
  verdict: Verdict;
  decidedBy: DecidedBy;
  cid: string;
}
export interface ListRule {
  rule: string;
  list: 'allow' | 'block';
  label?: string;
  labelPublic?: boolean;
  note?: string;
  createdAt: string;
  expiresAt?: string;
}
export interface Check {
  number: string;
  verdict: Verdict;
  decidedBy: DecidedBy;
  cid: { fr: string; en: string };
  rule: ListRule | null;
  reasons: string[];
}
export interface Decide {
  number: string;
  rule: ListRule | null;
  list: 'allow' | 'block' | null;
  why: string[];
}
export interface ReportedNumber {
  number: string;
  verdict: Verdict;
  reporters: number;
  ratings: Record<string, number>;
  labels: string[];
  comments: string[];
  lastAt: string;
  dismissed: boolean;
}
export interface Token {
  id: string;
  label: string;
  createdAt: string;
  expiresAt?: string;
  lastUsedAt?: string;
  revokedAt?: string;
}
export interface CreatedToken extends Token {
  token: string;
  configs?: { query: unknown; report: unknown };
  qrSvg?: string;
}
export interface Setup {
  settings: Record<string, string | number | boolean | null>;
  numberingData: Record<string, unknown> & { date?: string };
  redis: 'ok' | 'degraded' | 'off';
  version: string;
}
