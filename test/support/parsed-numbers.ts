// Hand-built ParsedPhoneNumber values for adapter tests (the numbering module is not needed to
// test what an adapter does with a number it is given).
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';

const phoneInfo = { national: '', e164: '', type: 'mobile', rangeLabel: '', originalCarrier: '', region: '', isNPV: false };

/** A French-plan number from its 10 national digits ("0600000001"). */
export function frenchNumber(digits: string): ParsedPhoneNumber {
  const e164 = `+33${digits.slice(1)}`;
  return { number: digits, e164, regionCode: 'FR', isFrenchPlan: true, frenchNationalDigits: digits, phoneInfo: { ...phoneInfo, e164 } };
}

/** A Belgian mobile number: outside the French plan. */
export function belgianNumber(): ParsedPhoneNumber {
  const e164 = '+32470000000';
  return { number: e164, e164, regionCode: 'BE', isFrenchPlan: false, frenchNationalDigits: null, phoneInfo: { ...phoneInfo, e164 } };
}
