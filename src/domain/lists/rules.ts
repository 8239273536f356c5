// What an operator may write as a rule of its lists, and what is stored: an exact number in any
// spelling the service's parser accepts, stored as its E.164; or a prefix ending in `*`, written
// as E.164 (`+33162*`, `+225*`, `0033162*`) or as national digits (`0162*`), stored as the
// parser reads a caller's number (`0692*` is `+262692*`; a prefix spanning several calling
// codes, `06*`, is refused). Unless forced, an E.164 prefix is at least a whole country calling
// code (`+225*` blocks a country; `+3*` is refused) and a national one at least one digit after
// the 0 (`01*`; `0*` is refused). Labels, notes and expiry dates are
// checked here too, so the CLI, the admin API, an import and a hand-edited file share one rule.
// Pure. The matching is in rule-index.ts; docs/lists.md describes both.
import { getCountries, getCountryCallingCode } from 'libphonenumber-js/max';
import type { PhoneNumberParser } from '../phone-number.js';
import { type ListName, type ListRule, MAX_RULE_DIGITS } from '../ports/operator-lists.js';
import { DISPLAY_UNSAFE, DISPLAY_UNSAFE_SYNTAX } from '../display-line.js';
import { isRuleSpelling, type RuleKey, ruleSpelling } from './rule-key.js';

export const LIST_NAMES: readonly ListName[] = ['allow', 'block'];
export const LABEL_MAX_LENGTH = 60;
export const NOTE_MAX_LENGTH = 500;

// Calling codes of every region libphonenumber knows, and ITU's non-geographic ones.
const CALLING_CODES = new Set<string>([
  ...getCountries().map((region) => getCountryCallingCode(region)),
  '800',
  '808',
  '870',
  '878',
  '881',
  '882',
  '883',
  '888',
  '979',
]);

/** The country calling code `digits` (E.164 without `+`) starts with, or undefined. */
export function callingCodeOf(digits: string): string | undefined {
  for (let length = 1; length <= 3; length += 1) {
    const code = digits.slice(0, length);
    if (code.length === length && CALLING_CODES.has(code)) return code;
  }
  return undefined;
}

/** A field of a rule that was refused, and why (for a 400's `field` and the CLI's message). */
export interface RuleProblem {
  field: 'rule' | 'list' | 'label' | 'labelPublic' | 'note' | 'expiresAt' | 'createdAt';
  reason: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: RuleProblem };

export interface RuleContext {
  parsePhoneNumber: PhoneNumberParser;
  /** DEFAULT_REGION, the parser's: national prefixes (`0162*`) are read as the parser reads national digits. */
  defaultRegion: string;
}

const refuse = (field: RuleProblem['field'], reason: string): { ok: false; problem: RuleProblem } => ({
  ok: false,
  problem: { field, reason },
});

type PrefixReading = { ok: true; digits: string; national: boolean } | { ok: false; reason: string };

/**
 * A prefix's digits (E.164 without `+`), from what the operator wrote before the `*`, read as the
 * parser reads a caller's number: national digits under the calling code of the territory the
 * numbering plan gives them (`0692` is +262 692, `0162` is +33 162), a trunk 0 after the calling
 * code dropped (`+33 (0)1 62`, `0033 0162`), French-plan digits under the calling code they fall
 * under (`+33 692` is +262 692). Undefined when it is no prefix spelling at all.
 */
function readPrefix(written: string, body: string, context: RuleContext): PrefixReading | undefined {
  const compact = body.replace(/[\s.\-/]/g, '');
  const bare = compact.replace(/[()]/g, '');
  if (!/^(?:\+\d+|00\d+|0\d*)$/.test(bare)) return undefined;
  const national = !bare.startsWith('+') && !bare.startsWith('00');
  let readings: readonly string[];
  if (context.parsePhoneNumber.readDialled !== undefined) {
    // The parser's reading alone: a prefix is no number to validate (and an import of a million
    // prefixes should not pay libphonenumber for each).
    const read = context.parsePhoneNumber.readDialled(compact);
    if (read === undefined) return undefined;
    readings = read;
  } else {
    const parsed = context.parsePhoneNumber(compact);
    if (parsed.ok) return { ok: true, digits: parsed.value.e164.slice(1), national };
    if (parsed.reason !== 'invalid_number') return undefined;
    readings = parsed.dialledAs ?? [];
  }
  const [only] = readings;
  if (only !== undefined && readings.length === 1) return { ok: true, digits: only, national };
  if (readings.length > 1) {
    return {
      ok: false,
      reason: `${JSON.stringify(written)} names numbers under several calling codes (${readings.map((digits) => `+${digits}…`).join(', ')}): write one prefix per calling code, in E.164 (+${readings[0] ?? ''}*)`,
    };
  }
  return {
    ok: false,
    reason: `${JSON.stringify(written)} can match no number: no number of the numbering plan is dialled so (a national number never starts with 00)`,
  };
}

