// The names of the text answers' verdicts and of what decided them: the domain (verdict.ts), the
// admin API's schemas and the operator's console (src/web/console, bundled for the browser) read
// them here, so a new cause is added once. No imports: the console's bundle takes this file alone.

export const VERDICTS = ['block', 'warn', 'allow', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * What decided a text answer (the operator's console counts and shows it, docs/console.md): the
 * operator's lists, the reporters, the score, an NPV range, a call-centre range, the legal
 * calling hours, a withheld caller, an invalid number, or nothing (`none`: no fact, `unknown`).
 */
export const DECIDED_BY = [
  'lists',
  'reports',
  'score',
  'npv',
  'call_centre',
  'legal_hours',
  'withheld',
  'invalid',
  'none',
] as const;
export type DecidedBy = (typeof DECIDED_BY)[number];
