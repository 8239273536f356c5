// Turns a raw `:number` path segment into a ParsedPhoneNumber: the accepted spellings (as people
// write numbers and as phone systems send them: tel: and sip: URIs, E.164 without +), the
// territory of French-plan numbers from ARCEP's blocks (docs/numbering.md), libphonenumber's validation,
// formats and line type, and every phoneInfo field. Pure and total: failures are values.
import parsePhoneNumberFromString, {
  getCountries,
  getCountryCallingCode,
  isSupportedCountry,
  type CountryCode,
  type PhoneNumber,
} from 'libphonenumber-js/max';
import type { ParsedPhoneNumber, ParsePhoneNumberResult, PhoneNumberParser } from '../phone-number.js';
import type { FrenchTerritory, NumberingPlan } from './numbering-plan.js';

/** Why an input was refused; never contains the number itself (it is personal data). */
export const PHONE_NUMBER_REJECTIONS = [
  'empty',
  'too_long',
  'invalid_character',
  'misplaced_separator',
  'no_digits',
  'invalid_uri',
  'wrong_calling_code',
  'invalid_number',
  'withheld',
] as const;
export type PhoneNumberRejection = (typeof PHONE_NUMBER_REJECTIONS)[number];

/** The longest number, however spelled; inside a URI it is the number part that counts. */
export const MAX_INPUT_LENGTH = 32;
/** The longest `:number` in all, a tel: or sip: URI with its host and parameters included. */
export const MAX_URI_LENGTH = 256;

/** What phone systems put where a withheld caller's number would be (compared in lower case). */
export const WITHHELD_WORDS: ReadonlySet<string> = new Set([
  'anonymous',
  'restricted',
  'unknown',
  'unavailable',
  'private',
  'withheld',
]);

/**
 * Digit strings of this length, not starting with 0, that are not a valid national number are
 * read as E.164 without its `+` (`33612345678`): every French-plan national number has 10
 * digits and starts with 0, and 10 to 15 covers the full E.164 form of France, its overseas
 * territories and most countries, down to the 10 digits SpamBlocker's `{cc}{domestic}` gives a
 * Berlin number (`4930123456`). Shorter strings are never read so, so that a national number
 * missing its 0 (`612345678`) is refused rather than taken for a foreign one.
 */
export const E164_WITHOUT_PLUS_LENGTHS = { min: 10, max: 15 } as const;

const CALLING_CODE_BY_TERRITORY: Readonly<Record<FrenchTerritory, string>> = {
  FR: '33',
  RE: '262',
  YT: '262',
  GP: '590',
  GF: '594',
  MQ: '596',
  PM: '508',
};

export const FRENCH_PLAN_CALLING_CODES: ReadonlySet<string> = new Set(['33', '262', '590', '594', '596', '508']);

/** Region codes of the French plan, with the `region` name each gets. */
const FRENCH_REGION_NAMES: Readonly<Record<string, string>> = {
  FR: 'France',
  RE: 'La Réunion',
  YT: 'Mayotte',
  GP: 'Guadeloupe',
  MF: 'Saint-Martin',
  BL: 'Saint-Barthélemy',
  GF: 'Guyane',
  MQ: 'Martinique',
  PM: 'Saint-Pierre-et-Miquelon',
};

const MAINLAND_ZONES: Readonly<Record<string, string>> = {
  '1': 'Île-de-France',
  '2': 'Nord-Ouest',
  '3': 'Nord-Est',
  '4': 'Sud-Est',
  '5': 'Sud-Ouest',
};

// ARCEP decision n° 2022-1583: ranges automated callers must use, allocated or not yet.
export const NPV_MAINLAND_PREFIXES: ReadonlySet<string> = new Set([
  '0162',
  '0163',
  '0270',
  '0271',
  '0377',
  '0378',
  '0424',
  '0425',
  '0568',
  '0569',
  '0948',
  '0949',
]);
export const NPV_OVERSEAS_PREFIXES: ReadonlySet<string> = new Set(['09475', '09476', '09477', '09478', '09479']);

/** The NPV ranges as E.164 prefixes (`0162` → `+33162`), for the blocklist feed's wildcards. */
export function npvPrefixesE164(): string[] {
  return [...NPV_MAINLAND_PREFIXES, ...NPV_OVERSEAS_PREFIXES].map((national) => `+33${national.slice(1)}`);
}

