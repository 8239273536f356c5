import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { heapGrowthFlag, HEAP_GROWING_PERCENT, setHeapGrowthForChurn } from './heap-settings.js';
import { loadConfig } from '../../config/config.js';

describe('heap settings', () => {
  // V8's flags are the process's: the unit workers are shared, so V8's defaults come back.
  afterAll(() => {
    setFlagsFromString('--heap-growing-percent=0');
  });

  it('bound the old generation\'s growth while the caches churn, and give V8 its own back otherwise', () => {
    expect(heapGrowthFlag(true)).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowthFlag(false)).toBe('--heap-growing-percent=0');
  });

  it('are switched at run time without touching the heap limit', () => {
    const limit = getHeapStatistics().heap_size_limit;
    setHeapGrowthForChurn(true);
    setHeapGrowthForChurn(false);
    expect(getHeapStatistics().heap_size_limit).toBe(limit);
  });

  it('are turned off by V8_HEAP_DEFAULTS=true, as the configuration reads it', () => {
    expect(loadConfig({ V8_HEAP_DEFAULTS: 'true' }).V8_HEAP_DEFAULTS).toBe(true);
    expect(loadConfig({}).V8_HEAP_DEFAULTS).toBe(false);
  });
});
