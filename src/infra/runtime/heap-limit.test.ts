import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_LIMIT_BASE_MB, heapLimitGiven, heapLimitMb, semiSpaceMb, serverExecArgv } from './heap-limit.js';

const MIB = 1024 * 1024;

/** V8's heap_size_limit of a Node process started with these arguments. */
function heapSizeLimit(nodeArgs: string[]): number {
  const run = spawnSync(
    process.execPath,
    [...nodeArgs, '-e', 'process.stdout.write(String(require("node:v8").getHeapStatistics().heap_size_limit))'],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  if (run.status !== 0) throw new Error(`node exited ${run.status}: ${run.stderr}`);
  return Number(run.stdout);
}

describe('the heap limit sized from CACHE_MAX_MB', () => {
  it('leaves the fixed heap plus one and a half times the process share of the cap', () => {
    expect(heapLimitMb(0)).toBe(HEAP_LIMIT_BASE_MB);
    expect(heapLimitMb(32)).toBe(176);
    expect(heapLimitMb(256)).toBe(512);
    // WORKERS=3 with CACHE_MAX_MB=64: each worker's share is 21.33 MiB.
    expect(heapLimitMb(64 / 3)).toBe(160);
  });

  it('adds the limit to the Node arguments unless the operator gave one, on the command line or in NODE_OPTIONS', () => {
    expect(serverExecArgv(['--enable-source-maps'], undefined, 256)).toEqual([
      '--enable-source-maps',
      '--max-old-space-size=512',
      '--max-semi-space-size=16',
    ]);
    expect(serverExecArgv(['--max-old-space-size=900'], undefined, 256)).toEqual([
      '--max-old-space-size=900',
      '--max-semi-space-size=16',
    ]);
    expect(serverExecArgv([], '--trace-warnings --max-old-space-size=900 --max-semi-space-size=32', 256)).toEqual([]);
    expect(heapLimitGiven(['--max_old_space_size=900'], undefined)).toBe(true);
    expect(heapLimitGiven(['--max-semi-space-size=16'], '--trace-warnings')).toBe(false);
  });

  it('bounds the young generation, to a quarter of the share at small shares, unless the operator sized it', () => {
    expect(semiSpaceMb(256)).toBe(16);
    expect(semiSpaceMb(64)).toBe(16);
    expect(semiSpaceMb(32)).toBe(8);
    expect(semiSpaceMb(64 / 3)).toBe(5);
    expect(semiSpaceMb(8)).toBe(4);
    expect(serverExecArgv(['--enable-source-maps'], undefined, 32)).toEqual([
      '--enable-source-maps',
      '--max-old-space-size=176',
      '--max-semi-space-size=8',
    ]);
    expect(serverExecArgv(['--max_semi_space_size=2'], undefined, 32)).toEqual([
      '--max_semi_space_size=2',
      '--max-old-space-size=176',
    ]);
    expect(serverExecArgv([], '--max-semi-space-size=32', 32)).toEqual(['--max-old-space-size=176']);
  });

  it('is taken by V8 when a process starts with it: the old generation is capped there', () => {
    const limited = heapSizeLimit(serverExecArgv([], undefined, 32));
    // heap_size_limit is the old generation's limit plus the young generation's.
    expect(limited).toBeGreaterThanOrEqual(176 * MIB);
    expect(limited).toBeLessThan(176 * MIB + 64 * MIB);
    // The flag, not the machine, set it: another share gives another limit.
    expect(heapSizeLimit(serverExecArgv([], undefined, 256)) - limited).toBe((512 - 176) * MIB + 3 * (16 - 8) * MIB);
  });

  it('the semi-space size is taken by V8 too: the young generation (three semi-spaces in heap_size_limit) shrinks with it', () => {
    const atMost = heapSizeLimit(['--max-old-space-size=176', '--max-semi-space-size=16']);
    expect(atMost - heapSizeLimit(serverExecArgv([], undefined, 32))).toBe(3 * (16 - 8) * MIB);
  });

  it("is needed: V8's own semi-space on this Node is larger than the largest one given", () => {
    const youngByDefault = heapSizeLimit(['--max-old-space-size=176']) - 176 * MIB;
    expect(
      youngByDefault,
      `Node ${process.versions.node}: V8's default young generation is no larger than 3 × 16 MiB; the flag may go`,
    ).toBeGreaterThan(3 * 16 * MIB);
  });
});