// Where an unallocated block goes: the overseas prefixes of the ARCEP README (plus the ones its
// data uses: 0263, 0691, 0693, 0697, 0708) and the overseas NPV ranges. Anything else is FR.
const OVERSEAS_FALLBACK_BY_PREFIX: ReadonlyMap<string, FrenchTerritory> = new Map<string, FrenchTerritory>([
  ['0262', 'RE'],
  ['0263', 'RE'],
  ['0692', 'RE'],
  ['0693', 'RE'],
  ['0269', 'YT'],
  ['0639', 'YT'],
  ['0590', 'GP'],
  ['0690', 'GP'],
  ['0691', 'GP'],
  ['0594', 'GF'],
  ['0694', 'GF'],
  ['0596', 'MQ'],
  ['0696', 'MQ'],
  ['0697', 'MQ'],
  ['0508', 'PM'],
  ['0708', 'PM'],
  ['09475', 'GP'],
  ['09476', 'GF'],
  ['09477', 'MQ'],
  ['09478', 'RE'],
  ['09479', 'RE'],
]);

const TYPE_LABELS_FR: Readonly<Record<string, string>> = {
  mobile: 'Mobile',
  fixed_line: 'Fixe',
  fixed_line_or_mobile: 'Fixe ou mobile',
  toll_free: 'Numéro gratuit',
  premium_rate: 'Numéro surtaxé',
  shared_cost: 'Numéro à coût partagé',
  voip: 'Voix sur IP',
  personal_number: 'Numéro personnel',
  pager: 'Radiomessagerie',
  uan: "Numéro d'accès universel",
  voicemail: 'Messagerie vocale',
  unknown: 'Numéro',
};

export const RANGE_LABELS = {
  npv: 'NPV : plage réservée aux appels et messages automatisés',
  technicalPlatform: 'Plateforme technique',
  polyvalent: 'Numéro polyvalent',
  tollFree: 'Numéro spécial gratuit',
  sharedCost: 'Numéro spécial à coût partagé',
  premiumRate: 'Numéro spécial majoré',
  standardRate: 'Numéro spécial au tarif normal',
  special: 'Numéro spécial',
  mobile: 'Mobile',
} as const;

const TECHNICAL_PLATFORM = /^09(?:37|38|39[0-4])/;
const SAINT_MARTIN_OVER_BARTHELEMY = /^0590(?:5[12]|87)/;

type Spelling =
  | { ok: true; international: boolean; digits: string; parenthesisedZeroAt: number }
  | { ok: false; reason: PhoneNumberRejection };

function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * Checks the accepted spellings: ASCII digits, an optional leading `+`, and between digits one
 * space, dot or dash, or a parenthesised group of digits. Nothing is ever dropped silently.
 */
export function checkSpelling(raw: string): Spelling {
  if (raw.length === 0) return { ok: false, reason: 'empty' };
  if (raw.length > MAX_INPUT_LENGTH) return { ok: false, reason: 'too_long' };
  let index = 0;
  let international = false;
  if (raw.charCodeAt(0) === 43 /* + */) {
    international = true;
    index = 1;
  }
  let digits = '';
  let parenthesisedZeroAt = -1;
  let separatorRun = '';
  let insideParenthesis = false;
  let groupStart = -1;
  for (; index < raw.length; index += 1) {
    const code = raw.charCodeAt(index);
    if (isDigitCode(code)) {
      if (separatorRun !== '') {
        // Only a national spelling may open with a parenthesis ("(01) 40…"); "+" is followed by a digit.
        if (
          digits === '' ? international || separatorRun !== '(' : !/^(?:[ .-]|[ .-]?\(|\)[ .-]?)$/.test(separatorRun)
        ) {
          return { ok: false, reason: 'misplaced_separator' };
        }
        separatorRun = '';
      }
      digits += raw[index];
      continue;
    }
    if (code === 32 || code === 46 || code === 45) {
      if (insideParenthesis) return { ok: false, reason: 'misplaced_separator' };
      separatorRun += raw[index];
      continue;
    }
    if (code === 40 /* ( */) {
      if (insideParenthesis) return { ok: false, reason: 'misplaced_separator' };
      insideParenthesis = true;
      groupStart = digits.length;
      separatorRun += '(';
      continue;
    }
    if (code === 41 /* ) */) {
      if (!insideParenthesis || separatorRun !== '' || digits.length === groupStart)
        return { ok: false, reason: 'misplaced_separator' };
      insideParenthesis = false;
      if (digits.length === groupStart + 1 && digits.endsWith('0')) parenthesisedZeroAt = groupStart;
      separatorRun = ')';
      continue;
    }
    return { ok: false, reason: 'invalid_character' };
  }
  if (insideParenthesis || (separatorRun !== '' && separatorRun !== ')'))
    return { ok: false, reason: 'misplaced_separator' };
  if (digits === '') return { ok: false, reason: 'no_digits' };
  if (!international && digits.startsWith('00')) {
    return {
      ok: true,
      international: true,
      digits: digits.slice(2),
      parenthesisedZeroAt: parenthesisedZeroAt >= 2 ? parenthesisedZeroAt - 2 : -1,
    };
  }
  return { ok: true, international, digits, parenthesisedZeroAt };
}

