import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptySourceData, type SourceDataBySlot } from './report.js';
import type { ReportEvidence } from './ports/caller-reports.js';
import {
  categoryOf,
  cidLineOf,
  listCidLine,
  reportCidLine,
  safeDisplayLine,
  spamReportersOf,
  topSpamRating,
  scoreVerdict,
  unlookableCidLine,
  unlookableVerdict,
  verdictOf,
  type VerdictRule,
} from './verdict.js';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

const DEFAULTS: VerdictRule = {
  blockScore: 7,
  warnScore: 5,
  npv: 'warn',
  withheld: 'allow',
  callCentre: 'warn',
  outsideHours: 'block',
};

function withScore(score: number | null, changes: Partial<SourceDataBySlot> = {}): SourceDataBySlot {
  const empty = emptySourceData();
  return { ...empty, primary: { ...empty.primary, score }, ...changes };
}

describe('the verdict rule', () => {
  it.each([
    [9, 'block'],
    [7, 'block'],
    [6, 'warn'],
    [5, 'warn'],
    [4, 'allow'],
    [1, 'allow'],
    [null, 'unknown'],
  ] as const)('says %s → %s with the default thresholds', (score, verdict) => {
    expect(scoreVerdict(score, DEFAULTS)).toBe(verdict);
    expect(verdictOf({ check: 'answered', isNPV: false, sources: withScore(score) }, DEFAULTS)).toBe(verdict);
  });

  it('gives an NPV number the stronger of its score and VERDICT_NPV', () => {
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(8) }, DEFAULTS)).toBe('block');
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(2) }, DEFAULTS)).toBe('warn');
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(null) }, DEFAULTS)).toBe('warn');
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(5) }, { ...DEFAULTS, npv: 'block' })).toBe(
      'block',
    );
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(2) }, { ...DEFAULTS, npv: 'allow' })).toBe(
      'allow',
    );
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(null) }, { ...DEFAULTS, npv: 'allow' })).toBe(
      'allow',
    );
    expect(
      verdictOf({ check: 'answered', isNPV: true, sources: withScore(null) }, { ...DEFAULTS, npv: 'unknown' }),
    ).toBe('unknown');
    expect(verdictOf({ check: 'answered', isNPV: true, sources: withScore(3) }, { ...DEFAULTS, npv: 'unknown' })).toBe(
      'allow',
    );
  });

  it('gives a call-centre caller the stronger of its score and VERDICT_CALL_CENTRE', () => {
    const callCentre = (score: number | null) => ({
      check: 'answered' as const,
      isNPV: false,
      callCentreOperator: true,
      sources: withScore(score),
    });
    expect(verdictOf(callCentre(2), DEFAULTS)).toBe('warn');
    expect(verdictOf(callCentre(null), DEFAULTS)).toBe('warn');
    expect(verdictOf(callCentre(8), DEFAULTS)).toBe('block');
    expect(verdictOf(callCentre(2), { ...DEFAULTS, callCentre: 'block' })).toBe('block');
    expect(verdictOf(callCentre(2), { ...DEFAULTS, callCentre: 'allow' })).toBe('allow');
    expect(verdictOf(callCentre(6), { ...DEFAULTS, callCentre: 'allow' })).toBe('warn');
    // Not a call-centre block: the setting says nothing.
    expect(verdictOf({ ...callCentre(2), callCentreOperator: false }, { ...DEFAULTS, callCentre: 'block' })).toBe(
      'allow',
    );
  });

  it('makes VERDICT_OUTSIDE_HOURS the floor outside the legal hours, and nothing inside', () => {
    const npv = (score: number | null, outsideLegalHours: boolean) => ({
      check: 'answered' as const,
      isNPV: true,
      outsideLegalHours,
      sources: withScore(score),
    });
    const allowing = { ...DEFAULTS, npv: 'allow' as const, callCentre: 'allow' as const };
    expect(verdictOf(npv(2, false), allowing)).toBe('allow');
    expect(verdictOf(npv(2, true), allowing)).toBe('block');
    expect(verdictOf(npv(null, true), { ...allowing, outsideHours: 'warn' })).toBe('warn');
    // A floor: a blocking score still blocks with the weaker setting.
    expect(verdictOf(npv(9, true), { ...allowing, outsideHours: 'warn' })).toBe('block');
    const centre = { check: 'answered' as const, isNPV: false, callCentreOperator: true, sources: withScore(1) };
    expect(verdictOf({ ...centre, outsideLegalHours: false }, DEFAULTS)).toBe('warn');
    expect(verdictOf({ ...centre, outsideLegalHours: true }, DEFAULTS)).toBe('block');
  });

  it('lets reports of spam block a call-centre caller at a legal hour, and legitimate reports not lift the floors', () => {
    const reports = (verdict: 'spam' | 'legitimate'): ReportEvidence => ({
      spam: 0,
      legitimate: 0,
      reporters: 2,
      categories: verdict === 'spam' ? { fraud: 2 } : { legitimate: 2 },
      lastReportAt: '2026-11-20T10:00:00.000Z',
      verdict,
    });
    const centre = { check: 'answered' as const, isNPV: false, callCentreOperator: true, sources: withScore(1) };
    expect(verdictOf({ ...centre, reports: reports('spam') }, { ...DEFAULTS, callCentre: 'allow' })).toBe('block');
    expect(verdictOf({ ...centre, reports: reports('legitimate') }, DEFAULTS)).toBe('warn');
    expect(verdictOf({ ...centre, reports: reports('legitimate'), outsideLegalHours: true }, DEFAULTS)).toBe('block');
  });

  it('follows the operator thresholds and the withheld setting', () => {
    const strict = { ...DEFAULTS, blockScore: 9, warnScore: 9 };
    expect(verdictOf({ check: 'answered', isNPV: false, sources: withScore(8) }, strict)).toBe('allow');
    expect(verdictOf({ check: 'answered', isNPV: false, sources: withScore(9) }, strict)).toBe('block');
    expect(unlookableVerdict('withheld', DEFAULTS)).toBe('allow');
    expect(unlookableVerdict('withheld', { ...DEFAULTS, withheld: 'block' })).toBe('block');
    expect(unlookableVerdict('invalid', { ...DEFAULTS, withheld: 'block' })).toBe('unknown');
  });

  it('derives a score from the other sources when the primary has none', () => {
    const empty = emptySourceData();
    const sources = withScore(null, { community: { ...empty.community, dangerPercent: 90 } });
    expect(verdictOf({ check: 'answered', isNPV: false, sources }, DEFAULTS)).toBe('block');
  });
});

