import { describe, expect, it } from 'vitest';
import { RANGE_LABELS } from '../domain/numbering/parse-phone-number.js';
import type { PhoneInfo } from '../domain/report.js';
import { formatFacts, hintsOf, readHints, readPhoneInfo, readProblemFacts } from './facts.js';

const MOBILE: PhoneInfo = {
  national: '06 12 34 56 78',
  e164: '+33612345678',
  type: 'mobile',
  rangeLabel: 'Mobile',
  originalCarrier: 'Orange',
  region: 'France',
  isNPV: false,
};
const NPV: PhoneInfo = {
  ...MOBILE,
  national: '01 62 00 56 78',
  e164: '+33162005678',
  type: 'fixed_line',
  rangeLabel: RANGE_LABELS.npv,
  isNPV: true,
};
const PLATFORM: PhoneInfo = {
  ...MOBILE,
  national: '09 37 00 12 34',
  e164: '+33937001234',
  type: 'voip',
  rangeLabel: RANGE_LABELS.technicalPlatform,
};

describe("a number's hints", () => {
  it('are npv for an automated-calling range, technical_platform for the platforms, none for an ordinary mobile', () => {
    expect(hintsOf(NPV)).toEqual(['npv']);
    expect(hintsOf(PLATFORM)).toEqual(['technical_platform']);
    expect(hintsOf(MOBILE)).toEqual([]);
  });

  it('are read from meta.hints only when it is an array of strings', () => {
    expect(readHints({ hints: ['npv'] })).toEqual(['npv']);
    expect(readHints({ hints: [] })).toEqual([]);
    expect(readHints({ hints: ['npv', 3] })).toBeUndefined();
    expect(readHints({ hints: 'npv' })).toBeUndefined();
    expect(readHints({})).toBeUndefined();
  });
});

describe('reading the facts of a 502 body', () => {
  const problem = {
    type: 'about:blank',
    title: 'All data sources failed',
    status: 502,
    sources: { primary: 'timeout' },
  };

  it('takes number and phoneInfo when the body carries all seven members', () => {
    expect(readProblemFacts(JSON.stringify({ ...problem, number: '0162005678', phoneInfo: NPV }))).toEqual({
      number: '0162005678',
      phoneInfo: NPV,
      hints: ['npv'],
    });
  });

  it('finds none in an older body, a partial phoneInfo, or text that is not JSON', () => {
    expect(readProblemFacts(JSON.stringify(problem))).toBeUndefined();
    expect(
      readProblemFacts(JSON.stringify({ ...problem, number: '0612345678', phoneInfo: { ...MOBILE, isNPV: 'no' } })),
    ).toBeUndefined();
    const { region: _region, ...withoutRegion } = MOBILE;
    expect(readPhoneInfo(withoutRegion)).toBeUndefined();
    expect(readProblemFacts('<html>bad gateway</html>')).toBeUndefined();
  });
});

describe('the facts block', () => {
  it('says the NPV flag and each hint in words', () => {
    const lines = formatFacts({ number: '0162005678', phoneInfo: NPV, hints: ['npv'] });
    expect(lines[0]).toBe('Number 0162005678');
    expect(lines).toContain('  National          01 62 00 56 78');
    expect(lines).toContain('  Line type         fixed line');
    expect(lines).toContain('  NPV               yes, a range reserved for automated calls and messages');
    expect(lines).toContain(
      '  Hints             npv: range reserved for automated calls and messages (NPV): on its own a reason to block',
    );
  });

  it('says no and none for an ordinary mobile, and a dash for an empty fact', () => {
    const lines = formatFacts({ number: '0612345678', phoneInfo: { ...MOBILE, originalCarrier: '' }, hints: [] });
    expect(lines).toContain('  NPV               no');
    expect(lines).toContain('  Hints             none');
    expect(lines).toContain('  Original carrier  —');
  });

  it('prints no control characters a remote server could slip into the facts', () => {
    const text = formatFacts({
      number: '06\u001b[2J',
      phoneInfo: { ...MOBILE, region: 'Fr\u0007ance\u202e' },
      hints: ['n\u001bpv'],
    }).join('\n');
    // eslint-disable-next-line no-control-regex -- asserting their absence
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/);
    expect(text).toContain('Region            France');
  });
});
