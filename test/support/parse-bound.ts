// An expectation shared by the three page parsers' tests (vitest's expect, so not in harness/).
import { expect } from 'vitest';
import { WITHIN_PARSE_BOUND_MARKER } from '../../src/sources/common/outcomes.js';

/** The parser gave up at its work bound: error(parse), and the bound's marker says so. */
export function expectStoppedAtParseBound(parsed: { outcome: unknown; markers: readonly unknown[] }): void {
  expect(parsed.outcome).toEqual({ status: 'error', reason: 'parse' });
  expect(parsed.markers).toContainEqual({ marker: WITHIN_PARSE_BOUND_MARKER, found: false });
}
