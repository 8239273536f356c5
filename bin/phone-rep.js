#!/usr/bin/env node
// The `phone-rep` command: runs the TypeScript CLI (src/cli/main.ts) through tsx's loader, so
// there is no build step, from any working directory.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import(new URL('../src/cli/main.ts', import.meta.url).href);
const code = await runCli(process.argv.slice(2));
// Exit now rather than wait for idle keep-alive sockets or timers of the in-process service.
process.exit(code);
