#!/usr/bin/env node
// The `phone-rep` command: runs the compiled CLI (dist/cli/main.js, made by `npm run build`),
// from any working directory. No TypeScript loader at run time.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    `phone-rep: ${fileURLToPath(entry)} is missing: run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))} first\n`,
  );
  process.exit(2);
}
const { runCli } = await import(entry.href);
const code = await runCli(process.argv.slice(2));
// Exit now rather than wait for idle keep-alive sockets or timers of the in-process service.
process.exit(code);
