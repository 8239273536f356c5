// A probe for hand exploration of the server's memory (bench/memory-http.ts with
// MEMORY_PROBE=./bench/support/heap-probe.mjs): on SIGUSR2 it appends V8's heap spaces to
// /tmp/heap-probe-<pid>.txt before and after a full collection and, with PROBE_SNAPSHOT=1, writes
// a heap snapshot next to it (set MEMORY_PROBE_WAIT_MS so the bench waits for it, e.g. 90000).
// Loaded with --import and --expose-gc into the server process; never part of the service.
import process from 'node:process';
import v8 from 'node:v8';
import { appendFileSync } from 'node:fs';
const out = `/tmp/heap-probe-${process.pid}.txt`;
function dump(label) {
  const m = process.memoryUsage();
  const lines = [
    `== ${label} rss=${(m.rss / 1048576).toFixed(1)} heapTotal=${(m.heapTotal / 1048576).toFixed(1)} heapUsed=${(m.heapUsed / 1048576).toFixed(1)} external=${(m.external / 1048576).toFixed(1)} ab=${(m.arrayBuffers / 1048576).toFixed(1)}`,
  ];
  for (const s of v8.getHeapSpaceStatistics())
    lines.push(
      `  ${s.space_name} size=${(s.space_size / 1048576).toFixed(1)} used=${(s.space_used_size / 1048576).toFixed(1)} avail=${(s.space_available_size / 1048576).toFixed(1)} phys=${(s.physical_space_size / 1048576).toFixed(1)}`,
    );
  const h = v8.getHeapStatistics();
  lines.push(
    `  total_physical=${(h.total_physical_size / 1048576).toFixed(1)} malloced=${(h.malloced_memory / 1048576).toFixed(1)} peak_malloced=${(h.peak_malloced_memory / 1048576).toFixed(1)} external=${(h.external_memory / 1048576).toFixed(1)}`,
  );
  appendFileSync(out, lines.join('\n') + '\n');
}
process.on('SIGUSR2', () => {
  dump('before gc');
  globalThis.gc?.();
  dump('after gc');
  if (process.env.PROBE_SNAPSHOT === '1') {
    const f = v8.writeHeapSnapshot(`/tmp/heap-probe-${process.pid}.heapsnapshot`);
    appendFileSync(out, `snapshot ${f}\n`);
  }
  dump('after snapshot');
});
