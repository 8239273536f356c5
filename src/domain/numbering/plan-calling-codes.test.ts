// Issue 28: docs/numbering.md's rule holds for every range of the numbering data under every
// calling code of the French plan, in every spelling. The French plan is one plan: `0` and nine
// digits name one national number whichever of the plan's calling codes they come under (+33,
// +262, +508, +590, +594, +596), so every spelling parses to the very ParsedPhoneNumber of the
// national form, or is refused when the national form is; the NPV flag is never lost by a
// spelling. The separate plans of the other French territories (+269, +681, +687, +689) never
// describe these digits as a French-plan number.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsePhoneNumberResult } from '../phone-number.js';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { splitSemicolonCsv } from './numbering-plan.js';
import {
  createPhoneNumberParser,
  FRENCH_PLAN_CALLING_CODES,
  NPV_MAINLAND_PREFIXES,
  NPV_OVERSEAS_PREFIXES,
} from './parse-phone-number.js';

const parse = createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR');

const PLAN_CODES = [...FRENCH_PLAN_CALLING_CODES];
const OTHER_FRENCH_CODES = ['269', '681', '687', '689'];

/** Every way a number may be written with a calling code: `sig` is the national number without its 0. */
const SPELLINGS: ReadonlyArray<(code: string, sig: string) => string> = [
  (code, sig) => `+${code}${sig}`,
  (code, sig) => `+${code}0${sig}`,
  (code, sig) => `00${code}${sig}`,
  (code, sig) => `${code}${sig}`,
  (code, sig) => `${code}0${sig}`,
  (code, sig) => `+${code} (0)${sig}`,
  (code, sig) => `sip:%2B${code}${sig}@pbx`,
  (code, sig) => `sip:+${code}${sig}@pbx.example;user=phone`,
  (code, sig) => `tel:+${code}-${sig}`,
];

interface Range {
  first: number;
  last: number;
  label: string;
}

/** One range per 5-digit prefix and territory of ARCEP's 10-digit blocks, and every NPV prefix, allocated or not. */
function rangesOfTheData(): Range[] {
  const rows = splitSemicolonCsv(readFileSync('data/arcep/MAJNUM.csv', 'latin1'));
  const byKey = new Map<string, Range>();
  for (const row of rows.slice(1)) {
    const [, start = '', end = '', , territory = ''] = row;
    if (!/^0\d{9}$/.test(start) || !/^0\d{9}$/.test(end)) continue;
    const key = `${start.slice(0, 5)} ${territory}`;
    if (!byKey.has(key))
      byKey.set(key, { first: Number(start), last: Number(end), label: `${start}–${end} (${territory})` });
  }
  const npv = [...NPV_MAINLAND_PREFIXES, ...NPV_OVERSEAS_PREFIXES].map((prefix) => {
    const first = Number(prefix.padEnd(10, '0'));
    return { first, last: Number(prefix.padEnd(10, '9')), label: `${prefix} (NPV)` };
  });
  return [...byKey.values(), ...npv];
}

const RANGES = rangesOfTheData();
const national = (value: number): string => `0${String(value).padStart(9, '0')}`;

/** Why a spelling's parse breaks the rule for its national form, or undefined. */
function breach(
  nationalForm: string,
  code: string,
  spelling: string,
  expected: ParsePhoneNumberResult = parse(nationalForm),
): string | undefined {
  const sig = nationalForm.slice(1);
  const got: ParsePhoneNumberResult = parse(spelling);
  const where = `${spelling} (national ${nationalForm}: ${expected.ok ? `${expected.value.e164}${expected.value.phoneInfo.isNPV ? ', NPV' : ''}` : expected.reason})`;
  if (!FRENCH_PLAN_CALLING_CODES.has(code)) {
    // Another plan: never these digits as a French-plan number.
    if (got.ok && (got.value.isFrenchPlan || !got.value.e164.startsWith(`+${code}`)))
      return `${where}: read as ${got.value.e164}`;
    return undefined;
  }
  if (expected.ok && expected.value.phoneInfo.isNPV && !(got.ok && got.value.phoneInfo.isNPV))
    return `${where}: lost the NPV flag`;
  if (expected.ok) {
    if (got.ok && JSON.stringify(got.value) === JSON.stringify(expected.value)) return undefined;
    // Documented exception: Saint-Pierre-et-Miquelon's own 9-digit ranges (+508 80…).
    if (code === '508' && got.ok && got.value.regionCode === 'PM' && got.value.e164 === `+508${sig}`) return undefined;
    return `${where}: ${got.ok ? `read as ${got.value.e164} (${got.value.isFrenchPlan ? 'French plan' : 'not French plan'})` : `refused: ${got.reason}`}`;
  }
  // A national form that is no number: no spelling of it is a French-plan number either, nor
  // a number of another territory's code.
  if (got.ok && (got.value.isFrenchPlan || !(code === '508' && got.value.regionCode === 'PM')))
    return `${where}: read as ${got.value.e164}`;
  return undefined;
}

