// The bench report's rendering of targets: a target with a verdict says met or MISSED (bench/run.ts
// lists the MISSED ones), a target without one is shown alone, never with an empty "()".
import { describe, expect, it } from 'vitest';
import { renderSectionMarkdown, renderSectionText, type BenchSection } from '../../bench/support/report.js';

const section: BenchSection = {
  title: 'Example',
  rows: [
    { label: 'met row', value: '1', target: '≥ 90 %', met: true },
    { label: 'missed row', value: '2', target: '≥ 90 %', met: false },
    { label: 'described row', value: '3', target: 'off the request path' },
    { label: 'plain row', value: '4' },
  ],
  notes: [],
};

describe('bench report targets', () => {
  it('writes the verdict in brackets in the Markdown table, and no brackets without one', () => {
    const lines = renderSectionMarkdown(section).split('\n');
    expect(lines).toContain('| met row | 1 |  |  | ≥ 90 % (met) |');
    expect(lines).toContain('| missed row | 2 |  |  | ≥ 90 % (MISSED) |');
    expect(lines).toContain('| described row | 3 |  |  | off the request path |');
    expect(lines).toContain('| plain row | 4 |  |  |  |');
  });

  it('says the same on the console', () => {
    const text = renderSectionText(section);
    expect(text).toContain('met row: 1 | target ≥ 90 % (met)');
    expect(text).toContain('missed row: 2 | target ≥ 90 % (MISSED)');
    expect(text).toMatch(/described row: 3 \| target off the request path$/m);
    expect(text).toMatch(/plain row: 4$/m);
  });
});
