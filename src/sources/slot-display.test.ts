// The slot display table (src/domain/slot-display.ts) held to the upstream descriptions and to
// every place that shows a slot: a fourth source fails here (or does not compile) until each of
// them handles it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { emptySourceData, SOURCE_SLOTS } from '../domain/report.js';
import { SLOT_DISPLAY } from '../domain/slot-display.js';
import { CATALOGUES, LANGUAGES } from '../domain/wording/catalogue.js';
import { BATCH_COLUMNS } from '../cli/batch.js';
import { PAGE_SLOTS } from '../http/plugins/web-page.js';
import { UPSTREAMS_BY_SLOT } from './upstreams.js';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('the slot display table', () => {
  it('has one entry per slot, naming the upstream that fills it', () => {
    expect(Object.keys(SLOT_DISPLAY).sort()).toEqual([...SOURCE_SLOTS].sort());
    for (const slot of SOURCE_SLOTS) expect(SLOT_DISPLAY[slot].upstream).toBe(UPSTREAMS_BY_SLOT[slot].name);
  });

  it('shows every data field of a slot: each is a figure, or the comment list', () => {
    for (const slot of SOURCE_SLOTS) {
      const shown = [...SLOT_DISPLAY[slot].figures.map((figure) => figure.field as string), 'commentList'];
      expect(shown.sort()).toEqual(Object.keys(emptySourceData()[slot]).sort());
    }
  });

  it('has its words in every catalogue', () => {
    for (const language of LANGUAGES) {
      const catalogue: Readonly<Record<string, string>> = CATALOGUES[language];
      for (const slot of SOURCE_SLOTS) {
        expect(catalogue[SLOT_DISPLAY[slot].title]).toBeTruthy();
        for (const figure of SLOT_DISPLAY[slot].figures) {
          expect(catalogue[figure.unit === 'count' ? `${figure.label}#other` : figure.label]).toBeTruthy();
        }
      }
    }
  });

  it('is what the page is served and what the batch columns are made of, slot by slot', () => {
    expect(PAGE_SLOTS.map((entry) => entry.slot)).toEqual([...SOURCE_SLOTS]);
    for (const slot of SOURCE_SLOTS) {
      expect(BATCH_COLUMNS).toContain(`${slot}_status`);
      for (const figure of SLOT_DISPLAY[slot].figures)
        if (figure.column !== undefined) expect(BATCH_COLUMNS).toContain(`${slot}_${figure.column}`);
    }
  });

  it('is the only list of slots in the page script and the CLI: none of them names a slot of its own', () => {
    const files = [
      'web/static/app.js',
      'cli/api-answer.ts',
      'cli/phone-api.ts',
      'cli/batch.ts',
      'cli/format-report.ts',
      'cli/main.ts',
      'cli/commands/lookup.ts',
      'cli/commands/batch.ts',
    ];
    for (const file of files) {
      const text = read(file);
      // A slot's name as a string (but `scoreSource === 'primary'`, the score's source), a
      // catalogue key of a slot, or a slot's member read by name.
      const found =
        text.match(
          /(?<!scoreSource === )['"](?:primary|community|signals)['"]|['"]slot\.|\.sources\.(?:primary|community|signals)\b/g,
        ) ?? [];
      expect({ file, found }).toEqual({ file, found: [] });
    }
  });
});
