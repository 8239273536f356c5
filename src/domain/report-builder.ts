// Turns the engine's per-slot results into what the HTTP layer renders: the spec's report (or
// score result), the `meta` that says where each slot came from, and whether the answer must be
// the 502 instead. Pure.
//
// A slot that is not `ok` gets the empty fields of emptySourceData() – null, 0, "", [] – never
// zeros that pass for a clean number; meta.sources says why. Stale data is `ok` data. A
// `skipped` slot (the source does not cover the number) and a `pending` one (the caller's
// deadline passed first) are neither failures nor records: they have empty fields, never
// decide the 502 and never enter the score.
import type { CacheState, LookupResult, SkipReason, SlotResult } from './lookup/types.js';
import type { ParsedPhoneNumber } from './phone-number.js';
import {
  SOURCE_SLOTS,
  emptySourceData,
  mapSlots,
  type Report,
  type Risk,
  type ScoreResult,
  type SourceDataBySlot,
  type SourceSlot,
} from './report.js';
import { computeScore, scoreToRisk, type ScoreSource } from './score.js';
import { causeOf, type FailureCause, type FailureReason, type SourceStatus } from './ports/source.js';
import { computeHints, type Hint, type LegalHoursClock } from './hints.js';
import type { ListMatch } from './ports/operator-lists.js';
import type { ReportEvidence } from './ports/caller-reports.js';

/** A slot the upstream or the cache settled. */
export interface AnsweredSourceMeta {
  status: SourceStatus;
  /** Why the slot is not ok, or why stale data was served (the last refresh failure). */
  reason?: FailureReason;
  /** With a reason: what the failure was, finer than the reason (`refused`, `dns`, `http_503`, `layout`…; causeOf). */
  cause?: FailureCause;
  /** ISO 8601 time the data (or failure) was obtained from the upstream. */
  fetchedAt: string;
  cache: CacheState;
}

/** Exactly `{"status": "skipped", "reason": "not_covered"}`: no site was asked, no time, no cache. */
export interface SkippedSourceMeta {
  status: 'skipped';
  reason: SkipReason;
}

/** Exactly `{"status": "pending"}`: still being fetched when the answer left. */
export interface PendingSourceMeta {
  status: 'pending';
}

export type SourceMeta = AnsweredSourceMeta | SkippedSourceMeta | PendingSourceMeta;

export type SourcesMeta = Record<SourceSlot, SourceMeta>;

interface CommonMeta {
  sources: SourcesMeta;
  /** Facts from the number alone that bear on the verdict (see hints.ts); [] when none. */
  hints: Hint[];
  /** The operator's rule that decides this number's text answers (docs/lists.md), or null. */
  list: ListMatch | null;
  /** What the deployment's reporters said of the number (docs/reports.md "In the answers"), or null when nobody did. */
  reports: ReportEvidence | null;
}

/**
 * The full report's meta: also the score and risk the score route gives and where the score came
 * from, so that a client of the full report (the lookup page, the CLI) shows them and never
 * computes them. `data` stays the report's members alone (docs/api.md#decisions-the-spec-leaves-open).
 */
export interface ReportMeta extends CommonMeta {
  score: number | null;
  risk: Risk;
  scoreSource: ScoreSource | null;
}

export interface ScoreMeta extends CommonMeta {
  scoreSource: ScoreSource | null;
}

export interface BuiltReport {
  report: Report;
  meta: ReportMeta;
  /** True exactly when at least one slot failed and every other one failed or was skipped: answer 502. */
  allSourcesFailed: boolean;
}

export interface BuiltScore {
  score: ScoreResult;
  meta: ScoreMeta;
  allSourcesFailed: boolean;
}

