// Every test process gets a state directory of its own (STATE_DIR), so the lists file a service
// or a CLI run opens by default (LISTS_FILE unset: STATE_DIR/lists.csv) is never the package's
// own, and ARCEP data a test updates never lands in the checkout. Child processes inherit it
// through the environment. Tests that work on a lists file set LISTS_FILE to a path in their own
// temporary directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.STATE_DIR = mkdtempSync(join(tmpdir(), 'phone-rep-state-'));
delete process.env.LISTS_FILE;
delete process.env.ARCEP_DATA_DIR;
