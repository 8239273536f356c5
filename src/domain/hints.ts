// `meta.hints`: short machine-readable facts about a number that bear on the verdict without
// being a score. Derived from the number alone (no upstream), so they hold even when every
// source failed. The score rule ignores them on purpose: a hint informs, it does not rate.
import { RANGE_LABELS } from './numbering/parse-phone-number.js';
import type { ParsedPhoneNumber } from './phone-number.js';
import type { PhoneInfo } from './report.js';

export const HINTS = ['npv', 'technical_platform'] as const;
export type Hint = (typeof HINTS)[number];

export function computeHints(number: ParsedPhoneNumber): Hint[] {
  return hintsOfPhoneInfo(number.phoneInfo);
}

/** The same hints from a `phoneInfo` alone (a client holding a 502 body or an offline parse). */
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
