// What decided a text answer (decisionOf and its kin, verdict.ts): one cause per rule, the verdict
// always verdictOf's (a property over random facts), and the causes of the answers that need no
// lookup (lists, spam reports, withheld and invalid callers).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptySourceData, type SourceDataBySlot } from './report.js';
import type { ReportEvidence, ReportVerdict } from './ports/caller-reports.js';
import {
  decisionOf,
  listDecision,
  REPORTED_DECISION,
  unlookableDecision,
  unlookableVerdict,
  verdictOf,
  VERDICTS,
  type TextFacts,
  type VerdictRule,
} from './verdict.js';

const DEFAULTS: VerdictRule = {
  blockScore: 7,
  warnScore: 5,
  npv: 'warn',
  withheld: 'allow',
  callCentre: 'warn',
  outsideHours: 'block',
};

function withScore(score: number | null): SourceDataBySlot {
  const empty = emptySourceData();
  return { ...empty, primary: { ...empty.primary, score } };
}

function evidence(verdict: ReportVerdict): ReportEvidence {
  return {
    spam: 0,
    legitimate: 0,
    reporters: 2,
    categories: verdict === 'legitimate' ? { legitimate: 2 } : { fraud: 2 },
    lastReportAt: '2026-11-20T10:00:00.000Z',
    verdict,
  };
}

const facts = (score: number | null, more: Partial<TextFacts> = {}): TextFacts => ({
  check: 'answered',
  isNPV: false,
  sources: withScore(score),
  ...more,
});

