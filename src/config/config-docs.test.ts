import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONFIGURATION_DOC_PATH,
  ENV_EXAMPLE_PATH,
  renderConfigurationMarkdown,
  renderEnvExample,
} from './config-docs.js';
import { configVariables, loadConfig } from './config.js';

const root = new URL('../../', import.meta.url);
const onDisk = (relative: string): string => readFileSync(new URL(relative, root), 'utf8');

describe('generated configuration docs', () => {
  it(`${CONFIGURATION_DOC_PATH} is what the schema renders (run \`npm run docs:config\` after changing the schema)`, () => {
    expect(onDisk(CONFIGURATION_DOC_PATH), `${CONFIGURATION_DOC_PATH} is stale: run \`npm run docs:config\``).toBe(
      renderConfigurationMarkdown(),
    );
  });

  it(`${ENV_EXAMPLE_PATH} is what the schema renders (run \`npm run docs:config\` after changing the schema)`, () => {
    expect(onDisk(ENV_EXAMPLE_PATH), `${ENV_EXAMPLE_PATH} is stale: run \`npm run docs:config\``).toBe(
      renderEnvExample(),
    );
  });

  it('names every variable of the schema in both files, each with its default', () => {
    const markdown = renderConfigurationMarkdown();
    const env = renderEnvExample();
    for (const variable of configVariables()) {
      expect(markdown).toContain(
        `| \`${variable.name}\` | ${variable.defaultValue === undefined ? 'unset' : `\`${variable.defaultValue}\``} |`,
      );
      expect(env).toMatch(
        new RegExp(`^${variable.name}=${(variable.defaultValue ?? '').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'),
      );
    }
  });

  it('.env.example, loaded as an environment, gives a valid configuration equal to the defaults', () => {
    const env = Object.fromEntries(
      renderEnvExample()
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});
