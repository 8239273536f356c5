// The lists file as Redis' mirror: the state line it starts with, a write that never puts an
// older state over a newer one, and a lock left behind by this very process (a container
// restarted after SIGKILL has the same pid) taken over at once.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPhoneNumberParser } from '../../domain/numbering/parse-phone-number.js';
import { loadNumberingPlan } from '../arcep/load-numbering-plan.js';
import { parseMirrorHeader, readMirror, readMirrorVersion, writeMirror } from './lists-file-mirror.js';

const context = {
  parsePhoneNumber: createPhoneNumberParser(loadNumberingPlan('data/arcep'), 'FR'),
  defaultRegion: 'FR',
};
const rule = (spelling: string, list: 'allow' | 'block') => ({
  rule: spelling,
  list,
  createdAt: '2026-01-01T00:00:00.000Z',
});
const fileIn = (): string => join(mkdtempSync(join(tmpdir(), 'phone-rep-mirror-')), 'lists.csv');

describe('the lists file as mirror of Redis', () => {
  it('names the state it holds on its first line, and is version 0 without that line', () => {
    expect(
      parseMirrorHeader('# phone-reputation lists mirror: version=42 stream=1700000000000-3\nrule,list\n'),
    ).toEqual({ version: 42, streamId: '1700000000000-3' });
    expect(parseMirrorHeader('rule,list,label,note,expiresAt,createdAt\n')).toEqual({ version: 0, streamId: '0-0' });
    expect(parseMirrorHeader('# a comment of the operator\n')).toEqual({ version: 0, streamId: '0-0' });
  });

  it('is written with its state and read back; an older state never replaces a newer one', async () => {
    const path = fileIn();
    expect(
      await writeMirror(path, {
        version: 5,
        streamId: '10-0',
        rules: [rule('+33612000001', 'allow'), rule('+33164*', 'block')],
      }),
    ).toBe(5);
    expect(await writeMirror(path, { version: 4, streamId: '9-0', rules: [] })).toBe(5);
    expect(await readMirrorVersion(path)).toBe(5);
    const read = await readMirror(path, context);
    expect(read.version).toBe(5);
    expect(read.streamId).toBe('10-0');
    expect(read.rules.map((r) => [r.rule, r.list])).toEqual([
      ['+33612000001', 'allow'],
      ['+33164*', 'block'],
    ]);
    expect(await writeMirror(path, { version: 6, streamId: '11-0', rules: [] })).toBe(6);
    expect((await readMirror(path, context)).rules).toEqual([]);
  });

  it('reads an absent file as no rule at version 0', async () => {
    expect(await readMirror(join(fileIn(), 'nowhere.csv'), context)).toEqual({
      version: 0,
      streamId: '0-0',
      rules: [],
    });
  });

  it("takes over at once a lock holding its own host and pid, left by an earlier life of this process (the file store's lock, in its earlier pid-only format)", async () => {
    const path = fileIn();
    writeFileSync(`${path}.lock`, `${process.pid}\n`);
    const startedAt = performance.now();
    expect(await writeMirror(path, { version: 1, streamId: '1-0', rules: [rule('+33163*', 'block')] })).toBe(1);
    // The stale-lock wait is 10 s; a takeover is at once. The bound only tells the two apart.
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    expect(readFileSync(path, 'utf8')).toContain('+33163*,block');
  });
});