describe('the caller-ID line', () => {
  it('names a call-centre block and the legal hours, each within the line rules', () => {
    const centre = { check: 'answered' as const, isNPV: false, callCentreOperator: true, sources: withScore(2) };
    expect(cidLineOf(centre, 'fr', 30)).toBe('Plateforme d’appels');
    expect(cidLineOf(centre, 'en', 30)).toBe('Call centre');
    // A suspicious score still says so inside the hours.
    expect(cidLineOf({ ...centre, sources: withScore(8) }, 'fr', 30)).toMatch(/^SPAM\? 8\/9/);
    // Outside the hours, the hours come first, before the score.
    for (const facts of [
      { ...centre, outsideLegalHours: true },
      { ...centre, sources: withScore(8), outsideLegalHours: true },
      { check: 'answered' as const, isNPV: true, outsideLegalHours: true, sources: withScore(null) },
    ]) {
      expect(cidLineOf(facts, 'fr', 30)).toBe('Hors horaires légaux');
      expect(cidLineOf(facts, 'en', 30)).toBe('Outside legal hours');
    }
    // Each line is what the sanitiser leaves as it is: nothing refused on /cid (no ASCII quote).
    for (const line of ['Plateforme d’appels', 'Call centre', 'Hors horaires légaux', 'Outside legal hours'])
      expect(safeDisplayLine(line, 30)).toBe(line);
  });

  it('names the category most of the primary comments give, else the community, else the signals', () => {
    const empty = emptySourceData();
    const comment = (callerType: string) => ({ author: '', text: '', date: '', callerType });
    expect(
      categoryOf({
        ...empty,
        primary: { ...empty.primary, commentList: [comment('Arnaque'), comment('Démarchage'), comment('Démarchage')] },
      }),
    ).toBe('Démarchage');
    expect(
      categoryOf({
        ...empty,
        primary: { ...empty.primary, commentList: [comment('Démarchage'), comment('Arnaque'), comment('')] },
      }),
    ).toBe('Démarchage');
    expect(
      categoryOf({
        ...empty,
        community: { ...empty.community, topCategory: 'Gênant' },
        signals: { ...empty.signals, callerType: 'Vendeur' },
      }),
    ).toBe('Gênant');
    expect(categoryOf({ ...empty, signals: { ...empty.signals, callerType: 'Vendeur' } })).toBe('Vendeur');
    expect(categoryOf(empty)).toBe('');
  });

  it('writes each case in both languages', () => {
    const empty = emptySourceData();
    const suspicious = withScore(8, { community: { ...empty.community, topCategory: 'Démarchage' } });
    expect(cidLineOf({ check: 'answered', isNPV: false, sources: suspicious }, 'fr', 30)).toBe('SPAM? 8/9 Démarchage');
    expect(cidLineOf({ check: 'answered', isNPV: false, sources: withScore(8) }, 'fr', 30)).toBe('SPAM? 8/9');
    expect(cidLineOf({ check: 'answered', isNPV: true, sources: withScore(2) }, 'fr', 30)).toBe(
      'Appel automatisé (NPV)',
    );
    expect(cidLineOf({ check: 'answered', isNPV: true, sources: withScore(2) }, 'en', 30)).toBe('Automated call (NPV)');
    expect(cidLineOf({ check: 'answered', isNPV: false, sources: withScore(5) }, 'fr', 30)).toBe('Neutre 5/9');
    expect(cidLineOf({ check: 'answered', isNPV: false, sources: withScore(2) }, 'fr', 30)).toBe('Fiable 2/9');
    expect(cidLineOf({ check: 'answered', isNPV: false, sources: withScore(2) }, 'en', 30)).toBe('Trusted 2/9');
    expect(unlookableCidLine('withheld', 'fr', 30)).toBe('Masqué');
    expect(unlookableCidLine('withheld', 'en', 30)).toBe('Withheld');
    expect(unlookableCidLine('invalid', 'fr', 30)).toBe('Numéro invalide');
    expect(unlookableCidLine('invalid', 'en', 30)).toBe('Invalid number');
  });

  it('says why there is no score, in words a French phone never shows for a withheld caller', () => {
    const noScore = withScore(null);
    const lines = (check: 'answered' | 'not_checked' | 'not_covered') =>
      (['fr', 'en'] as const).map((language) => cidLineOf({ check, isNPV: false, sources: noScore }, language, 30));
    // The sources answered, none with a score.
    expect(lines('answered')).toEqual(['Pas de note', 'No score']);
    // Every source asked failed or is still on its way: the service could not check.
    expect(lines('not_checked')).toEqual(['Non vérifié', 'Not checked']);
    // No source covers the number (a foreign one): none was asked.
    expect(lines('not_covered')).toEqual(['Non vérifié (étranger)', 'Not checked (foreign)']);
    const withheld = [unlookableCidLine('withheld', 'fr', 30), unlookableCidLine('withheld', 'en', 30)];
    for (const check of ['answered', 'not_checked', 'not_covered'] as const) {
      for (const line of lines(check)) {
        expect(withheld).not.toContain(line);
        // "Inconnu" is what a French phone shows for a withheld number.
        expect(line).not.toMatch(/inconnu|unknown/i);
      }
    }
    // A score or an NPV range still says more than the check.
    expect(cidLineOf({ check: 'not_checked', isNPV: true, sources: noScore }, 'fr', 30)).toBe('Appel automatisé (NPV)');
  });

  it('says who decided a rule without a public label: this service’s administrator, never an "opérateur"', () => {
    const rule = (list: 'allow' | 'block', label: string | null) => ({ list, rule: '+33612*', label });
    expect(listCidLine(rule('block', null), 'fr', 30)).toBe('Bloqué par l’administrateur');
    expect(listCidLine(rule('block', null), 'en', 30)).toBe('Blocked by the administrator');
    expect(listCidLine(rule('allow', null), 'fr', 30)).toBe('Autorisé par l’administrateur');
    expect(listCidLine(rule('allow', null), 'en', 30)).toBe('Allowed by the administrator');
    // The rule's label, when there is one to show, wins.
    expect(listCidLine(rule('allow', 'Dr Martin'), 'fr', 30)).toBe('Dr Martin');
    // Within the line's bounds at the default length.
    for (const list of ['allow', 'block'] as const) {
      for (const language of ['fr', 'en'] as const) {
        const line = listCidLine(rule(list, null), language, 30);
        expect(Array.from(graphemes.segment(line)).length).toBeLessThanOrEqual(30);
        expect(line).not.toMatch(/opérateur|operator/i);
      }
    }
  });

  it('removes what a dialplan could misread from an upstream category, and cuts to the length in grapheme clusters', () => {
    const empty = emptySourceData();
    const hostile = withScore(9, {
      community: { ...empty.community, topCategory: 'Arnaque"; Hangup()|x,\u0007y\u202e\r\nz ${EXTEN}' },
    });
    const line = cidLineOf({ check: 'answered', isNPV: false, sources: hostile }, 'fr', 200);
    expect(line).toBe('SPAM? 9/9 Arnaque Hangup()xy z EXTEN');
    expect(cidLineOf({ check: 'answered', isNPV: false, sources: hostile }, 'fr', 12)).toBe('SPAM? 9/9 Ar');
    // Characters, not bytes or UTF-16 units: é is one, and so is an emoji.
    expect(safeDisplayLine('Démarchage 😀 téléphonique', 12)).toBe('Démarchage 😀');
    expect(safeDisplayLine('Démarchage', 10)).toBe('Démarchage');
    // A decomposed é counts once, as the NFC form sent.
    expect(safeDisplayLine('De\u0301marchage', 10)).toBe('Démarchage');
  });

  it('never gives a line with a control character, a separator or more than the limit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.integer({ min: 8, max: 40 }), (text, limit) => {
        const line = safeDisplayLine(text, limit);
        // Plain checks, not expect(): thousands of runs on a loaded machine.
        return (
          Array.from(graphemes.segment(line)).length <= limit &&
          // eslint-disable-next-line no-control-regex -- the absence of control characters is the point
          !/[\u0000-\u001f\u007f-\u009f";|,%[\]\u202a-\u202e\u2066-\u2069]/.test(line) &&
          line === line.trim()
        );
      }),
      { numRuns: 600 },
    );
    // A minute: the runs take seconds on a loaded two-core machine.
  }, 60_000);
});

