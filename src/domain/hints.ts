// `meta.hints`: short machine-readable facts about a number that bear on the verdict without
// being a score. Derived from the number alone (no upstream), so they hold even when every
// source failed. The score rule ignores them on purpose: a hint informs, it does not rate.
import { RANGE_LABELS } from './numbering/parse-phone-number.js';
import { outsideLegalHours } from './legal-hours.js';
import type { ParsedPhoneNumber } from './phone-number.js';
import type { PhoneInfo } from './report.js';

export const HINTS = ['npv', 'technical_platform', 'call_centre_operator', 'outside_legal_hours'] as const;
export type Hint = (typeof HINTS)[number];

/** When a call is made and where the legal hours are read (LEGAL_HOURS_TZ): what `outside_legal_hours` depends on. */
export interface LegalHoursClock {
  /** The instant of the call (epoch ms): the request's time, or its `?at=`. */
  atMs: number;
  timeZone: string;
}

/**
 * Whether the legal calling hours bear on this number's answers: an NPV range or a call-centre
 * operator's block. Such an answer holds only until the next legal-hours boundary
 * (docs/legal-hours.md "Caching").
 */
export function legalHoursApply(number: ParsedPhoneNumber): boolean {
  return number.phoneInfo.isNPV || number.callCentreOperator === true;
}

/**
 * The number's hints. With a clock, an NPV or call-centre caller calling outside the legal
 * hours (legal-hours.ts) also gets `outside_legal_hours`; without one (offline facts), the hints
 * the number alone gives.
 */
export function computeHints(number: ParsedPhoneNumber, clock?: LegalHoursClock): Hint[] {
  const hints = hintsOfPhoneInfo(number.phoneInfo);
  // A fixed or non-geographic block of an operator whose numbers serve call centres
  // (data/fr-call-centre-operators.csv, docs/numbering.md). The block's operator is not in
  // phoneInfo, so the parser decides it from the block it already looked up.
  if (number.callCentreOperator === true) hints.push('call_centre_operator');
  if (clock !== undefined && legalHoursApply(number) && outsideLegalHours(clock.atMs, clock.timeZone))
    hints.push('outside_legal_hours');
  return hints;
}

/**
 * The hints a `phoneInfo` alone gives (a client holding a 502 body): all but
 * `call_centre_operator`, which needs the block's operator code.
 */
export function hintsOfPhoneInfo(phoneInfo: PhoneInfo): Hint[] {
  const hints: Hint[] = [];
  // NPV ranges (ARCEP decision 2022-1583) are reserved for automated calls and messages.
  if (phoneInfo.isNPV) hints.push('npv');
  // ARCEP's technical platforms (0937, 0938, 09390–09394): operators' equipment, rarely a
  // person. Only the French-plan parser gives a range this label, so reading it keeps one
  // definition of the ranges.
  if (phoneInfo.rangeLabel === RANGE_LABELS.technicalPlatform) hints.push('technical_platform');
  return hints;
}
