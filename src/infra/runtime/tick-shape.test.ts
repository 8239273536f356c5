import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { heldNextTickEntry, holdNextTickShape } from './tick-shape.js';

const MODULE_URL = new URL('./tick-shape.ts', import.meta.url).href;

// Run in a child process started with V8's test switches (`%HaveSameMap`, `gc`): the service
// itself never starts with them.
const SAME_SHAPE_AFTER_FULL_COLLECTIONS = `
import { executionAsyncResource } from 'node:async_hooks';
import { heldNextTickEntry, holdNextTickShape } from ${JSON.stringify(MODULE_URL)};
const sameShape = new Function('a', 'b', 'return %HaveSameMap(a, b)');
await holdNextTickShape();
const held = heldNextTickEntry();
// Full collections between turns of the event loop, when no other nextTick entry is alive.
for (let turn = 0; turn < 6; turn += 1) {
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
}
const withoutArguments = await new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())));
const withArguments = await new Promise((resolve) => process.nextTick((value) => resolve(value), 'x')).then(() => new Promise((resolve) => process.nextTick((a, b) => resolve(executionAsyncResource()), 1, 2)));
// The control: an object of another shape must compare unlike, or the check proves nothing.
process.stdout.write(JSON.stringify({ withoutArguments: sameShape(held, withoutArguments), withArguments: sameShape(held, withArguments), otherShape: sameShape(held, { callback: null, args: undefined }), node: process.versions.node, v8: process.versions.v8 }));
`;

describe('the nextTick entry held for its shape', () => {
  it("is one of Node's nextTick entries, held once", async () => {
    await holdNextTickShape();
    const entry = heldNextTickEntry();
    // Node's entry: the callback and its arguments, and symbol keys: its two async ids, and on
    // Node 24 the async context frame. Only the key names are read, never the values.
    expect(
      entry,
      `Node ${process.versions.node}: executionAsyncResource() in a nextTick callback is no longer its entry`,
    ).toBeTypeOf('object');
    const keys = Reflect.ownKeys(entry ?? {});
    expect(
      keys.filter((key) => typeof key === 'string'),
      `Node ${process.versions.node} changed its nextTick entries`,
    ).toEqual(['callback', 'args']);
    expect(keys.filter((key) => typeof key === 'symbol').map((key) => key.description)).toEqual(
      expect.arrayContaining(['async_id_symbol', 'trigger_async_id_symbol']),
    );
    await holdNextTickShape();
    expect(heldNextTickEntry()).toBe(entry);
  });

  it('shares its shape with the entries made after full collections, so holding it keeps theirs alive', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--allow-natives-syntax',
        '--expose-gc',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        SAME_SHAPE_AFTER_FULL_COLLECTIONS,
      ],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as {
      withoutArguments: boolean;
      withArguments: boolean;
      otherShape: boolean;
      node: string;
      v8: string;
    };
    const where = `Node ${result.node}, V8 ${result.v8}`;
    expect(result.otherShape, `${where}: %HaveSameMap no longer tells shapes apart`).toBe(false);
    expect(result.withoutArguments, `${where}: later nextTick entries have another shape than the held one`).toBe(true);
    expect(
      result.withArguments,
      `${where}: later nextTick entries with arguments have another shape than the held one`,
    ).toBe(true);
  });
});
