// The normalised number every other part works with. Produced only by the numbering module
// (src/domain/numbering), so a value of this type has passed every spelling and validity rule.
import type { PhoneInfo } from './report.js';

export interface ParsedPhoneNumber {
  /** The `number` of responses: national digits with leading 0 for the French plan, else E.164. */
  number: string;
  /** E.164 with leading `+`. */
  e164: string;
  /** ISO 3166 region libphonenumber validated it for (FR, RE, YT, GP, MF, BL, GF, MQ, PM, BE, US…). */
  regionCode: string;
  /** True for numbers of the French numbering plan, mainland and overseas (dialled as 0XXXXXXXXX). */
  isFrenchPlan: boolean;
  /** The 10-digit national form (0XXXXXXXXX) for French-plan numbers; null otherwise. */
  frenchNationalDigits: string | null;
  phoneInfo: PhoneInfo;
  /**
   * True when the number is in a fixed or non-geographic block (01–05, 08, 09) that ARCEP
   * allocated to a call-centre operator (data/fr-call-centre-operators.csv). Absent or false
   * otherwise, and always for mobile blocks and other countries' numbers.
   */
  callCentreOperator?: boolean;
}

export type ParsePhoneNumberResult =
  | { ok: true; value: ParsedPhoneNumber }
  | {
      ok: false;
      reason: string;
      /**
       * With `invalid_number`: the digits as dialled, in international form (E.164 digits without
       * `+`), as the numbering plan reads them: one reading, or several when national digits
       * name numbers under more than one calling code (`06…`: +33 6…, +262 6…). Absent when the
       * digits read as nothing. The operator's block prefixes match a malformed caller by them,
       * and a list rule's prefix is read by them (docs/lists.md).
       */
      dialledAs?: readonly string[];
    };

/** Parses a raw `:number` path segment (already percent-decoded). Pure; never throws. */
export interface PhoneNumberParser {
  (raw: string): ParsePhoneNumberResult;
  /**
   * The readings `dialledAs` gives, for digits written with `+`, `00` or a trunk `0`, without
   * deciding whether they are a valid number (cheaper: a list rule's prefix is read by it).
   * Undefined for what is no such spelling.
   */
  readDialled?: (raw: string) => readonly string[] | undefined;
}
