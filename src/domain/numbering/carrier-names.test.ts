import { describe, expect, it } from 'vitest';
import { originalCarrierName, USUAL_CARRIER_NAMES } from './carrier-names.js';

describe('carriers by the names a household knows them by', () => {
  it('puts the usual name first and keeps ARCEP’s legal name as its detail', () => {
    expect(originalCarrierName('SFR0', 'Société française du radiotéléphone')).toBe(
      'SFR (Société française du radiotéléphone)',
    );
    expect(originalCarrierName('SRR', 'Société réunionnaise du radiotéléphone')).toBe(
      'SFR Réunion (Société réunionnaise du radiotéléphone)',
    );
    expect(originalCarrierName('FRMO', 'Free mobile')).toBe('Free (Free mobile)');
  });

  it('shows an operator already known by its legal name, or one it does not know, by that name alone', () => {
    expect(originalCarrierName('FRTE', 'Orange')).toBe('Orange');
    expect(originalCarrierName('BOUY', 'Bouygues Telecom')).toBe('Bouygues Telecom');
    expect(originalCarrierName('FREE', 'Free')).toBe('Free');
    expect(originalCarrierName('LGC', 'Manifone')).toBe('Manifone');
    expect(originalCarrierName('CLLC', 'CLLC')).toBe('CLLC');
  });

  it('names only operator codes of ARCEP’s register, each with a non-empty name', () => {
    for (const [code, name] of USUAL_CARRIER_NAMES) {
      expect(code).toMatch(/^[A-Z0-9]{2,6}$/);
      expect(name.trim()).not.toBe('');
    }
  });
});
