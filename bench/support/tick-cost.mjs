// What V8's slow nextTick state costs (src/infra/runtime/tick-shape.ts, docs/adr/0009): the CPU
// time of one `process.nextTick` (queued and run) after full collections between turns of the
// event loop, in a process that holds one entry (as the server does) or not. By hand, each mode
// in fresh processes, several times (without the hold a process falls into the slow state most
// of the time, not always):
//   node_modules/.bin/node --expose-gc bench/support/tick-cost.mjs hold|nohold
// With `count`, instead, it is a probe that counts the nextTick entries a server makes (loaded
// with --import into the built server; SIGUSR2 writes the count to /tmp/tick-count-<pid>.txt).
import { createHook, executionAsyncResource } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { setImmediate } from 'node:timers';

const mode = process.argv[2];
if (process.argv[1]?.endsWith('tick-cost.mjs') && (mode === 'hold' || mode === 'nohold')) {
  let held;
  if (mode === 'hold') {
    await new Promise((resolve) => process.nextTick(() => resolve((held = executionAsyncResource()))));
  }
  const noop = () => {};
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const measure = async (rounds) => {
    let cpu = 0;
    for (let round = 0; round < rounds; round += 1) {
      const before = process.cpuUsage();
      for (let call = 0; call < 1000; call += 1) process.nextTick(noop, call);
      await turn();
      const spent = process.cpuUsage(before);
      cpu += spent.user + spent.system;
    }
    return (cpu * 1000) / (rounds * 1000);
  };
  await measure(300);
  // Full collections between turns, when no entry is alive: what frees the entries' shape.
  for (let collection = 0; collection < 6; collection += 1) {
    await turn();
    globalThis.gc();
  }
  await measure(300);
  const samples = [];
  for (let round = 0; round < 7; round += 1) samples.push(await measure(1000));
  samples.sort((a, b) => a - b);
  const figure = { node: process.version, mode, held: held !== undefined, nsPerNextTick: Math.round(samples[3]) };
  process.stdout.write(`${JSON.stringify(figure)}\n`);
} else {
  let ticks = 0;
  createHook({ init: (id, type) => void (type === 'TickObject' && (ticks += 1)) }).enable();
  process.on('SIGUSR2', () => writeFileSync(`/tmp/tick-count-${process.pid}.txt`, String(ticks)));
}
