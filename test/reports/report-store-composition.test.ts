// The composition opens the reporters' votes beside the lists, with the REPORT_* settings, and
// closes them with the rest: without Redis the votes are in reports.jsonl in the lists file's folder.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testNumberingPlan } from '../../harness/servers.js';
import { loadConfig } from '../../src/config/config.js';
import { createServiceDependencies, type ServiceDependencies } from '../../src/composition.js';

let deps: ServiceDependencies | undefined;
afterEach(async () => {
  await deps?.close();
  deps = undefined;
});

describe('the report store in the composition', () => {
  it('keeps the votes in reports.jsonl beside the lists file, with REPORT_MIN_REPORTERS applied', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phone-rep-reports-composition-'));
    const config = loadConfig({
      HASH_SECRET: 'test-secret-0123456789',
      LISTS_FILE: join(dir, 'lists.csv'),
      REPORT_MIN_REPORTERS: '1',
    });
    deps = await createServiceDependencies(config, undefined, { numberingPlan: testNumberingPlan() });
    expect(deps.reports.kind).toBe('file');
    expect(deps.reports.location).toBe(join(dir, 'reports.jsonl'));
    const at = Date.now();
    expect(await deps.reports.record({ e164: '+33612345678', tokenId: 'tok_0123456789', rating: 'fraud', at })).toEqual(
      {
        ok: true,
        replaced: false,
      },
    );
    expect(deps.reports.evidence('+33612345678', at)?.verdict).toBe('spam');
    expect(existsSync(join(dir, 'reports.jsonl'))).toBe(true);
    expect(readFileSync(join(dir, 'reports.jsonl'), 'utf8')).toContain('tok_0123456789');
  });
});