type CallerForm = { ok: true; text: string } | { ok: false; reason: PhoneNumberRejection };

// RFC 3966 visual separators: they carry no meaning inside a tel: number or a sip: user part.
const VISUAL_SEPARATORS = /[-.()]/g;
// `;name` or `;name=value` (RFC 3966 / RFC 3261 parameters: npdi, rn=…, phone-context=…, user=phone…).
const URI_PARAMETERS = /^(?:;[A-Za-z0-9-]+(?:=[!-:<-~]+)?)*$/;
// A host name, IPv4 or [IPv6] address with an optional port.
const URI_HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
const URI_SCHEME = /^(tel|sips?):/i;

function isWithheld(text: string): boolean {
  return text.length <= 11 && WITHHELD_WORDS.has(text.toLowerCase());
}

/** Decodes RFC 3261 escapes in a sip: user part (`%2B33…`); undefined when one is malformed. */
function unescapeUserPart(user: string): string | undefined {
  if (!user.includes('%')) return user;
  if (/%(?![0-9A-Fa-f]{2})/.test(user)) return undefined;
  // Only printable ASCII may come out: anything else is refused by the spelling check anyway,
  // and decoding byte by byte keeps multi-byte sequences from turning into look-alike digits.
  return user.replace(/%([0-9A-Fa-f]{2})/g, (escape: string, hex: string) => {
    const code = Number.parseInt(hex, 16);
    return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : escape;
  });
}

/** The number of a telephone-subscriber (RFC 3966): its parameters and visual separators dropped. */
function subscriberNumber(subscriber: string): CallerForm {
  const semicolon = subscriber.indexOf(';');
  const number = semicolon < 0 ? subscriber : subscriber.slice(0, semicolon);
  if (semicolon >= 0 && !URI_PARAMETERS.test(subscriber.slice(semicolon))) return { ok: false, reason: 'invalid_uri' };
  if (isWithheld(number)) return { ok: false, reason: 'withheld' };
  const text = number.replace(VISUAL_SEPARATORS, '');
  // A number made of separators alone, or nothing: there is no digit to read.
  if (text === '' || text === '+') return { ok: false, reason: 'no_digits' };
  return { ok: true, text };
}

/**
 * Reads what a phone system sends where a caller's number goes: a withheld-caller word, a tel:
 * URI (RFC 3966), or the user part of a sip:/sips: URI (RFC 3261); anything else is returned as
 * is, to be checked as a spelling. The scheme is case-insensitive.
 */
