import { describe, expect, it } from 'vitest';
import { testNumberingPlan } from '../../harness/servers.js';
import { buildReport, buildScoreResult } from './report-builder.js';
import { computeHints } from './hints.js';
import { createPhoneNumberParser } from './numbering/parse-phone-number.js';
import type { ParsedPhoneNumber } from './phone-number.js';
import { lookupResult, notFoundSlot } from '../../harness/lookup.js';

const parse = createPhoneNumberParser(testNumberingPlan(), 'FR');

function parsed(raw: string): ParsedPhoneNumber {
  const result = parse(raw);
  if (!result.ok) throw new Error(`test number ${raw} did not parse: ${result.reason}`);
  return result.value;
}

describe('meta.hints', () => {
  it('marks a number of an NPV automated-calling range with npv', () => {
    const number = parsed('0162123456');
    expect(number.phoneInfo.isNPV).toBe(true);
    expect(computeHints(number)).toEqual(['npv']);
  });

  it.each(['0937123456', '0938123456', '0939012345', '0939404123'])(
    'marks the technical-platform number %s with technical_platform',
    (raw) => {
      expect(computeHints(parsed(raw))).toEqual(['technical_platform']);
    },
  );

  it.each([
    ['Aircall', '0189712345'],
    ['Onoff', '0189620123'],
    ['Twilio', '0214731234'],
    ['Diabolocom', '0176491234'],
  ])('marks a number of a fixed block of %s with call_centre_operator', (_operator, raw) => {
    expect(computeHints(parsed(raw))).toEqual(['call_centre_operator']);
  });

  it('marks neither a number of Onoff’s mobile block 06 44 66 nor one of a mainland mobile operator', () => {
    const onoffMobile = parsed('0644661234');
    expect(onoffMobile.phoneInfo.originalCarrier).toContain('Onoff');
    expect(computeHints(onoffMobile)).toEqual([]);
    expect(computeHints(parsed('0612345678'))).toEqual([]);
  });

  it('gives an NPV number only npv, even in a block of a call-centre operator (Manifone’s 016200)', () => {
    expect(parsed('0162001234').phoneInfo.originalCarrier).toContain('Manifone');
    expect(computeHints(parsed('0162001234'))).toEqual(['npv']);
  });

  it('gives a technical-platform block held by a call-centre operator both hints', () => {
    expect(computeHints(parsed('0939130123'))).toEqual(['technical_platform', 'call_centre_operator']);
  });

  describe('outside_legal_hours, with the time of the call', () => {
    const PARIS = 'Europe/Paris';
    // Monday 30 November 2026, Paris is UTC+1: 19:59:59 and 20:00:01 local time.
    const inside = { atMs: Date.parse('2026-11-30T18:59:59Z'), timeZone: PARIS };
    const outside = { atMs: Date.parse('2026-11-30T19:00:01Z'), timeZone: PARIS };

    it('marks an NPV and a call-centre caller outside the hours, not inside', () => {
      expect(computeHints(parsed('0162123456'), inside)).toEqual(['npv']);
      expect(computeHints(parsed('0162123456'), outside)).toEqual(['npv', 'outside_legal_hours']);
      expect(computeHints(parsed('0189712345'), inside)).toEqual(['call_centre_operator']);
      expect(computeHints(parsed('0189712345'), outside)).toEqual(['call_centre_operator', 'outside_legal_hours']);
    });

    it('never marks another number, nor a number without a clock', () => {
      expect(computeHints(parsed('0612345678'), outside)).toEqual([]);
      expect(computeHints(parsed('0937123456'), outside)).toEqual(['technical_platform']);
      expect(computeHints(parsed('0162123456'))).toEqual(['npv']);
    });

    it('reads the hours in the given zone', () => {
      // 19:00:01 UTC is 23:00:01 in Réunion (UTC+4) and 15:00:01 in Martinique (UTC−4).
      expect(computeHints(parsed('0162123456'), { ...outside, timeZone: 'Indian/Reunion' })).toContain(
        'outside_legal_hours',
      );
      expect(computeHints(parsed('0162123456'), { ...outside, timeZone: 'America/Martinique' })).toEqual(['npv']);
    });
  });

  it.each(['0939512345', '0612345678', '+32470123456'])('gives no hint for %s', (raw) => {
    expect(computeHints(parsed(raw))).toEqual([]);
  });

  it('puts the hints on both the full report and the score, without changing the score', () => {
    const result = lookupResult(notFoundSlot(), notFoundSlot(), notFoundSlot());
    const npv = parsed('0162123456');
    expect(buildReport(npv, result).meta.hints).toEqual(['npv']);
    const score = buildScoreResult(npv, result);
    expect(score.meta.hints).toEqual(['npv']);
    expect(score.score).toEqual({ number: '0162123456', score: null, risk: 'unknown' });
  });
});
