// What the live canary checks on a real upstream body: each marker a parser relies on, and
// whether the body had it. Each parser reports its markers from the same pass that reads the
// body, so the list of markers and the parser that needs them cannot drift apart; each
// upstream folder exports `markersOf<Upstream>(body)`, which its description (`markers`) hands
// to the canary.
import type { SourceOutcome } from '../domain/ports/source.js';

export interface MarkerReport {
  /** A short name an operator can read, e.g. `img.scoreimage` or `json: tellows.score`. */
  marker: string;
  found: boolean;
  /** False for markers of optional blocks: their absence is reported but does not fail the canary. */
  required?: boolean;
}

/** What every parser returns: the outcome of the body, and which markers the same pass found. */
export interface ParseResult<T> {
  outcome: SourceOutcome<T>;
  markers: MarkerReport[];
}

export type DescribeMarkers = (body: string) => MarkerReport[];

/** True when every required marker (those not marked `required: false`) was found. */
export function haveRequiredMarkers(reports: readonly MarkerReport[]): boolean {
  return reports.every((report) => report.found || report.required === false);
}

/** The names of the required markers a body lacked, in the parser's order. */
export function missingRequiredMarkers(reports: readonly MarkerReport[]): string[] {
  return reports.filter((report) => !report.found && report.required !== false).map((report) => report.marker);
}

/**
 * A parser's outcome as the adapter returns it: a page it could not read (`error(parse)`) names
 * the required markers the same pass did not find, for the log (`layout`, docs/reliability.md).
 */
export function outcomeNamingMissingMarkers<T>(parsed: ParseResult<T>): SourceOutcome<T> {
  const { outcome } = parsed;
  if (outcome.status !== 'error' || outcome.reason !== 'parse') return outcome;
  const missing = missingRequiredMarkers(parsed.markers);
  return missing.length === 0 ? outcome : { ...outcome, cause: 'layout', missing };
}
