// `phone-rep canary [number…]`: fetch the real upstream pages and check the markers the parsers
// rely on. 0 healthy, 1 not.
import { loadConfig } from '../../config/config.js';
import { defineCommand } from '../command.js';

export const canaryCommand = defineCommand({
  name: 'canary',
  usage: 'phone-rep canary [number…]',
  summary: ["check the real upstream pages' markers"],
  async run({ positionals }, { io, env }) {
    const config = loadConfig(env);
    const { runCanary } = await import('../../sources/canary.js');
    const healthy = await runCanary({ config, numbers: positionals, out: io.out });
    return healthy ? 0 : 1;
  },
});