function toSourceMeta(slot: SlotResult): SourceMeta {
  if (slot.status === 'skipped') return { status: 'skipped', reason: slot.reason };
  if (slot.status === 'pending') return { status: 'pending' };
  const meta: AnsweredSourceMeta = { status: slot.status, fetchedAt: slot.fetchedAt, cache: slot.cache };
  if (slot.reason !== undefined) {
    meta.reason = slot.reason;
    meta.cause = slot.cause ?? causeOf({ reason: slot.reason });
  }
  return meta;
}

export function buildSourcesMeta(result: LookupResult): SourcesMeta {
  return mapSlots<SourcesMeta>((slot) => toSourceMeta(result[slot]));
}

/**
 * The report's sources: each slot's data when ok, else its empty fields. The data objects are
 * shared with the in-memory cache: render them, never mutate them.
 */
export function buildSourceData(result: LookupResult): SourceDataBySlot {
  const empty = emptySourceData();
  return mapSlots<SourceDataBySlot>((slot) => {
    const data = result[slot].status === 'ok' ? result[slot].data : null;
    return data ?? empty[slot];
  });
}

const isFailed = (slot: SlotResult): boolean => slot.status === 'error' || slot.status === 'blocked';

/**
 * The 502 case: every source that was asked failed. A slot `ok` (even stale), `not_found` or
 * `pending` says the answer is not a failure; a `skipped` slot says nothing either way, so an
 * answer whose every slot is skipped is a 200, not a 502.
 */
export function isAllSourcesFailed(result: LookupResult): boolean {
  const slots = SOURCE_SLOTS.map((slot) => result[slot]);
  return slots.some(isFailed) && slots.every((slot) => isFailed(slot) || slot.status === 'skipped');
}

/**
 * Whether the sources could say anything about the number, for the words shown when there is no
 * score: `answered` (at least one gave a record, or said it has none), `not_checked` (every
 * source asked failed or is still on its way), `not_covered` (no source covers the number, so
 * none was asked: today a number outside the French plan without a tellows API key).
 */
export type SourceCheck = 'answered' | 'not_checked' | 'not_covered';

export function sourceCheckOf(result: LookupResult): SourceCheck {
  const slots = SOURCE_SLOTS.map((slot) => result[slot]);
  if (slots.some((slot) => slot.status === 'ok' || slot.status === 'not_found')) return 'answered';
  return slots.every((slot) => slot.status === 'skipped') ? 'not_covered' : 'not_checked';
}

/** Each slot's reason for the 502 body, e.g. `{primary: 'timeout', community: 'http_429', signals: 'not_covered'}`. */
export function failureReasons(result: LookupResult): Record<SourceSlot, string> {
  const reasonOf = (slot: SlotResult): string =>
    'reason' in slot && slot.reason !== undefined ? slot.reason : slot.status;
  return mapSlots<Record<SourceSlot, string>>((slot) => reasonOf(result[slot]));
}

export function buildReport(
  number: ParsedPhoneNumber,
  result: LookupResult,
  list: ListMatch | null = null,
  reports: ReportEvidence | null = null,
  clock?: LegalHoursClock,
): BuiltReport {
  const sources = buildSourceData(result);
  const { score, scoreSource } = computeScore(sources);
  return {
    report: { number: number.number, phoneInfo: number.phoneInfo, sources },
    meta: {
      sources: buildSourcesMeta(result),
      hints: computeHints(number, clock),
      score,
      risk: scoreToRisk(score),
      scoreSource,
      list,
      reports,
    },
    allSourcesFailed: isAllSourcesFailed(result),
  };
}

export function buildScoreResult(
  number: ParsedPhoneNumber,
  result: LookupResult,
  list: ListMatch | null = null,
  reports: ReportEvidence | null = null,
  clock?: LegalHoursClock,
): BuiltScore {
  const { score, scoreSource } = computeScore(buildSourceData(result));
  return {
    score: { number: number.number, score, risk: scoreToRisk(score) },
    meta: { sources: buildSourcesMeta(result), hints: computeHints(number, clock), list, reports, scoreSource },
    allSourcesFailed: isAllSourcesFailed(result),
  };
}
