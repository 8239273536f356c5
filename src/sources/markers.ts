// What the live canary checks on a real upstream body: each marker a parser relies on, and
// whether the body had it. Every adapter exports a `describeMarkers(body)` built on these types,
// next to its parser, so the list of markers and the parser that needs them change together.
import type { Config } from '../config/config.js';
import type { UpstreamFetcher } from '../infra/http/types.js';
import type { Source } from './source.js';

export interface MarkerReport {
  /** A short name an operator can read, e.g. `img.scoreimage` or `json: tellows.score`. */
  marker: string;
  found: boolean;
  /** False for markers of optional blocks: their absence is reported but does not fail the canary. */
  required?: boolean;
}

export type DescribeMarkers = (body: string) => MarkerReport[];

/** True when every required marker (those not marked `required: false`) was found. */
export function haveRequiredMarkers(reports: readonly MarkerReport[]): boolean {
  return reports.every((report) => report.found || report.required === false);
}

/**
 * How the live canary drives one upstream: it builds the adapter's real source over fetchers
 * it provides (they record every body), looks numbers up, then checks each body's markers.
 * Each adapter exports one of these next to its source.
 */
export interface CanaryTarget {
  /** Upstream name as printed (`tellows`, `numeroinconnu`, `telguarder`). */
  name: string;
  createSource(config: Config, makeFetcher: (upstream: string, requestsPerMinute: number) => UpstreamFetcher): Source;
  describeMarkers: DescribeMarkers;
}
