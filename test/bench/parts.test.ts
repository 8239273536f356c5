// `npm run bench -- reports` selects the reports part (bench/reports.ts, docs/benchmarks.md): the
// runner knows it by that name, and its file exports the function the runner calls. Importing
// the runner runs no bench (it runs only as the script).
import { describe, expect, it } from 'vitest';
import { PARTS, selectParts } from '../../bench/run.js';

describe('bench parts', () => {
  it('registers the reports part, selected alone by its name', () => {
    const selected = selectParts(['reports']);
    expect(selected.map((part) => part.name)).toEqual(['reports']);
    expect(selected[0]?.title).toBe('Reports: CPU per report; cached /verdict with 0 vs 100,000 reported numbers');
    expect(PARTS.map((part) => part.name)).toContain('reports');
  });

  it('finds benchReports() in bench/reports.ts, the export the runner imports', async () => {
    const module = (await import('../../bench/reports.js')) as Record<string, unknown>;
    expect(typeof module.benchReports).toBe('function');
  });

  it('refuses an unknown part, naming every part', () => {
    expect(() => selectParts(['no-such-part'])).toThrow(/the parts are: .*lists, feed, reports/);
  });
});
