// What every `phone-rep` command is made of: its entry in the table (name, usage, summary,
// options, run), the context it runs in, the one usage error, and the one way to read input.
// `runCommand` parses a command's arguments and turns its failures into exit codes, so a
// command's own file holds only what the command does.
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ConfigError } from '../config/config.js';
import type { ServiceOverrides } from '../composition.js';
import { EXIT_CODES } from './api-answer.js';
import { stripControls } from './sanitize.js';

export interface CliIo {
  /** One line of output (the newline is added). */
  out: (line: string) => void;
  /** One line of diagnostics on stderr. */
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  /** Where `-` (standard input) is read from. */
  stdin?: AsyncIterable<Buffer | string>;
  /** Raw stderr writes for the batch progress bar; set only when stderr is a terminal. */
  progress?: (text: string) => void;
  /** In-process runs only: replaces parts of the service (tests inject fake sources here). */
  overrides?: ServiceOverrides;
}

export interface CliContext {
  readonly io: CliIo;
  /** The environment a command's config is read from (`io.env`). */
  readonly env: Record<string, string | undefined>;
}

// The package's own files (the ARCEP snapshot, the state directory) are found from the package's
// folder, never the working directory (config/package-info.ts), so `env` needs no default path.
export function createContext(io: CliIo): CliContext {
  return { io, env: io.env };
}

type StrictParse<O extends ParseArgsOptionsConfig> = {
  args: string[];
  options: O;
  allowPositionals: true;
  strict: true;
};

/** A command's arguments: its options parsed by `parseArgs`, or, without options, every argument as typed. */
export type CommandArgs<O extends ParseArgsOptionsConfig> = Pick<
  ReturnType<typeof parseArgs<StrictParse<O>>>,
  'values' | 'positionals'
>;

export interface Command<O extends ParseArgsOptionsConfig = ParseArgsOptionsConfig> {
  /** The word after `phone-rep`. */
  readonly name: string;
  /** Shown after `usage: ` on a usage mistake, and in the help; lines after the first are indented by 7 to align under it. */
  readonly usage: string;
  /** The help's description of the command, one entry a line. */
  readonly summary: readonly string[];
  /** Parsed strictly before `run` (an unknown option is a usage mistake); without, `run` gets the arguments as typed. */
  readonly options?: O;
  /** The process exit code: 0 done, 2 invalid input, 1 anything else unless the command says otherwise. */
  run(args: CommandArgs<O>, context: CliContext): Promise<number>;
}

/** Infers the option values' types from the literal options of one command. */
export function defineCommand<const O extends ParseArgsOptionsConfig>(command: Command<O>): Command<O> {
  return command;
}

/**
 * The command line or its input is wrong, and nothing was done: exit 2, the message, then the
 * command's usage. `showUsage: false` for a value refused on its own merits (a rule that does
 * not parse), where the usage would not help; an empty message prints the usage alone.
 */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly showUsage: boolean;

  constructor(message = '', options: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = options.showUsage ?? true;
  }
}

/** The whole text of a stream, as the standard input is read. */
export async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: string[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
  return chunks.join('');
}

/** The text of a file, or of the standard input for `-`; a source that cannot be read is a usage mistake. */
export async function readInput(source: string, io: CliIo): Promise<string> {
  if (source === '-') {
    if (io.stdin === undefined) throw new UsageError('no standard input to read');
    return readAll(io.stdin);
  }
  try {
    return await readFile(source, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

export const withoutFinalNewline = (text: string): string => text.replace(/\n$/, '');

function parse<O extends ParseArgsOptionsConfig>(args: string[], options: O): CommandArgs<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Runs one command: its arguments parsed, and usage, config and other mistakes turned into their exit codes. */
export async function runCommand(command: Command, args: string[], context: CliContext): Promise<number> {
  const { io } = context;
  try {
    const parsed = command.options === undefined ? { values: {}, positionals: args } : parse(args, command.options);
    return await command.run(parsed, context);
  } catch (error) {
    if (error instanceof UsageError) {
      if (error.message !== '') io.err(stripControls(error.message));
      if (error.showUsage) io.err(`usage: ${command.usage}`);
      return EXIT_CODES.invalidInput;
    }
    if (error instanceof ConfigError) {
      io.err(error.message);
      return EXIT_CODES.error;
    }
    io.err(stripControls(`phone-rep: ${error instanceof Error ? error.message : String(error)}`));
    return EXIT_CODES.error;
  }
}
