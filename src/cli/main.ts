// The `phone-rep` command line: a table of subcommands, each an async handler that returns the
// process exit code. Add a command by adding an entry to `commands`.
import { pathToFileURL } from 'node:url';
import { loadConfig, type Config } from '../config/config.js';
import { loadNumberingPlan } from '../domain/numbering/numbering-plan.js';
import { updateArcepData } from '../domain/numbering/update-arcep-data.js';

export type CommandHandler = (args: string[]) => Promise<number>;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
}

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

function readConfig(io: CliIo): Config | undefined {
  try {
    return loadConfig(io.env);
  } catch (error) {
    io.err(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

/** `data update`: refresh the ARCEP snapshot from the configured URLs; `data info`: show what is in use. */
function createDataCommand(io: CliIo): CommandHandler {
  return async (args) => {
    const [action] = args;
    const config = readConfig(io);
    if (!config) return 1;
    if (action === 'update') {
      const result = await updateArcepData({
        dir: config.ARCEP_DATA_DIR,
        urls: { majnum: config.ARCEP_MAJNUM_URL, majrio: config.ARCEP_MAJRIO_URL, identifiants: config.ARCEP_IDENTIFIANTS_URL },
      });
      if (!result.ok) {
        io.err(`ARCEP data not updated, the previous files are kept: ${result.reason}`);
        return 1;
      }
      io.out(
        `ARCEP data updated in ${config.ARCEP_DATA_DIR}: data date ${result.dataDate}, ` +
          `${result.rows.majnum} MAJNUM rows, ${result.rows.majrio} MAJRIO rows, ${result.rows.identifiants} operators`,
      );
      return 0;
    }
    if (action === 'info') {
      try {
        const plan = loadNumberingPlan(config.ARCEP_DATA_DIR, { foreignCarriers: false });
        io.out(`ARCEP data in ${config.ARCEP_DATA_DIR}: data date ${plan.dataDate}, ${plan.blockCount} number blocks (Source : ARCEP)`);
        return 0;
      } catch (error) {
        io.err(error instanceof Error ? error.message : String(error));
        return 1;
      }
    }
    io.err('usage: phone-rep data <update|info>');
    return 2;
  };
}

export function createCommands(io: CliIo = defaultIo): Record<string, CommandHandler> {
  return {
    data: createDataCommand(io),
  };
}

export async function runCli(argv: string[], io: CliIo = defaultIo): Promise<number> {
  const commands = createCommands(io);
  const [name, ...rest] = argv;
  const handler = name === undefined ? undefined : commands[name];
  if (!handler) {
    io.err(`usage: phone-rep <${Object.keys(commands).join('|')}> …`);
    return 2;
  }
  return handler(rest);
}

// Run only when executed directly (tsx src/cli/main.ts …, or the built file), not when imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
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
