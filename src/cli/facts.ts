// The number's facts as the CLI shows them: what the numbering plan alone says about a number
// (formats, line type, range, original carrier, region, NPV) and the hints that follow from
// them. They need no upstream, so `info` prints them offline and `lookup` / `batch` still
// have them when every source failed. Pure.
import { computeHints, hintsOfPhoneInfo } from '../domain/hints.js';
import type { ParsedPhoneNumber } from '../domain/phone-number.js';
import type { PhoneInfo } from '../domain/report.js';
import { sanitizeForTerminal } from './sanitize.js';

export interface NumberFacts {
  /** The `number` of responses: national digits for the French plan, else E.164. */
  number: string;
  phoneInfo: PhoneInfo;
  /** `meta.hints` of the API: `npv`, `technical_platform`, `call_centre_operator`. */
  hints: string[];
}

/** Plain words for each hint the API defines; an unknown hint is shown by its name alone. */
export const HINT_TEXT: Readonly<Record<string, string>> = {
  npv: 'range reserved for automated calls and messages (NPV): on its own a reason to block',
  technical_platform: 'technical platform range (0937, 0938, 09390–09394): not a person dialling',
  call_centre_operator:
    'block of an operator whose numbers serve call centres: often canvassing, sometimes a business you know',
};

/**
 * The hints of a number's facts, by the API's own rule (`meta.hints`). Used when the answer
 * carries no `meta.hints`: offline, and on a 502.
 */
export function hintsOf(phoneInfo: PhoneInfo): string[] {
  return hintsOfPhoneInfo(phoneInfo);
}

export function factsOfParsedNumber(parsed: ParsedPhoneNumber): NumberFacts {
  return { number: parsed.number, phoneInfo: parsed.phoneInfo, hints: computeHints(parsed) };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const PHONE_INFO_TEXT_FIELDS = ['national', 'e164', 'type', 'rangeLabel', 'originalCarrier', 'region'] as const;

/** A phoneInfo object with all seven members of the right types, or undefined. */
export function readPhoneInfo(value: unknown): PhoneInfo | undefined {
  if (!isObject(value) || typeof value.isNPV !== 'boolean') return undefined;
  const text: Partial<Record<(typeof PHONE_INFO_TEXT_FIELDS)[number], string>> = {};
  for (const field of PHONE_INFO_TEXT_FIELDS) {
    const member = value[field];
    if (typeof member !== 'string') return undefined;
    text[field] = member;
  }
  const { national, e164, type, rangeLabel, originalCarrier, region } = text;
  if (
    national === undefined ||
    e164 === undefined ||
    type === undefined ||
    rangeLabel === undefined ||
    originalCarrier === undefined ||
    region === undefined
  )
    return undefined;
  return { national, e164, type, rangeLabel, originalCarrier, region, isNPV: value.isNPV };
}

/** `meta.hints` when it is an array of strings; undefined when absent or malformed. */
export function readHints(meta: unknown): string[] | undefined {
  if (!isObject(meta) || !Array.isArray(meta.hints)) return undefined;
  const hints: unknown[] = meta.hints;
  return hints.every((hint): hint is string => typeof hint === 'string') ? hints : undefined;
}

/** The facts a 502 problem body carries (`number`, `phoneInfo`), or undefined when it carries none. */
export function readProblemFacts(text: string): NumberFacts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || typeof parsed.number !== 'string') return undefined;
  const phoneInfo = readPhoneInfo(parsed.phoneInfo);
  return phoneInfo === undefined ? undefined : { number: parsed.number, phoneInfo, hints: hintsOf(phoneInfo) };
}

const show = (value: string): string => (value === '' ? '—' : value);

/** The facts block: `Number …`, then one indented line per fact. */
export function formatFacts(facts: NumberFacts): string[] {
  const info = facts.phoneInfo;
  const rows: Array<[string, string]> = [
    ['National', info.national],
    ['International', info.e164],
    ['Line type', info.type.replaceAll('_', ' ')],
    ['Range', info.rangeLabel],
    ['Original carrier', info.originalCarrier],
    ['Region', info.region],
    ['NPV', info.isNPV ? 'yes, a range reserved for automated calls and messages' : 'no'],
  ];
  const lines = [`Number ${sanitizeForTerminal(facts.number)}`];
  for (const [label, value] of rows) lines.push(`  ${label.padEnd(17)} ${show(sanitizeForTerminal(value))}`);
  if (facts.hints.length === 0) lines.push(`  ${'Hints'.padEnd(17)} none`);
  facts.hints.forEach((hint, index) => {
    const name = sanitizeForTerminal(hint);
    const words = HINT_TEXT[hint];
    lines.push(`  ${(index === 0 ? 'Hints' : '').padEnd(17)} ${name}${words === undefined ? '' : `: ${words}`}`);
  });
  return lines;
}
