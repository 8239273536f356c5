// The lint half of the dependency rule, run on synthetic files: each forbidden import fails,
// each allowed one passes. Only the rule's own config blocks are applied (no type information
// needed), so this stays a fast in-process test.
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONFIG_URL = pathToFileURL(`${ROOT}eslint.config.js`).href;

async function ruleViolations(filePath: string, specifier: string): Promise<string[]> {
  const { dependencyRuleConfigs } = (await import(CONFIG_URL)) as { dependencyRuleConfigs: Linter.Config[] };
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...dependencyRuleConfigs],
  });
  const [result] = await eslint.lintText(`import { x } from '${specifier}';\nexport const y = x;\n`, {
    filePath: `${ROOT}${filePath}`,
  });
  return (result?.messages ?? []).map((message) => message.ruleId ?? message.message);
}

describe('lint enforces the dependency rule', () => {
  it.each([
    ['src/domain/lookup/engine.ts', '../../infra/hash.js'],
    ['src/domain/lookup/engine.ts', '../../config/config.js'],
    ['src/domain/report.ts', '../sources/upstreams.js'],
    ['src/domain/ports/source.ts', '../../http/schemas/phone.js'],
    ['src/domain/ports/source.ts', '../../composition.js'],
    ['src/infra/hash.ts', '../http/schemas/phone.js'],
    ['src/infra/cache/memory-cache.ts', '../../sources/source.js'],
    ['src/infra/cache/memory-cache.ts', '../../config/config.js'],
    ['src/sources/tellows/tellows-source.ts', '../../http/errors.js'],
    ['src/sources/canary.ts', '../cli/main.js'],
    ['src/http/routes/phone-routes.ts', '../../sources/upstreams.js'],
    ['src/config/config.ts', '../domain/report.js'],
    ['src/cli/main.ts', '../http/schemas/phone.js'],
    ['src/composition.ts', './cli/main.js'],
  ])('%s may not import %s', async (file, specifier) => {
    expect(await ruleViolations(file, specifier)).toEqual(['no-restricted-imports']);
  });

  it.each([
    ['src/domain/lookup/engine.ts', '../ports/source.js'],
    ['src/domain/lookup/engine.ts', '../report.js'],
    ['src/infra/cache/memory-cache.ts', '../../domain/ports/source-cache.js'],
    ['src/infra/metrics/instrument.ts', '../http/types.js'],
    ['src/sources/tellows/tellows-source.ts', '../../infra/http/types.js'],
    ['src/sources/common/wiring.ts', '../../config/config.js'],
    ['src/http/app-routes.ts', '../infra/metrics/service-metrics.js'],
    ['src/cli/main.ts', '../composition.js'],
    ['src/composition.ts', './infra/hash.js'],
    ['src/domain/lookup/engine.test.ts', '../../infra/hash.js'],
  ])('%s may import %s', async (file, specifier) => {
    expect(await ruleViolations(file, specifier)).toEqual([]);
  });
});
