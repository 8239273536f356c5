// The atomic write the lists file relies on, given its text whole or in chunks.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomically } from './file-list-store.js';

const dir = mkdtempSync(join(tmpdir(), 'phone-rep-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomically', () => {
  it('writes chunks one after the other, replaces the old file, and leaves no temporary file', async () => {
    const path = join(dir, 'sub', 'lists.csv');
    await writeFileAtomically(path, 'old\n');
    const chunks = ['rule,list\n', '+33162*,block\n', '', `${'+33612345678,allow,Élise\n'.repeat(5000)}`];
    await writeFileAtomically(path, chunks);
    expect(readFileSync(path, 'utf8')).toBe(chunks.join(''));
    expect(readdirSync(join(dir, 'sub'))).toEqual(['lists.csv']);
  });
});
