// Every test process gets a state directory of its own, so the lists file a service or a CLI
// run opens by default (LISTS_FILE unset: $XDG_STATE_HOME/phone-reputation/lists.csv) is never
// the user's real one. Child processes inherit it through the environment. Tests that work on
// a lists file set LISTS_FILE to a path in their own temporary directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.XDG_STATE_HOME = mkdtempSync(join(tmpdir(), 'phone-rep-state-'));
delete process.env.LISTS_FILE;
