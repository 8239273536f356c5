// Entry point for the live canary until the CLI (`phone-rep canary`) wires runCanary itself:
//   npx tsx src/sources/canary-main.ts [number ...]
// Exit code 0 when every upstream answered and every required marker was found, 1 otherwise.
import { loadConfig } from '../config/config.js';
import { runCanary } from './canary.js';

const healthy = await runCanary({
  config: loadConfig(),
  numbers: process.argv.slice(2),
  out: (line) => process.stdout.write(`${line}\n`),
});
process.exitCode = healthy ? 0 : 1;
