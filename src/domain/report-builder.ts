// Turns the engine's per-slot results into what the HTTP layer renders: the spec's report (or
// score result), the `meta` that says where each slot came from, and whether the answer must be
// the 502 instead. Pure.
//
// A slot that is not `ok` gets the empty fields of emptySourceData() – null, 0, "", [] – never
// zeros that pass for a clean number; meta.sources says why. Stale data is `ok` data.
import type { CacheState, LookupResult, SlotResult } from './lookup/types.js';
import type { ParsedPhoneNumber } from './phone-number.js';
import { SOURCE_SLOTS, emptySourceData, type Report, type ScoreResult, type SourceDataBySlot, type SourceSlot } from './report.js';
import { computeScore, scoreToRisk, type ScoreSource } from './score.js';
import type { FailureReason, SourceStatus } from './ports/source.js';
import { computeHints, type Hint } from './hints.js';

export interface SourceMeta {
  status: SourceStatus;
  /** Why the slot is not ok, or why stale data was served (the last refresh failure). */
  reason?: FailureReason;
  /** ISO 8601 time the data (or failure) was obtained from the upstream. */
  fetchedAt: string;
  cache: CacheState;
}

export type SourcesMeta = Record<SourceSlot, SourceMeta>;

export interface ReportMeta {
  sources: SourcesMeta;
  /** Facts from the number alone that bear on the verdict (see hints.ts); [] when none. */
  hints: Hint[];
}

export interface ScoreMeta extends ReportMeta {
  scoreSource: ScoreSource | null;
}

export interface BuiltReport {
  report: Report;
  meta: ReportMeta;
  /** True exactly when no slot is ok (fresh or stale) or not_found: answer 502. */
  allSourcesFailed: boolean;
}

export interface BuiltScore {
  score: ScoreResult;
  meta: ScoreMeta;
  allSourcesFailed: boolean;
}

function toSourceMeta(slot: SlotResult): SourceMeta {
  const meta: SourceMeta = { status: slot.status, fetchedAt: slot.fetchedAt, cache: slot.cache };
  if (slot.reason !== undefined) meta.reason = slot.reason;
  return meta;
}

export function buildSourcesMeta(result: LookupResult): SourcesMeta {
  return {
    primary: toSourceMeta(result.primary),
    community: toSourceMeta(result.community),
    signals: toSourceMeta(result.signals),
  };
}

/**
 * The report's sources: each slot's data when ok, else its empty fields. The data objects are
 * shared with the in-memory cache: render them, never mutate them.
 */
export function buildSourceData(result: LookupResult): SourceDataBySlot {
  const empty = emptySourceData();
  return {
    primary: result.primary.status === 'ok' && result.primary.data !== null ? result.primary.data : empty.primary,
    community: result.community.status === 'ok' && result.community.data !== null ? result.community.data : empty.community,
    signals: result.signals.status === 'ok' && result.signals.data !== null ? result.signals.data : empty.signals,
  };
}

/** No slot answered anything usable (ok, even stale, or not_found): the 502 case. */
export function isAllSourcesFailed(result: LookupResult): boolean {
  return SOURCE_SLOTS.every((slot) => result[slot].status !== 'ok' && result[slot].status !== 'not_found');
}

/** Each slot's reason for the 502 body, e.g. `{primary: 'timeout', community: 'http_429', signals: 'connection'}`. */
export function failureReasons(result: LookupResult): Record<SourceSlot, string> {
  const reasonOf = (slot: SlotResult): string => slot.reason ?? slot.status;
  return { primary: reasonOf(result.primary), community: reasonOf(result.community), signals: reasonOf(result.signals) };
}

export function buildReport(number: ParsedPhoneNumber, result: LookupResult): BuiltReport {
  return {
    report: { number: number.number, phoneInfo: number.phoneInfo, sources: buildSourceData(result) },
    meta: { sources: buildSourcesMeta(result), hints: computeHints(number) },
    allSourcesFailed: isAllSourcesFailed(result),
  };
}

export function buildScoreResult(number: ParsedPhoneNumber, result: LookupResult): BuiltScore {
  const { score, scoreSource } = computeScore(buildSourceData(result));
  return {
    score: { number: number.number, score, risk: scoreToRisk(score) },
    meta: { sources: buildSourcesMeta(result), hints: computeHints(number), scoreSource },
    allSourcesFailed: isAllSourcesFailed(result),
  };
}
