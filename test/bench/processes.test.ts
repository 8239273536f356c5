// The hot-path bench's paired measurement reads each server's CPU from /proc/<pid>/stat: the
// fields after the process name, which may itself hold spaces and parentheses.
import { describe, expect, it } from 'vitest';
import { canReadProcessCpu, cpuSecondsOfTree, cpuTicksFromStat } from '../../bench/support/processes.js';

describe('CPU time from /proc', () => {
  it('reads utime + stime (fields 14 and 15) after a process name holding spaces and parentheses', () => {
    const stat =
      '4242 (node (worker) x) S 1 4242 4242 0 -1 4194560 2591 0 0 0 1234 567 0 0 20 0 11 0 1804 1147289600 26032 18446744073709551615 1 1 0 0 0 0 0 4096 134234626 0 0 0 17 0 0 0 0 0 0';
    expect(cpuTicksFromStat(stat)).toBe(1234 + 567);
  });

  it('refuses a line that is not a stat line', () => {
    expect(() => cpuTicksFromStat('no such process')).toThrow(/not a \/proc/);
  });

  it.runIf(canReadProcessCpu())('counts at least the CPU this process has used', () => {
    const own = process.cpuUsage();
    // One clock tick (10 ms at the usual 100 Hz) of rounding, and some slack over it.
    expect(cpuSecondsOfTree(process.pid)).toBeGreaterThanOrEqual((own.user + own.system) / 1e6 - 0.05);
  });
});
