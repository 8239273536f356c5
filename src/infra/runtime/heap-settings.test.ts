import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { applyHeapSettings, HEAP_FLAGS } from './heap-settings.js';
import { loadConfig } from '../../config/config.js';

describe('heap settings', () => {
  // V8's flags are the process's: the unit workers are shared, so V8's defaults come back.
  afterAll(() => {
    setFlagsFromString('--heap-growing-percent=0');
  });

  it('are left at V8 defaults when V8_HEAP_DEFAULTS is true, as the configuration reads it', () => {
    expect(applyHeapSettings({ V8_HEAP_DEFAULTS: 'true' })).toEqual([]);
    expect(loadConfig({ V8_HEAP_DEFAULTS: 'true' }).V8_HEAP_DEFAULTS).toBe(true);
  });

  it('apply the growth settings otherwise, without touching the heap limit', () => {
    const limit = getHeapStatistics().heap_size_limit;
    expect(applyHeapSettings({})).toEqual(HEAP_FLAGS);
    expect(applyHeapSettings({ V8_HEAP_DEFAULTS: 'false' })).toEqual(HEAP_FLAGS);
    expect(getHeapStatistics().heap_size_limit).toBe(limit);
  });
});
