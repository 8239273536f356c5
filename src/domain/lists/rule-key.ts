// A rule's stored spelling as a value: `+digits` (one number) or `+digits*` (every number
// starting with them), digits being E.164's without the `+` (at most MAX_RULE_DIGITS). The one
// parser of that spelling: the index, the stores, the CSV reader, the feed and the CLI read a
// stored rule through `parseRuleKey`, and write one through `ruleSpelling`. What an operator
// types (`0692*`, `+33 (0)1 62*`) becomes a RuleKey in rules.ts (`normaliseRule`). Pure.
import { MAX_RULE_DIGITS } from '../ports/operator-lists.js';

export interface RuleKey {
  /** E.164 digits without `+`: 1 to MAX_RULE_DIGITS of them. */
  readonly digits: string;
  /** A prefix (`+33162*`): every number starting with `digits`. */
  readonly wildcard: boolean;
}

const SPELLING = new RegExp(`^\\+(\\d{1,${MAX_RULE_DIGITS}})(\\*?)$`);

/** The key a stored spelling names, or undefined when it is no `+digits[*]`. */
export function parseRuleKey(spelling: string): RuleKey | undefined {
  const parts = SPELLING.exec(spelling);
  const digits = parts?.[1];
  return digits === undefined ? undefined : { digits, wildcard: parts?.[2] === '*' };
}

/** Whether `spelling` is a stored rule's own spelling (`+digits` or `+digits*`). */
export function isRuleSpelling(spelling: string): boolean {
  return SPELLING.test(spelling);
}

/** The stored spelling of a key: `+33162*`, `+33612345678`. */
export function ruleSpelling(key: RuleKey): string {
  return `+${key.digits}${key.wildcard ? '*' : ''}`;
}

/**
 * Every spelling that covers `key`, in the order the lists decide between them: for a number,
 * the number itself and the prefix of all its digits (same length: the index puts allow first),
 * then each shorter prefix, longest first; for a range (`wildcard`), the prefixes of its digits,
 * longest first (an exact rule decides for its one number, not for a range).
 */
export function coveringSpellings(key: RuleKey): string[] {
  const plus = `+${key.digits}`;
  const spellings = key.wildcard ? [] : [plus];
  for (let length = key.digits.length; length >= 1; length -= 1) spellings.push(`${plus.slice(0, length + 1)}*`);
  return spellings;
}
