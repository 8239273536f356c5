import { describe, expect, it } from 'vitest';
import { oneAtATime } from './one-at-a-time.js';

describe('oneAtATime', () => {
  it('starts each piece only once the one before it has settled, failed ones included', async () => {
    const exclusive = oneAtATime();
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = exclusive(async () => {
      events.push('first start');
      await held;
      events.push('first end');
      throw new Error('first failed');
    });
    const second = exclusive(async () => {
      events.push('second start');
      return 2;
    });
    await Promise.resolve();
    expect(events).toEqual(['first start']);
    release();
    await expect(first).rejects.toThrow('first failed');
    await expect(second).resolves.toBe(2);
    expect(events).toEqual(['first start', 'first end', 'second start']);
  });
});
