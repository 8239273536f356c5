import { describe, expect, it } from 'vitest';
import { descriptorLimit, effectiveMaxConnections } from './connection-guard.js';

describe('the global connection cap', () => {
  it('stays below the descriptor limit, keeping a reserve for Redis, upstreams and files', () => {
    expect(effectiveMaxConnections(10_000, 1024)).toBe(768);
    expect(effectiveMaxConnections(500, 1024)).toBe(500);
    expect(effectiveMaxConnections(10_000, undefined)).toBe(10_000);
    expect(effectiveMaxConnections(10_000, 100)).toBe(1);
  });

  it('reads this process’s soft descriptor limit on Linux', () => {
    const limit = descriptorLimit();
    if (process.platform === 'linux') expect(limit === undefined || limit > 0).toBe(true);
    if (limit !== undefined) expect(Number.isInteger(limit)).toBe(true);
  });
});