export function readCallerForm(raw: string): CallerForm {
  if (raw.length > MAX_URI_LENGTH) return { ok: false, reason: 'too_long' };
  // Most inputs are plain numbers: a word or a scheme starts with a letter.
  const first = raw.charCodeAt(0) | 0x20;
  if (!(first >= 97 && first <= 122)) return { ok: true, text: raw };
  if (isWithheld(raw)) return { ok: false, reason: 'withheld' };
  const scheme = URI_SCHEME.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return { ok: true, text: raw };
  const rest = raw.slice(scheme.length + 1);
  if (scheme === 'tel') return subscriberNumber(rest);
  const at = rest.indexOf('@');
  // A sip: URI without a user part names a host, not a caller.
  if (at <= 0) return { ok: false, reason: 'invalid_uri' };
  const hostPart = rest.slice(at + 1);
  const hostEnd = hostPart.search(/[;?]/);
  const host = hostEnd < 0 ? hostPart : hostPart.slice(0, hostEnd);
  const tail = hostEnd < 0 ? '' : hostPart.slice(hostEnd);
  const query = tail.indexOf('?');
  const parameters = query < 0 ? tail : tail.slice(0, query);
  const headers = query < 0 ? '' : tail.slice(query + 1);
  if (!URI_HOST.test(host) || !URI_PARAMETERS.test(parameters) || !/^[!-~]*$/.test(headers))
    return { ok: false, reason: 'invalid_uri' };
  const user = unescapeUserPart(rest.slice(0, at));
  // `user:password@host` is not how a caller is sent; refused rather than half read.
  if (user === undefined || user.includes(':') || user.includes('@')) return { ok: false, reason: 'invalid_uri' };
  return subscriberNumber(user);
}

/** The country calling code a string of international digits starts with, when it is one of the French plan's. */
function frenchPlanCallingCode(digits: string): string | undefined {
  if (digits.startsWith('33')) return '33';
  const three = digits.slice(0, 3);
  return FRENCH_PLAN_CALLING_CODES.has(three) ? three : undefined;
}

function toLowerType(type: string | undefined): string {
  return type === undefined ? 'unknown' : type.toLowerCase();
}

function spaceSeparated(formatted: string): string {
  return formatted.replace(/[^0-9]+/g, ' ').trim();
}

/**
 * The national format of a French-plan number, as libphonenumber writes it (FR: `06 12 34 56 78`,
 * `0 800 12 34 56`; overseas: `0262 12 34 56`), done here because formatNational() costs more
 * than the rest of the enrichment. Saint-Pierre-et-Miquelon, which libphonenumber formats in its
 * own plan (`41 12 34`), reads like every other overseas number.
 */
function formatFrenchNational(national: string, territory: FrenchTerritory): string {
  const tail = `${national.slice(4, 6)} ${national.slice(6, 8)} ${national.slice(8, 10)}`;
  if (territory !== 'FR') return `${national.slice(0, 4)} ${tail}`;
  if (national.charCodeAt(1) === 56 /* 8 */) return `0 ${national.slice(1, 4)} ${tail}`;
  return `${national.slice(0, 2)} ${national.slice(2, 4)} ${tail}`;
}

function safeParse(e164: string): PhoneNumber | undefined {
  try {
    return parsePhoneNumberFromString(e164);
  } catch {
    return undefined;
  }
}

const INVALID: ParsePhoneNumberResult = { ok: false, reason: 'invalid_number' };

// Calling codes of every region libphonenumber knows: a parenthesised 0 right after one is a trunk 0.
let knownCallingCodes: ReadonlySet<string> | undefined;
function isKnownCallingCode(digits: string): boolean {
  knownCallingCodes ??= new Set(getCountries().map((region) => getCountryCallingCode(region)));
  return knownCallingCodes.has(digits);
}

/**
 * Builds the parser. `plan` comes from loadNumberingPlan; `defaultRegion` (ISO 3166, e.g. FR)
 * is the region a number without `+`/`00` is read in. Numbers dialled as 0XXXXXXXXX are read
 * in the French plan whenever the default region is one of its territories.
 */