describe('the reports in the verdict and the caller-ID line (docs/reports.md, "In the answers")', () => {
  const evidence = (
    verdict: ReportEvidence['verdict'],
    categories: ReportEvidence['categories'] = { fraud: 3 },
  ): ReportEvidence => ({
    spam: 3,
    legitimate: 0,
    reporters: Object.values(categories).reduce((total, count) => total + (count ?? 0), 0),
    categories,
    lastReportAt: '2026-11-20T10:00:00.000Z',
    verdict,
  });
  const facts = (score: number | null, reports: ReportEvidence | null, isNPV = false) => ({
    check: 'answered' as const,
    isNPV,
    sources: withScore(score),
    reports,
  });

  // Each row: the score's verdict (score), what the reports say, NPV or not, the rule, and the verdict.
  it.each([
    ['spam blocks whatever the score', 1, 'spam', false, DEFAULTS, 'block'],
    ['spam blocks with no score', null, 'spam', false, DEFAULTS, 'block'],
    ['spam blocks an NPV number VERDICT_NPV allows', null, 'spam', true, { ...DEFAULTS, npv: 'allow' }, 'block'],
    ['suspect warns over a low score', 2, 'suspect', false, DEFAULTS, 'warn'],
    ['suspect warns with no score', null, 'suspect', false, DEFAULTS, 'warn'],
    ['suspect lets the score block', 8, 'suspect', false, DEFAULTS, 'block'],
    ['legitimate: a blocking score only warns', 9, 'legitimate', false, DEFAULTS, 'warn'],
    ['legitimate: a warning score still warns', 6, 'legitimate', false, DEFAULTS, 'warn'],
    ['legitimate: a low score allows', 2, 'legitimate', false, DEFAULTS, 'allow'],
    ['legitimate: no score allows (the reports are a fact)', null, 'legitimate', false, DEFAULTS, 'allow'],
    [
      'legitimate: VERDICT_NPV=block still blocks an NPV number',
      2,
      'legitimate',
      true,
      { ...DEFAULTS, npv: 'block' },
      'block',
    ],
    ['legitimate: VERDICT_NPV=warn warns an NPV number', 9, 'legitimate', true, DEFAULTS, 'warn'],
    ['unclear: the score blocks', 8, 'unclear', false, DEFAULTS, 'block'],
    ['unclear: no score stays unknown', null, 'unclear', false, DEFAULTS, 'unknown'],
    ['none: the score decides', 8, null, false, DEFAULTS, 'block'],
  ] as const)('%s', (_name, score, reported, isNPV, rule, verdict) => {
    const reports = reported === null ? null : evidence(reported);
    expect(verdictOf(facts(score, reports, isNPV), rule)).toBe(verdict);
  });

  it('never weakens the score for spam or suspect, and never blocks by the score alone for legitimate', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: null }),
        fc.constantFrom<ReportEvidence['verdict'][]>('spam', 'suspect', 'legitimate', 'unclear'),
        fc.boolean(),
        fc.constantFrom<VerdictRule['npv'][]>('block', 'warn', 'allow', 'unknown'),
        (score, reported, isNPV, npv) => {
          const rule = { ...DEFAULTS, npv };
          const withReports = verdictOf(facts(score, evidence(reported), isNPV), rule);
          const without = verdictOf(facts(score, null, isNPV), rule);
          const severity = ['unknown', 'allow', 'warn', 'block'];
          if (reported === 'spam') expect(withReports).toBe('block');
          if (reported === 'suspect')
            expect(severity.indexOf(withReports)).toBeGreaterThanOrEqual(Math.max(2, severity.indexOf(without)));
          if (reported === 'legitimate' && withReports === 'block') expect(isNPV && npv === 'block').toBe(true);
          if (reported === 'unclear') expect(withReports).toBe(without);
        },
      ),
    );
  });

  it('says REPORTED with the spam reporters and the rating most of them gave, in both languages', () => {
    const reports = evidence('spam', { fraud: 2, advertising: 1, legitimate: 1, missed: 1 });
    expect(cidLineOf(facts(8, reports), 'fr', 40)).toBe('SIGNALÉ 3× Arnaque');
    expect(cidLineOf(facts(8, reports), 'en', 40)).toBe('REPORTED 3× Fraud');
    expect(spamReportersOf(reports)).toBe(3);
    expect(topSpamRating(reports)).toBe('fraud');
  });

  it('names the more alarming rating when two are as reported, and says the same line below the bar', () => {
    const reports = evidence('suspect', { poll: 1, gamble: 1 });
    expect(topSpamRating(reports)).toBe('gamble');
    expect(cidLineOf(facts(2, reports), 'fr', 40)).toBe('SIGNALÉ 2× Jeux');
    expect(cidLineOf(facts(2, reports), 'en', 40)).toBe('REPORTED 2× Gambling');
  });

  it('says REPORTED SAFE for a number reported legitimate, and the score’s line when the reports are unclear', () => {
    const legitimate = evidence('legitimate', { legitimate: 2, fraud: 1 });
    expect(cidLineOf(facts(8, legitimate), 'fr', 40)).toBe('SIGNALÉ FIABLE 2×');
    expect(cidLineOf(facts(8, legitimate), 'en', 40)).toBe('REPORTED SAFE 2×');
    const unclear = evidence('unclear', { missed: 2 });
    expect(cidLineOf(facts(8, unclear), 'fr', 40)).toBe(cidLineOf(facts(8, null), 'fr', 40));
    expect(reportCidLine(unclear, 'en', 40)).toBeNull();
  });

  it('keeps the reports’ line within CID_MAX_LENGTH and free of what a dialplan reads as syntax', () => {
    const reports = evidence('spam', { advertising: 120 });
    for (const maxLength of [8, 12, 40]) {
      for (const language of ['fr', 'en'] as const) {
        const line = cidLineOf(facts(null, reports), language, maxLength);
        expect(line).toBe(safeDisplayLine(line, maxLength));
        expect([...graphemes.segment(line)].length).toBeLessThanOrEqual(maxLength);
      }
    }
    expect(cidLineOf(facts(null, reports), 'fr', 12)).toBe('SIGNALÉ 120×');
  });
});
