// A small in-memory CallerReports (the port of src/domain/ports/caller-reports.ts) for tests of
// what reads the reports' evidence without a file or Redis store behind them: fixed evidence per
// number, set and cleared by the test, and a version it bumps on each change (or sets itself), so
// the phone routes, the front cache and the blocklist feed see a change as they would the store's.
import type { CallerReports, ReportEvidence } from '../src/domain/ports/caller-reports.js';

export class InMemoryCallerReports implements CallerReports {
  private readonly held = new Map<string, ReportEvidence>();
  private changes = 0;
  private fixedVersion: string | undefined;

  constructor(evidence: Readonly<Record<string, ReportEvidence>> = {}) {
    for (const [e164, held] of Object.entries(evidence)) this.held.set(e164, held);
  }

  /** Sets what the reports say of `e164` (E.164), or clears it with null. */
  set(e164: string, evidence: ReportEvidence | null): void {
    if (evidence === null) this.held.delete(e164);
    else this.held.set(e164, evidence);
    this.changes += 1;
  }

  /** Sets the version as a store would give it (undefined: counted from the changes). */
  setVersion(version: string | undefined): void {
    this.fixedVersion = version;
  }

  evidence(e164: string): ReportEvidence | null {
    return this.held.get(e164) ?? null;
  }

  *reportedSpam(): Iterable<{ e164: string; evidence: ReportEvidence }> {
    for (const [e164, evidence] of this.held) if (evidence.verdict === 'spam') yield { e164, evidence };
  }

  version(): string {
    return this.fixedVersion ?? `changes-${this.changes}`;
  }
}

/** Evidence as a store would give it, from the votes in force per rating (one vote per reporter). */
export function evidenceOf(
  verdict: ReportEvidence['verdict'],
  categories: ReportEvidence['categories'],
  lastReportAt = '2026-11-20T10:00:00.000Z',
): ReportEvidence {
  let spam = 0;
  let legitimate = 0;
  let reporters = 0;
  for (const [rating, votes = 0] of Object.entries(categories)) {
    reporters += votes;
    if (rating === 'legitimate') legitimate += votes;
    else if (rating !== 'missed') spam += votes;
  }
  return { spam, legitimate, reporters, categories, lastReportAt, verdict };
}
