// The `phone-rep` command line: the table of commands (one file each under commands/, built on
// command.ts) and the dispatch to them. Add a command by adding its file and its entry here.
// Exit codes: 0 found / done, 2 invalid input (bad number, bad usage), 3 every upstream failed,
// 1 anything else.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadPackageEnvFile, packageVersion } from '../config/package-info.js';
import { nodeFloorProblem } from '../infra/runtime/node-floor.js';
import { createContext, runCommand, type CliIo, type Command } from './command.js';
import { backupCommand, restoreCommand } from './commands/backup.js';
import { batchCommand } from './commands/batch.js';
import { canaryCommand } from './commands/canary.js';
import { dataCommand } from './commands/data.js';
import { infoCommand } from './commands/info.js';
import { listCommand } from './commands/list.js';
import { lookupCommand } from './commands/lookup.js';
import { serveCommand } from './commands/serve.js';
import { tokenCommand } from './commands/token.js';
import { processIo, processOutputWritten } from './process-io.js';

export type { CliIo } from './command.js';

/** Every command, in the order the help shows them. */
export const COMMANDS: readonly Command[] = [
  lookupCommand,
  infoCommand,
  batchCommand,
  serveCommand,
  canaryCommand,
  dataCommand,
  listCommand,
  tokenCommand,
  backupCommand,
  restoreCommand,
];

/** Where the help's descriptions start. */
const HELP_COLUMN = 53;

function helpOf(command: Command): string[] {
  const usage = command.usage.split('\n').map((line) => `  ${line.trimStart()}`);
  const [first, ...rest] = command.summary;
  const summaryLine = (text: string): string => `${' '.repeat(HELP_COLUMN)}${text}`;
  // A one-line usage short enough takes the first line of its description beside it.
  if (usage.length === 1 && usage[0] !== undefined && first !== undefined && usage[0].length < HELP_COLUMN - 1) {
    return [`${usage[0].padEnd(HELP_COLUMN)}${first}`, ...rest.map(summaryLine)];
  }
  return [...usage, ...command.summary.map(summaryLine)];
}

const HELP = `Usage:
${COMMANDS.flatMap(helpOf).join('\n')}

lookup and batch run in-process by default; --url sends the requests to a running server instead.
When every source fails, lookup still prints the number's facts and batch still fills its facts columns.
Exit codes: 0 found, 2 invalid input, 3 every upstream failed, 1 other errors.
phone-rep --version prints the version.`;

/**
 * Runs the command line; with the process's own output (no `io` given), resolves only once all
 * of it is written, so the caller may exit at once: 1 (or the command's own failure code) when
 * a write failed, as when the reader of a pipe left before the end.
 */
export async function runCli(argv: string[], io?: CliIo): Promise<number> {
  if (io !== undefined) return runWith(argv, io);
  // As a process, the package's `.env` too (the environment set wins), as `npm start` reads it,
  // so the CLI and the server agree on STATE_DIR, LISTS_FILE and REDIS_URL.
  loadPackageEnvFile();
  const code = await runWith(argv, processIo);
  const failed = await processOutputWritten();
  if (failed === undefined) return code;
  // stderr may be the stream that failed: the message is best effort.
  process.stderr.write(
    `phone-rep: the output could not be written whole (${failed.code ?? failed.message})\n`,
    () => undefined,
  );
  return code === 0 ? 1 : code;
}

async function runWith(argv: string[], io: CliIo): Promise<number> {
  const tooOld = nodeFloorProblem();
  if (tooOld !== undefined) {
    io.err(tooOld);
    return 2;
  }
  const [name, ...rest] = argv;
  // `help` and `--version` are answered here, not by the table: they describe the whole command.
  if (name === 'help' || name === '--help' || name === '-h') {
    io.out(HELP);
    return 0;
  }
  if (name === '--version' || name === '-V') {
    io.out(`phone-rep ${packageVersion()}`);
    return 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    io.err(`usage: phone-rep <${COMMANDS.map((candidate) => candidate.name).join('|')}> …  (phone-rep help for more)`);
    return 2;
  }
  return runCommand(command, rest, createContext(io));
}

// Run only when executed directly (tsx src/cli/main.ts …, or the built file), not when imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