describe('what decided a looked-up answer', () => {
  it('names the score when the score alone decides', () => {
    expect(decisionOf(facts(8), DEFAULTS)).toEqual({ verdict: 'block', decidedBy: 'score' });
    expect(decisionOf(facts(6), DEFAULTS)).toEqual({ verdict: 'warn', decidedBy: 'score' });
    expect(decisionOf(facts(2), DEFAULTS)).toEqual({ verdict: 'allow', decidedBy: 'score' });
  });

  it('names nothing when no fact decides', () => {
    expect(decisionOf(facts(null), DEFAULTS)).toEqual({ verdict: 'unknown', decidedBy: 'none' });
    expect(decisionOf(facts(null, { check: 'not_covered' }), DEFAULTS)).toEqual({
      verdict: 'unknown',
      decidedBy: 'none',
    });
  });

  it('names the reports when they say spam, whatever the score and ranges', () => {
    expect(decisionOf(facts(1, { reports: evidence('spam'), isNPV: true }), DEFAULTS)).toEqual({
      verdict: 'block',
      decidedBy: 'reports',
    });
  });

  it('names the reports when suspect lifts a lower verdict to warn, and not when the score already warns', () => {
    expect(decisionOf(facts(2, { reports: evidence('suspect') }), DEFAULTS)).toEqual({
      verdict: 'warn',
      decidedBy: 'reports',
    });
    expect(decisionOf(facts(6, { reports: evidence('suspect') }), DEFAULTS)).toEqual({
      verdict: 'warn',
      decidedBy: 'score',
    });
    expect(decisionOf(facts(9, { reports: evidence('suspect') }), DEFAULTS)).toEqual({
      verdict: 'block',
      decidedBy: 'score',
    });
  });

  it('names the reports when legitimate lowers a blocking score, or makes an unknown caller allowed', () => {
    expect(decisionOf(facts(9, { reports: evidence('legitimate') }), DEFAULTS)).toEqual({
      verdict: 'warn',
      decidedBy: 'reports',
    });
    expect(decisionOf(facts(null, { reports: evidence('legitimate') }), DEFAULTS)).toEqual({
      verdict: 'allow',
      decidedBy: 'reports',
    });
    expect(decisionOf(facts(2, { reports: evidence('legitimate') }), DEFAULTS)).toEqual({
      verdict: 'allow',
      decidedBy: 'score',
    });
  });

  it('names the NPV range when VERDICT_NPV is stronger than the score, the score when it is not', () => {
    expect(decisionOf(facts(2, { isNPV: true }), DEFAULTS)).toEqual({ verdict: 'warn', decidedBy: 'npv' });
    expect(decisionOf(facts(null, { isNPV: true }), DEFAULTS)).toEqual({ verdict: 'warn', decidedBy: 'npv' });
    expect(decisionOf(facts(8, { isNPV: true }), DEFAULTS)).toEqual({ verdict: 'block', decidedBy: 'score' });
    expect(decisionOf(facts(6, { isNPV: true }), DEFAULTS)).toEqual({ verdict: 'warn', decidedBy: 'score' });
  });

  it('names the call-centre range when VERDICT_CALL_CENTRE is stronger', () => {
    expect(decisionOf(facts(2, { callCentreOperator: true }), DEFAULTS)).toEqual({
      verdict: 'warn',
      decidedBy: 'call_centre',
    });
    expect(decisionOf(facts(2, { callCentreOperator: true }), { ...DEFAULTS, callCentre: 'block' })).toEqual({
      verdict: 'block',
      decidedBy: 'call_centre',
    });
  });

  it('names the legal hours when the hour raises an NPV or call-centre caller', () => {
    expect(decisionOf(facts(2, { isNPV: true, outsideLegalHours: true }), DEFAULTS)).toEqual({
      verdict: 'block',
      decidedBy: 'legal_hours',
    });
    expect(decisionOf(facts(2, { callCentreOperator: true, outsideLegalHours: true }), DEFAULTS)).toEqual({
      verdict: 'block',
      decidedBy: 'legal_hours',
    });
    // A floor that only equals the verdict changes nothing: the score blocked first.
    expect(decisionOf(facts(9, { isNPV: true, outsideLegalHours: true }), DEFAULTS)).toEqual({
      verdict: 'block',
      decidedBy: 'score',
    });
  });

  it('gives verdictOf’s verdict for any facts, and a cause that is one of the facts present', () => {
    const score = fc.option(fc.integer({ min: 1, max: 10 }), { nil: null });
    const verdict = fc.constantFrom(...VERDICTS);
    const report = fc.option(fc.constantFrom<ReportVerdict>('spam', 'suspect', 'legitimate', 'unclear'), {
      nil: null,
    });
    fc.assert(
      fc.property(
        score,
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        report,
        verdict,
        verdict,
        fc.constantFrom<'warn' | 'block'>('warn', 'block'),
        (s, isNPV, callCentreOperator, outsideLegalHours, reported, npv, callCentre, outsideHours) => {
          const rule = { ...DEFAULTS, npv, callCentre, outsideHours };
          const given = facts(s, {
            isNPV,
            callCentreOperator,
            outsideLegalHours,
            reports: reported === null ? null : evidence(reported),
          });
          const decision = decisionOf(given, rule);
          expect(decision.verdict).toBe(verdictOf(given, rule));
          const present = new Set<string>(['score', 'none']);
          if (reported !== null) present.add('reports');
          if (isNPV) present.add('npv');
          if (callCentreOperator) present.add('call_centre');
          if (outsideLegalHours) present.add('legal_hours');
          expect(present.has(decision.decidedBy)).toBe(true);
          if (decision.decidedBy === 'none') expect(decision.verdict).toBe('unknown');
          if (decision.decidedBy === 'score') expect(s).not.toBeNull();
        },
      ),
    );
  });
});

describe('what decided an answer without a lookup', () => {
  it('names the lists for a rule, with its list as the verdict', () => {
    expect(listDecision({ list: 'block' })).toEqual({ verdict: 'block', decidedBy: 'lists' });
    expect(listDecision({ list: 'allow' })).toEqual({ verdict: 'allow', decidedBy: 'lists' });
  });

  it('names the reports for spam', () => {
    expect(REPORTED_DECISION).toEqual({ verdict: 'block', decidedBy: 'reports' });
  });

  it('names a withheld caller (VERDICT_WITHHELD) and an invalid number (unknown)', () => {
    expect(unlookableDecision('withheld', DEFAULTS)).toEqual({ verdict: 'allow', decidedBy: 'withheld' });
    expect(unlookableDecision('withheld', { ...DEFAULTS, withheld: 'block' })).toEqual({
      verdict: 'block',
      decidedBy: 'withheld',
    });
    expect(unlookableDecision('invalid', DEFAULTS)).toEqual({ verdict: 'unknown', decidedBy: 'invalid' });
    expect(unlookableVerdict('withheld', { ...DEFAULTS, withheld: 'warn' })).toBe('warn');
  });
});