export function createPhoneNumberParser(plan: NumberingPlan, defaultRegion: string): PhoneNumberParser {
  const region: CountryCode = isSupportedCountry(defaultRegion) ? defaultRegion : 'FR';
  const defaultIsFrenchPlan = region in FRENCH_REGION_NAMES;
  const countryNames = new Map<string, string>();
  let displayNames: Intl.DisplayNames | undefined;
  try {
    displayNames = new Intl.DisplayNames(['fr'], { type: 'region' });
  } catch {
    displayNames = undefined;
  }

  function nameCountry(regionCode: string): string {
    let name = countryNames.get(regionCode);
    if (name === undefined) {
      try {
        name = displayNames?.of(regionCode) ?? regionCode;
      } catch {
        name = regionCode;
      }
      countryNames.set(regionCode, name);
    }
    return name;
  }

  /** The territory of a national number: its ARCEP block's, else its prefix's, else mainland. */
  function territoryOf(national: string, block = plan.findBlock(national)): FrenchTerritory {
    return (
      block?.territory ??
      OVERSEAS_FALLBACK_BY_PREFIX.get(national.slice(0, 5)) ??
      OVERSEAS_FALLBACK_BY_PREFIX.get(national.slice(0, 4)) ??
      'FR'
    );
  }

  function parseFrenchNational(national: string, expectedCallingCode: string | undefined): ParsePhoneNumberResult {
    if (national.length !== 10 || national.charCodeAt(0) !== 48 || national.charCodeAt(1) === 48) return INVALID;
    const block = plan.findBlock(national);
    const territory = territoryOf(national, block);
    const callingCode = CALLING_CODE_BY_TERRITORY[territory];
    if (expectedCallingCode !== undefined && expectedCallingCode !== callingCode) return INVALID;
    let significant: string;
    if (territory === 'PM' && national.startsWith('0508')) {
      // Saint-Pierre-et-Miquelon's classic numbers are dialled 0508 XX XX XX in the French plan
      // but have 6 digits after +508; its newer 0708 mobiles keep 9 (+508 708 XX XX XX).
      significant = national.slice(4);
    } else {
      significant = national.slice(1);
    }
    const e164 = `+${callingCode}${significant}`;
    const isNPV = NPV_MAINLAND_PREFIXES.has(national.slice(0, 4)) || NPV_OVERSEAS_PREFIXES.has(national.slice(0, 5));
    let parsed = safeParse(e164);
    // With types in the metadata (the /max set), isValid() is exactly getType() !== undefined:
    // asking once saves a full pass over the patterns.
    let libType = parsed?.getType();
    if ((!parsed || libType === undefined) && isNPV && territory !== 'FR') {
      // The NPV ranges are the plan's whether allocated or not (ARCEP decision 2022-1583), and
      // libphonenumber's overseas metadata covers only part of 09475–09479 (09478 3…): the line
      // type is then read as the national plan's (+33), the territory stays ARCEP's.
      parsed = safeParse(`+33${national.slice(1)}`);
      libType = parsed?.getType();
    }
    if (!parsed || libType === undefined) return INVALID;

    // ARCEP decides the territory; libphonenumber only refines Guadeloupe's block into
    // Saint-Martin/Saint-Barthélemy, and RE/Mayotte for blocks ARCEP has not allocated.
    let regionCode: string = territory;
    if (territory === 'GP' && (parsed.country === 'MF' || parsed.country === 'BL')) {
      // libphonenumber's BL and MF fixed-line patterns overlap on 0590 27, 29, 51, 52 and 87, and
      // it then answers BL (listed first). 51, 52 and 87 are Saint-Martin's historical prefixes.
      regionCode = parsed.country === 'BL' && SAINT_MARTIN_OVER_BARTHELEMY.test(national) ? 'MF' : parsed.country;
    }
    if (!block && (territory === 'RE' || territory === 'YT') && (parsed.country === 'RE' || parsed.country === 'YT'))
      regionCode = parsed.country;

    const type = toLowerType(libType);
    const firstDigit = national.charAt(1);
    const regionName = FRENCH_REGION_NAMES[regionCode] ?? 'France';
    const isMainlandGeographic =
      regionCode === 'FR' && type === 'fixed_line' && !isNPV && MAINLAND_ZONES[firstDigit] !== undefined;
    const zone = isMainlandGeographic ? (MAINLAND_ZONES[firstDigit] ?? regionName) : regionName;

    let rangeLabel: string;
    if (isNPV) rangeLabel = RANGE_LABELS.npv;
    else if (TECHNICAL_PLATFORM.test(national)) rangeLabel = RANGE_LABELS.technicalPlatform;
    else if (firstDigit === '9') rangeLabel = RANGE_LABELS.polyvalent;
    else if (firstDigit === '8') {
      rangeLabel =
        type === 'toll_free'
          ? RANGE_LABELS.tollFree
          : type === 'shared_cost'
            ? RANGE_LABELS.sharedCost
            : type === 'premium_rate'
              ? RANGE_LABELS.premiumRate
              : type === 'uan'
                ? RANGE_LABELS.standardRate
                : RANGE_LABELS.special;
    } else if (type === 'mobile') rangeLabel = RANGE_LABELS.mobile;
    else if (type === 'fixed_line') rangeLabel = `Géographique (${zone})`;
    else rangeLabel = TYPE_LABELS_FR[type] ?? TYPE_LABELS_FR.unknown ?? 'Numéro';

    const nationalFormat = formatFrenchNational(national, territory);

    const value: ParsedPhoneNumber = {
      number: national,
      e164,
      regionCode,
      isFrenchPlan: true,
      frenchNationalDigits: national,
      phoneInfo: {
        national: nationalFormat,
        e164,
        type,
        rangeLabel,
        originalCarrier: block?.originalCarrier ?? '',
        region: isMainlandGeographic ? zone : regionName,
        isNPV,
      },
    };
    // Not for an NPV number, which has its own hint and verdict (VERDICT_NPV) whoever holds its
    // block; set only when true, so every other number keeps its shape (and the literal above
    // its fast path: no spread on the hot path).
    if (block?.callCentreOperator === true && !isNPV) value.callCentreOperator = true;
    return { ok: true, value };
  }

  /**
   * International digits (after + or 00) whose calling code belongs to the French plan, read as
   * the national number of that code's own territory (`+262 692…` is `0692…`); undefined calling
   * code: of whichever territory ARCEP gives the national number.
   */
  function parseFrenchInternational(callingCode: string | undefined, significant: string): ParsePhoneNumberResult {
    if (significant.length === 6 && (callingCode === '508' || callingCode === undefined))
      return parseFrenchNational(`0508${significant}`, callingCode);
    if (significant.length !== 9) return INVALID;
    return parseFrenchNational(`0${significant}`, callingCode);
  }

  /**
   * Describes a number of another plan, when libphonenumber finds it valid (it has a type); else
   * INVALID. Built from the number's own E.164 form, re-read when libphonenumber normalised the
   * candidate (a trunk 0 dropped, a national form), so one e164 always gets one description
   * whatever the spelling or the default region.
   */
  function describeForeign(candidate: string): ParsePhoneNumberResult {
    let parsed = safeParse(candidate);
    if (parsed !== undefined && parsed.number !== candidate) {
      const normalised = parsed.number;
      parsed = safeParse(normalised);
      if (parsed?.number !== normalised) return INVALID;
    }
    const libType = parsed?.getType();
    if (!parsed || libType === undefined) return INVALID;
    const type = toLowerType(libType);
    const regionCode = parsed.country ?? '';
    const countryName = regionCode === '' ? '' : nameCountry(regionCode);
    const typeLabel = TYPE_LABELS_FR[type] ?? 'Numéro';
    const carrier =
      type === 'mobile' || type === 'fixed_line_or_mobile' || type === 'pager'
        ? plan.findForeignCarrier(parsed.countryCallingCode, parsed.nationalNumber)
        : '';
    return {
      ok: true,
      value: {
        number: parsed.number,
        e164: parsed.number,
        regionCode,
        isFrenchPlan: false,
        frenchNationalDigits: null,
        phoneInfo: {
          national: spaceSeparated(parsed.formatNational()),
          e164: parsed.number,
          type,
          rangeLabel: countryName === '' ? typeLabel : `${typeLabel} (${countryName})`,
          originalCarrier: carrier,
          region: countryName,
          isNPV: false,
        },
      },
    };
  }

  /**
   * International digits whose calling code is one of the French plan's. A trunk 0 after the
   * calling code (`+33 06…`, `+33 (0)6…`, `0033 06…`, `+262 0692…`) is dropped, as a person
   * dialling reads it: the answer is that of the national number, never a second description of
   * the same e164 (docs/numbering.md, "One number, one answer"). The French plan is one plan: a
   * national number under another territory's calling code (`+33 9 47 5…`, `+33 262…`,
   * `+262 6…`) is that national number, with its own territory, NPV flag and e164 (issue 28):
   * never a foreign-looking number that lost what the plan says of it.
   */
  function parseFrenchPlanInternational(callingCode: string, afterCode: string): ParsePhoneNumberResult {
    const significant = afterCode.startsWith('0') ? afterCode.slice(1) : afterCode;
    const own = parseFrenchInternational(callingCode, significant);
    if (own.ok) return own;
    const e164 = `+${callingCode}${significant}`;
    const exact = safeParse(e164);
    const readExactly = exact?.number === e164;
    // Saint-Pierre-et-Miquelon numbers some 9-digit ranges of its own outside the national plan
    // (+508 80…, toll-free): libphonenumber's reading of them wins over a national number they
    // would otherwise spell.
    const pmOwn = callingCode === '508' && readExactly && exact?.country === 'PM' && exact.getType() !== undefined;
    if (!pmOwn) {
      const national = parseFrenchInternational(undefined, significant);
      if (national.ok) return national;
      // Digits of a national range of another territory that are no valid number there either
      // (`+33 596 12 34 56` as `0596 12 34 56`): refused as the national form is, never
      // described as a foreign-looking number of this calling code.
      if (significant.length === 9 && CALLING_CODE_BY_TERRITORY[territoryOf(`0${significant}`)] !== callingCode)
        return INVALID;
    }
    // A few numbers of these calling codes have no 0XXXXXXXXX form (+508 80…): libphonenumber
    // alone describes them, as for any other country, when it reads exactly these digits.
    if (readExactly) {
      const foreign = describeForeign(e164);
      if (foreign.ok) return foreign;
    }
    return own;
  }

  function parseInternational(digits: string, parenthesisedZeroAt: number): ParsePhoneNumberResult {
    const callingCode = frenchPlanCallingCode(digits);
    if (callingCode !== undefined) {
      // A parenthesised zero elsewhere than right after the calling code is one of its digits.
      return parseFrenchPlanInternational(callingCode, digits.slice(callingCode.length));
    }
    if (parenthesisedZeroAt >= 0) {
      // "+44 (0)20 7946 0958": a trunk zero is only dropped right after the country code.
      const candidate = `+${digits.slice(0, parenthesisedZeroAt)}${digits.slice(parenthesisedZeroAt + 1)}`;
      if (safeParse(candidate)?.countryCallingCode.length !== parenthesisedZeroAt) return INVALID;
      return describeForeign(candidate);
    }
    return describeForeign(`+${digits}`);
  }

  /** Digits without `+`/`00`, read in the default region. */
  function parseNational(digits: string): ParsePhoneNumberResult {
    if (defaultIsFrenchPlan) return parseFrenchNational(digits, undefined);
    let parsed: PhoneNumber | undefined;
    try {
      parsed = parsePhoneNumberFromString(digits, region);
    } catch {
      parsed = undefined;
    }
    if (!parsed?.isValid()) return INVALID;
    if (FRENCH_PLAN_CALLING_CODES.has(parsed.countryCallingCode)) {
      return parseFrenchPlanInternational(parsed.countryCallingCode, parsed.nationalNumber);
    }
    return describeForeign(parsed.number);
  }

  /** The territories of the numbers that start with these national digits: ARCEP's blocks, else the fallback prefixes, else mainland. */
  function territoriesUnder(national: string): Set<FrenchTerritory> {
    const { covering, within } = plan.blocksUnder(national);
    const territories = new Set(within);
    // A block holding the whole prefix leaves no number to the fallbacks.
    if (covering !== undefined) {
      territories.add(covering);
      return territories;
    }
    if (national.length >= 5) {
      territories.add(
        OVERSEAS_FALLBACK_BY_PREFIX.get(national.slice(0, 5)) ??
          OVERSEAS_FALLBACK_BY_PREFIX.get(national.slice(0, 4)) ??
          'FR',
      );
      return territories;
    }
    // Shorter digits: every fallback prefix under them, and what the rest falls back to.
    territories.add(OVERSEAS_FALLBACK_BY_PREFIX.get(national) ?? 'FR');
    for (const [prefix, territory] of OVERSEAS_FALLBACK_BY_PREFIX)
      if (prefix.length > national.length && prefix.startsWith(national)) territories.add(territory);
    return territories;
  }

  /** National digits of the French plan (`0692…`) in international form, one reading per calling code they fall under. */
  function frenchNationalReadings(national: string): string[] {
    // `00…` is no national number (it is how an international one is dialled).
    if (!/^0(?:[1-9]\d*)?$/.test(national)) return [];
    const readings = new Set<string>();
    for (const territory of territoriesUnder(national)) {
      const code = CALLING_CODE_BY_TERRITORY[territory];
      // Saint-Pierre-et-Miquelon's 0508 XX XX XX is +508 XX XX XX (parseFrenchNational).
      if (territory === 'PM' && national.startsWith('0508')) readings.add(`${code}${national.slice(4)}`);
      else if (territory === 'PM' && '0508'.startsWith(national)) readings.add(code);
      else readings.add(`${code}${national.slice(1)}`);
    }
    return [...readings];
  }

  /**
   * International digits (after + or 00) as the plan reads them, valid or not: a trunk 0 after a
   * French-plan calling code dropped and the digits read as the national number they spell
   * (`+33 692…` is +262 692…, as parseFrenchPlanInternational reads a valid one), unless the
   * calling code is one they fall under; a parenthesised 0 after another calling code dropped.
   */
  function internationalReadings(digits: string, parenthesisedZeroAt: number): string[] {
    const callingCode = frenchPlanCallingCode(digits);
    if (callingCode === undefined) {
      if (parenthesisedZeroAt > 0 && isKnownCallingCode(digits.slice(0, parenthesisedZeroAt)))
        return [`${digits.slice(0, parenthesisedZeroAt)}${digits.slice(parenthesisedZeroAt + 1)}`];
      return digits === '' ? [] : [digits];
    }
    const afterCode = digits.slice(callingCode.length);
    const significant = afterCode.startsWith('0') ? afterCode.slice(1) : afterCode;
    const dialled = `${callingCode}${significant}`;
    // +508's own numbers have 6 digits and no national form of their own length.
    if (callingCode === '508') return [dialled];
    const readings = frenchNationalReadings(`0${significant}`);
    return readings.includes(dialled) ? [dialled] : readings;
  }

  /** Digits without `+`/`00` as the default region reads them, valid or not. */
  function nationalReadings(digits: string): string[] {
    // Longer than any E.164 and without a trunk 0: the international digits of a SIP trunk, one too many.
    if (!digits.startsWith('0') && digits.length > E164_WITHOUT_PLUS_LENGTHS.max)
      return internationalReadings(digits, -1);
    if (defaultIsFrenchPlan) return frenchNationalReadings(digits);
    if (!digits.startsWith('0')) return [];
    return [`${getCountryCallingCode(region)}${digits.slice(1)}`];
  }

  /** `result`, with the readings of the digits when they are no valid number. */
  function withReadings(result: ParsePhoneNumberResult, readings: () => string[]): ParsePhoneNumberResult {
    if (result.ok || result.reason !== 'invalid_number') return result;
    const dialledAs = readings();
    return dialledAs.length === 0 ? result : { ok: false, reason: result.reason, dialledAs };
  }

  function readsAsE164WithoutPlus(digits: string): boolean {
    return (
      digits.length >= E164_WITHOUT_PLUS_LENGTHS.min &&
      digits.length <= E164_WITHOUT_PLUS_LENGTHS.max &&
      digits.charCodeAt(0) !== 48
    );
  }

  function readDialled(raw: string): readonly string[] | undefined {
    const form = readCallerForm(raw);
    if (!form.ok) return undefined;
    const spelling = checkSpelling(form.text);
    if (!spelling.ok) return undefined;
    const { digits, international, parenthesisedZeroAt } = spelling;
    if (international) return internationalReadings(digits, parenthesisedZeroAt);
    return digits.startsWith('0') ? nationalReadings(digits) : undefined;
  }

  const parsePhoneNumber = (raw: string): ParsePhoneNumberResult => {
    try {
      const form = readCallerForm(raw);
      if (!form.ok) return form;
      const spelling = checkSpelling(form.text);
      if (!spelling.ok) return { ok: false, reason: spelling.reason };
      const { digits, international, parenthesisedZeroAt } = spelling;
      if (international)
        return withReadings(parseInternational(digits, parenthesisedZeroAt), () =>
          internationalReadings(digits, parenthesisedZeroAt),
        );
      const national = parseNational(digits);
      // "33612345678", as SIP trunks send it: only when it cannot be a national number.
      if (!national.ok && readsAsE164WithoutPlus(digits))
        return withReadings(parseInternational(digits, parenthesisedZeroAt), () =>
          internationalReadings(digits, parenthesisedZeroAt),
        );
      return withReadings(national, () => nationalReadings(digits));
    } catch {
      // libphonenumber is not supposed to throw on these inputs; a parser that answers 400
      // is still better than one that turns a bad number into a 500.
      return INVALID;
    }
  };
  return Object.assign(parsePhoneNumber, { readDialled });
}
