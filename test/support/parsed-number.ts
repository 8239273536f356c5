// ParsedPhoneNumber values for engine tests, without going through the numbering module.
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';

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
