// `npm run docs:config`: writes docs/configuration.md and .env.example from the configuration
// schema. With --check it writes nothing and exits 1 when either file differs from the schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  CONFIGURATION_DOC_PATH,
  ENV_EXAMPLE_PATH,
  renderConfigurationMarkdown,
  renderEnvExample,
} from '../src/config/config-docs.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const check = process.argv.includes('--check');
const outputs: Array<[string, string]> = [
  [CONFIGURATION_DOC_PATH, renderConfigurationMarkdown()],
  [ENV_EXAMPLE_PATH, renderEnvExample()],
];

let stale = 0;
for (const [relative, content] of outputs) {
  const path = `${root}${relative}`;
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === content) continue;
  if (check) {
    stale += 1;
    process.stderr.write(`${relative} is stale: run \`npm run docs:config\`\n`);
  } else {
    writeFileSync(path, content);
    process.stdout.write(`wrote ${relative}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