/**
 * A rule as written, read into its key (rule-key.ts): a prefix's digits as the parser reads its
 * callers, a number's E.164 digits. `force` lets a prefix be shorter than a calling code and one
 * digit (a whole zone, `+3*`); it never keeps a prefix that names several calling codes or none.
 */
export function readRuleKey(
  written: string,
  context: RuleContext,
  options: { force?: boolean } = {},
): Checked<RuleKey> {
  const text = written.trim();
  if (text === '') return refuse('rule', 'a rule is a number or a prefix ending in * (+33162*, 0162*)');
  if (text.length > 64) return refuse('rule', 'a rule is at most 64 characters');
  if (text.endsWith('*')) {
    const body = text.slice(0, -1);
    const reading = body.includes('*') ? undefined : readPrefix(text, body, context);
    if (reading === undefined) {
      return refuse(
        'rule',
        `${JSON.stringify(text)} is not a prefix: write +<digits>* (+33162*) or national digits 0<digits>* (0162*)`,
      );
    }
    if (!reading.ok) return refuse('rule', reading.reason);
    const { digits, national } = reading;
    if (digits.length > MAX_RULE_DIGITS) return refuse('rule', `a prefix has at most ${MAX_RULE_DIGITS} digits`);
    if (options.force !== true) {
      const code = callingCodeOf(digits);
      const partOfCode = digits.length < 3 && [...CALLING_CODES].some((known) => known.startsWith(digits));
      if (code === undefined && !partOfCode)
        return refuse(
          'rule',
          `${JSON.stringify(text)} does not start with a country calling code (use --force to keep it)`,
        );
      // A whole country is written with its calling code alone (`+225*`, the recipe that blocks
      // a country); a national prefix names at least one digit after the trunk 0 (`0*` would be
      // the whole home country, more likely a slip than a wish).
      const writtenAfterTrunk = body.replace(/[^\d]/g, '').length - 1;
      if (code === undefined || digits.length < code.length || (national && writtenAfterTrunk < 1)) {
        return refuse(
          'rule',
          `${JSON.stringify(text)} is too short: a prefix is at least a country calling code (+${code ?? digits}…*), and a national one at least one digit after the 0; use --force for a shorter one`,
        );
      }
    } else if (digits.length === 0) {
      return refuse('rule', 'a prefix has at least one digit');
    }
    return { ok: true, value: { digits, wildcard: true } };
  }
  const parsed = context.parsePhoneNumber(text);
  if (!parsed.ok)
    return refuse(
      'rule',
      `${JSON.stringify(text)} is neither a number the service accepts (${parsed.reason}) nor a prefix ending in *`,
    );
  return { ok: true, value: { digits: parsed.value.e164.slice(1), wildcard: false } };
}

/** A rule as written, as its stored spelling: `+33162*` for a prefix, the E.164 for a number. */
export function normaliseRule(
  written: string,
  context: RuleContext,
  options: { force?: boolean } = {},
): Checked<string> {
  const key = readRuleKey(written, context, options);
  return key.ok ? { ok: true, value: ruleSpelling(key.value) } : key;
}

/**
 * The spellings a removal tries, in order: the rule as normalised now, then the rule exactly as
 * written when it is a stored spelling (`+33692*`, stored before prefixes were read as the
 * parser reads callers, is removed by its own spelling though it now reads as `+262692*`).
 */
export function spellingsToRemove(written: string, context: RuleContext): Checked<string[]> {
  const normal = normaliseRule(written, context, { force: true });
  const asWritten = written.trim();
  const spellings = normal.ok ? [normal.value] : [];
  if (isRuleSpelling(asWritten) && !spellings.includes(asWritten)) spellings.push(asWritten);
  if (spellings.length === 0 && !normal.ok) return normal;
  return { ok: true, value: spellings };
}

// A label is shown as the caller's name: what the display line removes (display-line.ts, the one
// list) is refused rather than cleaned, and so are line and paragraph separators.
const LINE_SEPARATOR = /[\p{Zl}\p{Zp}]/u;
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

export function checkLabel(label: string | undefined): Checked<string | undefined> {
  if (label === undefined || label === '') return { ok: true, value: undefined };
  if (Array.from(label).length > LABEL_MAX_LENGTH)
    return refuse('label', `a label is at most ${LABEL_MAX_LENGTH} characters`);
  const unsafe = DISPLAY_UNSAFE.exec(label) ?? LINE_SEPARATOR.exec(label);
  if (unsafe !== null)
    return refuse(
      'label',
      `a label may not hold control or invisible characters nor any of ${DISPLAY_UNSAFE_SYNTAX} (found ${JSON.stringify(unsafe[0])})`,
    );
  if (label.trim() !== label) return refuse('label', 'a label may not start or end with white space');
  return { ok: true, value: label.normalize('NFC') };
}

