// docs/configuration.md and .env.example, rendered from the configuration schema so that they
// cannot drift from it. `npm run docs:config` writes them; a test fails when either is stale.
import { configVariables } from './config.js';

export const CONFIGURATION_DOC_PATH = 'docs/configuration.md';
export const ENV_EXAMPLE_PATH = '.env.example';

/** How describeSchema words a pattern; the table shows the pattern itself as code. */
const PATTERN_LEAD = 'a value matching ';

function tableCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderConfigurationMarkdown(): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from src/config/config.ts by `npm run docs:config`: edit the schema, not this file. -->',
    '',
    'Every setting is an environment variable, and every one is optional. The service reads them once',
    'at start-up; an invalid value stops the start with a message naming the variable and what it',
    'takes. An empty value (`NAME=`) counts as unset. `.env.example` lists the same variables with',
    'their defaults.',
    '',
    '| Variable | Default | Accepts | Meaning |',
    '| --- | --- | --- | --- |',
  ];
  for (const variable of configVariables()) {
    const defaultText = variable.defaultValue === undefined ? 'unset' : `\`${variable.defaultValue}\``;
    const accepts = variable.accepts.startsWith(PATTERN_LEAD)
      ? `matches \`${variable.accepts.slice(PATTERN_LEAD.length)}\``
      : variable.accepts;
    lines.push(
      `| \`${variable.name}\` | ${tableCell(defaultText)} | ${tableCell(accepts)} | ${tableCell(variable.description)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Words of `text` joined into `# `-comment lines of at most `width` characters. */
function commentLines(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (line.length + 1 + word.length > width && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  if (line !== '#') lines.push(line);
  return lines;
}

export function renderEnvExample(): string {
  const lines = [
    '# phone-reputation configuration. Generated from src/config/config.ts by `npm run docs:config`.',
    '# Every variable is optional; the value shown is the default (empty = unset).',
    '# Copy to .env beside package.json: npm start, phone-rep and compose read it (the environment set wins).',
  ];
  for (const variable of configVariables()) {
    lines.push('', ...commentLines(variable.description), `${variable.name}=${variable.defaultValue ?? ''}`);
  }
  return `${lines.join('\n')}\n`;
}
