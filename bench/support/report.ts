// The shape every bench part returns, and its two renderings: console lines while the run goes,
// and the Markdown of docs/benchmark-results.md. A figure is only meaningful next to its baseline,
// measured in the same run (shared, noisy machines), so rows carry the ratio when there is one.

export interface BenchRow {
  /** What was measured, e.g. "full report, closed loop: requests/s". */
  label: string;
  value: string;
  /** The baseline measured in the same run, when the figure has one. */
  baseline?: string;
  /** value / baseline (or the relation that matters), already formatted, e.g. "62 %". */
  ratio?: string;
  /** The target from the issues, e.g. "≥ 50 %". */
  target?: string;
  /** Whether the target was met; undefined when there is no target. */
  met?: boolean;
}

export interface BenchSection {
  title: string;
  rows: BenchRow[];
  /** How it was measured and what limits it; one line each. */
  notes: string[];
}

export function formatNumber(value: number, fractionDigits = 0): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: fractionDigits,
    maximumFractionDigits: fractionDigits,
  });
}

export function formatPercent(ratio: number): string {
  return `${formatNumber(ratio * 100, 0)} %`;
}

export function formatMs(ms: number): string {
  return `${formatNumber(ms, ms < 10 ? 2 : 1)} ms`;
}

/** The target with its verdict ("≥ 90 % (met)"), or the target alone when it has no verdict. */
function targetWithVerdict(row: BenchRow & { target: string }): string {
  if (row.met === undefined) return row.target;
  return `${row.target} (${row.met ? 'met' : 'MISSED'})`;
}

export function renderSectionText(section: BenchSection): string {
  const lines = [`\n== ${section.title}`];
  for (const row of section.rows) {
    const parts = [`  ${row.label}: ${row.value}`];
    if (row.baseline !== undefined) parts.push(`baseline ${row.baseline}`);
    if (row.ratio !== undefined) parts.push(`ratio ${row.ratio}`);
    if (row.target !== undefined) parts.push(`target ${targetWithVerdict({ ...row, target: row.target })}`);
    lines.push(parts.join(' | '));
  }
  for (const note of section.notes) lines.push(`  - ${note}`);
  return lines.join('\n');
}

const escapeCell = (text: string): string => text.replaceAll('|', '\\|');

export function renderSectionMarkdown(section: BenchSection): string {
  const lines = [`## ${section.title}`, ''];
  if (section.rows.length > 0) {
    lines.push('| Measure | Value | Baseline | Ratio | Target |', '|---|---|---|---|---|');
    for (const row of section.rows) {
      const target = row.target === undefined ? '' : targetWithVerdict({ ...row, target: row.target });
      lines.push(
        `| ${[row.label, row.value, row.baseline ?? '', row.ratio ?? '', target].map(escapeCell).join(' | ')} |`,
      );
    }
    lines.push('');
  }
  for (const note of section.notes) lines.push(`- ${note}`);
  if (section.notes.length > 0) lines.push('');
  return lines.join('\n');
}

/** A part that could not run still gets a section, saying why, so a missing figure is visible. */
export function failedSection(title: string, error: unknown): BenchSection {
  const message = error instanceof Error ? error.message : String(error);
  return { title, rows: [], notes: [`Did not run: ${message.split('\n')[0] ?? message}`] };
}