describe('every range of the numbering data under every calling code of the French plan (issue 28)', () => {
  it('covers the data: thousands of ranges, every territory, every NPV prefix', () => {
    expect(RANGES.length).toBeGreaterThan(2000);
    for (const territory of [
      'Métropole',
      'La Réunion',
      'Mayotte',
      'Guadeloupe',
      'Guyane',
      'Martinique',
      'Saint Pierre et Miquelon',
    ]) {
      expect(RANGES.some((range) => range.label.includes(territory))).toBe(true);
    }
  });

  it('gives every range, under every plan calling code, the answer of its national form (the spellings in turn; other territories’ codes in the cases below)', () => {
    const breaches: string[] = [];
    RANGES.forEach((range, rangeIndex) => {
      const nationalForm = national(range.first + Math.floor((range.last - range.first) / 2));
      const expected = parse(nationalForm);
      PLAN_CODES.forEach((code, codeIndex) => {
        const spell = SPELLINGS[(rangeIndex + codeIndex) % SPELLINGS.length];
        const problem =
          spell === undefined
            ? 'no spelling'
            : breach(nationalForm, code, spell(code, nationalForm.slice(1)), expected);
        if (problem !== undefined) breaches.push(`${range.label}: ${problem}`);
      });
    });
    expect(breaches.slice(0, 20)).toEqual([]);
    // Some 15,000 parses: seconds on a loaded machine, far more than the default deadline.
  }, 120_000);

  it('gives every NPV range, in every spelling under every calling code, its NPV flag', () => {
    const breaches: string[] = [];
    for (const range of RANGES.filter((candidate) => candidate.label.endsWith('(NPV)'))) {
      for (const value of [range.first, range.first + 38_433, Math.floor((range.first + range.last) / 2), range.last]) {
        const nationalForm = national(value);
        const expected = parse(nationalForm);
        for (const code of [...PLAN_CODES, ...OTHER_FRENCH_CODES]) {
          for (const spell of SPELLINGS) {
            const problem = breach(nationalForm, code, spell(code, nationalForm.slice(1)), expected);
            if (problem !== undefined) breaches.push(problem);
          }
        }
      }
    }
    expect(breaches.slice(0, 20)).toEqual([]);
  }, 60_000);

  it('holds for any number of any range, any calling code and any spelling', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RANGES).chain((range) => fc.integer({ min: range.first, max: range.last })),
        fc.constantFrom(...PLAN_CODES, ...OTHER_FRENCH_CODES),
        fc.constantFrom(...SPELLINGS),
        (value, code, spell) => {
          const nationalForm = national(value);
          expect(breach(nationalForm, code, spell(code, nationalForm.slice(1)))).toBeUndefined();
        },
      ),
      { numRuns: 3000 },
    );
  }, 60_000);

  it('reads the spellings of the attack as the overseas NPV number they are', () => {
    const expected = parse('0947538433');
    expect(expected).toMatchObject({ ok: true, value: { isFrenchPlan: true, phoneInfo: { isNPV: true } } });
    for (const spelling of ['+33947538433', '+330947538433', '330947538433', 'sip:%2B33947538433@pbx'])
      expect(parse(spelling), spelling).toEqual(expected);
  });
});
