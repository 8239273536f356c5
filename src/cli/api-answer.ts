// What the CLI reads back from the API (in-process or remote): the status, the raw body, and
// the report when the body is one. The shape is checked, not trusted: with --url the other
// end could be anything.
import { SOURCE_SLOTS, type Report, type Risk, type SourceSlot } from '../domain/report.js';
import { SCORE_SOURCES, type ScoreSource } from '../domain/score.js';
import type { NumberFacts } from './facts.js';

export interface SourceMetaView {
  status: 'ok' | 'not_found' | 'blocked' | 'error';
  reason?: string;
  cache?: string;
  fetchedAt?: string;
}

export interface ReportBody {
  success: true;
  data: Report;
  /** `hints` comes from servers that send it; read it with readHints. */
  meta: {
    sources: Record<SourceSlot, SourceMetaView>;
    hints?: unknown;
    /** The server's score, risk and the score's source: the CLI shows them, never computes them. */
    score: number | null;
    risk: Risk;
    scoreSource: ScoreSource | null;
    /** The operator's rule that decided, from servers that send it; read it with readListMatch. */
    list?: unknown;
    /** What the deployment's reporters said, from servers that send it; read it with readReports. */
    reports?: unknown;
  };
}

/** `meta.list` as the CLI shows it: the deciding rule, its list and label. */
export interface ListMatchView {
  list: string;
  rule: string;
  label?: string;
}

/** `meta.reports` as the CLI shows it. */
export interface ReportsView {
  verdict: string;
  reporters: number;
  categories: Record<string, number>;
  lastReportAt?: string;
}

/** The deciding rule of `meta.list`, when the server sent a well-formed one. */
export function readListMatch(meta: ReportBody['meta']): ListMatchView | undefined {
  const list = meta.list;
  if (!isObject(list) || typeof list.list !== 'string' || typeof list.rule !== 'string') return undefined;
  return { list: list.list, rule: list.rule, ...(typeof list.label === 'string' ? { label: list.label } : {}) };
}

/** The reports of `meta.reports`, when the server sent well-formed ones (null or absent: nobody reported the number). */
export function readReports(meta: ReportBody['meta']): ReportsView | undefined {
  const reports = meta.reports;
  if (!isObject(reports) || typeof reports.verdict !== 'string' || typeof reports.reporters !== 'number')
    return undefined;
  const categories: Record<string, number> = {};
  if (isObject(reports.categories))
    for (const [rating, count] of Object.entries(reports.categories))
      if (typeof count === 'number' && Number.isFinite(count)) categories[rating] = count;
  return {
    verdict: reports.verdict,
    reporters: reports.reporters,
    categories,
    ...(typeof reports.lastReportAt === 'string' ? { lastReportAt: reports.lastReportAt } : {}),
  };
}

export interface ApiAnswer {
  status: number;
  /** The body exactly as the API sent it. */
  body: string;
  /** Seconds from Retry-After, on a 429. */
  retryAfterSeconds?: number;
  /** On a 502: the number's facts, from the body's `phoneInfo` or computed locally in-process. */
  facts?: NumberFacts;
}

const RISKS: ReadonlySet<unknown> = new Set<Risk>(['trustworthy', 'neutral', 'suspicious', 'unknown']);
const SCORE_SOURCE_VALUES: ReadonlySet<unknown> = new Set<ScoreSource | null>([...SCORE_SOURCES, null]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The report body, or undefined when the text is not one (malformed, or another shape). */
export function readReportBody(text: string): ReportBody | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || parsed.success !== true || !isObject(parsed.data) || !isObject(parsed.meta))
    return undefined;
  const { data, meta } = parsed;
  if (
    typeof data.number !== 'string' ||
    !isObject(data.phoneInfo) ||
    !isObject(data.sources) ||
    !isObject(meta.sources)
  )
    return undefined;
  if (
    !(meta.score === null || typeof meta.score === 'number') ||
    !RISKS.has(meta.risk) ||
    !SCORE_SOURCE_VALUES.has(meta.scoreSource)
  )
    return undefined;
  for (const slot of SOURCE_SLOTS) {
    const source = data.sources[slot];
    const sourceMeta = meta.sources[slot];
    if (
      !isObject(source) ||
      !Array.isArray(source.commentList) ||
      !isObject(sourceMeta) ||
      typeof sourceMeta.status !== 'string'
    )
      return undefined;
  }
  return parsed as unknown as ReportBody;
}

/** The `title` of a problem+json body, if readable. */
export function readProblemTitle(text: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) && typeof parsed.title === 'string' ? parsed.title : undefined;
  } catch {
    return undefined;
  }
}

/** The per-source failure reasons of a 502 body (`sources`: slot → reason), empty when unreadable. */
export function readFailureReasons(text: string): Partial<Record<SourceSlot, string>> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isObject(parsed) || !isObject(parsed.sources)) return {};
    const reasons: Partial<Record<SourceSlot, string>> = {};
    for (const slot of SOURCE_SLOTS) {
      const reason = parsed.sources[slot];
      if (typeof reason === 'string') reasons[slot] = reason;
    }
    return reasons;
  } catch {
    return {};
  }
}

/** Exit codes: 0 found, 2 invalid input, 3 every upstream failed, 1 anything else. */
export const EXIT_CODES = { found: 0, error: 1, invalidInput: 2, upstreamsFailed: 3 } as const;

export function exitCodeForStatus(status: number): number {
  if (status === 200) return EXIT_CODES.found;
  if (status === 400) return EXIT_CODES.invalidInput;
  if (status === 502) return EXIT_CODES.upstreamsFailed;
  return EXIT_CODES.error;
}
