// A clock for tests of answers about an NPV or call-centre number that are not about the legal
// calling hours (docs/legal-hours.md): such an answer depends on the time of the call, so a test
// run on a Sunday or at night would see `outside_legal_hours` and VERDICT_OUTSIDE_HOURS.

/** Monday 30 November 2026, 15:00 in Paris: inside the legal calling hours. */
export const INSIDE_LEGAL_HOURS_MS = Date.parse('2026-11-30T14:00:00Z');

/** A clock at the real pace from INSIDE_LEGAL_HOURS_MS: inside the hours for the length of any test (until 20:00). */
export function insideLegalHoursClock(): () => number {
  const offset = INSIDE_LEGAL_HOURS_MS - Date.now();
  return () => Date.now() + offset;
}