/** Whether a label is public: a boolean, or in a CSV field `true`, `false` or nothing (false). */
export function checkLabelPublic(value: unknown): Checked<boolean> {
  if (value === undefined || value === '' || value === false || value === 'false') return { ok: true, value: false };
  if (value === true || value === 'true') return { ok: true, value: true };
  return refuse('labelPublic', `labelPublic is true or false, not ${JSON.stringify(value)}`);
}

export function checkNote(note: string | undefined): Checked<string | undefined> {
  if (note === undefined || note === '') return { ok: true, value: undefined };
  if (Array.from(note).length > NOTE_MAX_LENGTH)
    return refuse('note', `a note is at most ${NOTE_MAX_LENGTH} characters`);
  if (CONTROL.test(note)) return refuse('note', 'a note may not hold control characters (line breaks included)');
  return { ok: true, value: note };
}

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2})))?$/;

/**
 * An ISO 8601 instant (a date alone is midnight UTC), as epoch ms. Every field must name a real
 * calendar day and time: `Date.parse` rolls `2031-02-30` over to March 2nd, which would store a
 * date the operator never wrote.
 */
export function parseInstant(text: string): number | undefined {
  const fields = ISO_8601.exec(text);
  if (fields === null) return undefined;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = fields
    .slice(1)
    .map((field) => (field === undefined ? undefined : Number(field)));
  if (year === undefined || month === undefined || day === undefined) return undefined;
  const midnight = new Date(Date.UTC(year, month - 1, day));
  if (midnight.getUTCFullYear() !== year || midnight.getUTCMonth() !== month - 1 || midnight.getUTCDate() !== day)
    return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `expiresAt` written by the operator: an ISO 8601 instant in the future (when `nowMs` is given). */
export function checkExpiry(expiresAt: string | undefined, nowMs: number | undefined): Checked<string | undefined> {
  if (expiresAt === undefined || expiresAt === '') return { ok: true, value: undefined };
  const ms = parseInstant(expiresAt);
  if (ms === undefined)
    return refuse(
      'expiresAt',
      `${JSON.stringify(expiresAt)} is not an ISO 8601 date or time of the calendar (2026-12-31 or 2026-12-31T23:59:00Z; no February 30th, no hour 24)`,
    );
  if (nowMs !== undefined && ms <= nowMs) return refuse('expiresAt', `${expiresAt} is in the past`);
  return { ok: true, value: new Date(ms).toISOString() };
}

export function isListName(value: unknown): value is ListName {
  return value === 'allow' || value === 'block';
}

/** What an operator gives to add a rule (CLI flags, a PUT body, a CSV line). */
export interface RuleInput {
  rule: string;
  list: unknown;
  label?: string | undefined;
  /** A boolean (the API, the CLI), or `true`/`false`/empty (a CSV field). */
  labelPublic?: unknown;
  note?: string | undefined;
  expiresAt?: string | undefined;
  createdAt?: string | undefined;
}

/**
 * A rule the operator gave, checked and normalised. `nowMs` refuses an expiry in the past (a
 * new rule); without it (reading a file the service wrote) an expired rule is kept, and simply
 * does not apply.
 */
export function checkRule(
  input: RuleInput,
  context: RuleContext,
  options: { nowMs?: number; force?: boolean } = {},
): Checked<ListRule> {
  const rule = normaliseRule(input.rule, context, options.force === undefined ? {} : { force: options.force });
  if (!rule.ok) return rule;
  return checkRuleFields({ ...input, rule: rule.value }, options.nowMs);
}

/** Everything but the rule's spelling, which is taken as it is (already normal: `+digits[*]`). */
export function checkRuleFields(input: RuleInput, nowMs?: number): Checked<ListRule> {
  if (!isListName(input.list)) return refuse('list', `list is allow or block, not ${JSON.stringify(input.list ?? '')}`);
  const label = checkLabel(input.label);
  if (!label.ok) return label;
  const labelPublic = checkLabelPublic(input.labelPublic);
  if (!labelPublic.ok) return labelPublic;
  const note = checkNote(input.note);
  if (!note.ok) return note;
  const expiresAt = checkExpiry(input.expiresAt, nowMs);
  if (!expiresAt.ok) return expiresAt;
  let createdAt = new Date(nowMs ?? Date.now()).toISOString();
  if (input.createdAt !== undefined && input.createdAt !== '') {
    const ms = parseInstant(input.createdAt);
    if (ms === undefined)
      return refuse('createdAt', `${JSON.stringify(input.createdAt)} is not an ISO 8601 date or time`);
    createdAt = new Date(ms).toISOString();
  }
  return {
    ok: true,
    value: {
      rule: input.rule,
      list: input.list,
      ...(label.value === undefined ? {} : { label: label.value }),
      ...(label.value !== undefined && labelPublic.value ? { labelPublic: true } : {}),
      ...(note.value === undefined ? {} : { note: note.value }),
      createdAt,
      ...(expiresAt.value === undefined ? {} : { expiresAt: expiresAt.value }),
    },
  };
}
