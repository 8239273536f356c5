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

// ParsedPhoneNumber values for engine tests, without going through the numbering module.
/** A French mobile number 06 12 34 56 NN, distinct per `n` (0–99). */
export function frenchMobile(n: number): ParsedPhoneNumber {
  const suffix = String(n % 100).padStart(2, '0');
  const national = `06123456${suffix}`;
  return {
    number: national,
    e164: `+336123456${suffix}`,
    regionCode: 'FR',
    isFrenchPlan: true,
    frenchNationalDigits: national,
    phoneInfo: {
      national: `06 12 34 56 ${suffix}`,
      e164: `+336123456${suffix}`,
      type: 'mobile',
      rangeLabel: '',
      originalCarrier: '',
      region: 'France',
      isNPV: false,
    },
  };
}

/** Distinct numbers beyond 100: +33 7 NN NN NN NN. */
export function distinctNumber(n: number): ParsedPhoneNumber {
  const digits = String(n).padStart(8, '0').slice(-8);
  const national = `07${digits}`;
  const e164 = `+337${digits}`;
  return { ...frenchMobile(0), number: national, e164, frenchNationalDigits: national, phoneInfo: { ...frenchMobile(0).phoneInfo, national, e164 } };
}
