// The slicer's contract: long work lets the event loop through while it runs, a result is the
// same sliced or not, and a failing step fails the run.
import { describe, expect, it } from 'vitest';
import { runToEnd, type Steps } from '../../domain/steps.js';
import { createSlicer, runInSlices } from './event-loop-slices.js';

/** Steps that end only once `turned()` says the event loop has turned: run at once, they would never end. */
function* untilTurned(turned: () => boolean): Steps<number> {
  let steps = 0;
  while (!turned()) {
    steps += 1;
    yield;
  }
  return steps;
}

describe('the event-loop slicer', () => {
  it('lets the loop through while steps run: work that waits for a turn of the loop ends', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    expect(await runInSlices(untilTurned(() => turned))).toBeGreaterThan(0);
  });

  it('lets the loop through while it calls each item: a timer set before runs before the items end', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    const seen: boolean[] = [];
    function* items(): Generator<number> {
      for (let item = 0; !turned; item += 1) yield item;
    }
    await createSlicer().forEach(items(), () => seen.push(turned));
    expect(seen.length).toBeGreaterThan(0);
  });

  it('gives the result the steps give when run at once', async () => {
    function* sum(values: readonly number[]): Steps<number> {
      let total = 0;
      for (const value of values) {
        total += value;
        yield;
      }
      return total;
    }
    const values = Array.from({ length: 10_000 }, (_, at) => at);
    expect(await runInSlices(sum(values))).toBe(runToEnd(sum(values)));
  });

  it('lets the loop through by the turn it is given', async () => {
    let turns = 0;
    let turned = false;
    const slicer = createSlicer(async () => {
      turns += 1;
      await new Promise<void>((resolve) => setImmediate(resolve));
      turned = true;
    });
    await slicer.run(untilTurned(() => turned));
    expect(turns).toBe(1);
  });

  it('a step that throws rejects the run, and an item that throws rejects forEach', async () => {
    function* failing(): Steps<void> {
      yield;
      throw new Error('bad step');
    }
    await expect(runInSlices(failing())).rejects.toThrow('bad step');
    await expect(
      createSlicer().forEach([1, 2, 3], (item) => {
        if (item === 2) throw new Error('bad item');
      }),
    ).rejects.toThrow('bad item');
  });
});
