// The `phone-rep` command line: a table of subcommands, each an async handler that returns the
// process exit code. Add a command by adding an entry to `createCommands`.
// Exit codes: 0 found / done, 2 invalid input (bad number, bad usage), 3 every upstream failed,
// 1 anything else.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import type { ServiceOverrides } from '../composition.js';
import { loadNumberingPlan } from '../infra/arcep/load-numbering-plan.js';
import { updateArcepData } from '../infra/arcep/update-arcep-data.js';
import { createPhoneNumberParser } from '../domain/numbering/parse-phone-number.js';
import { SOURCE_SLOTS } from '../domain/report.js';
import { EXIT_CODES, exitCodeForStatus, readFailureReasons, readProblemTitle, readReportBody } from './api-answer.js';
import { createPacer, csvHeader, deduplicate, formatRow, readBatchLines, renderProgress, runBatch, type BatchRow } from './batch.js';
import { factsOfParsedNumber, formatFacts } from './facts.js';
import { describeSourceStatus, formatReportSummary, plural, slotTitle } from './format-report.js';
import { createInProcessApi, createRemoteApi, type PhoneApi } from './phone-api.js';
import { checkReportAnswer } from './answer-check.js';
import { sanitizeForTerminal, stripControls, terminalSafeJson } from './sanitize.js';
import { createListCommand, LIST_USAGE } from './list-command.js';
import { nodeFloorProblem } from '../infra/runtime/node-floor.js';

export type CommandHandler = (args: string[]) => Promise<number>;

export interface CliIo {
  /** One line of output (the newline is added). */
  out: (line: string) => void;
  /** One line of diagnostics on stderr. */
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  /** Where `batch -` reads from. */
  stdin?: AsyncIterable<Buffer | string>;
  /** Raw stderr writes for the batch progress bar; set only when stderr is a terminal. */
  progress?: (text: string) => void;
  /** In-process runs only: replaces parts of the service (tests inject fake sources here). */
  overrides?: ServiceOverrides;
}

/**
 * The process's own output, counted until written: stdout and stderr to a pipe are written
 * asynchronously, and `process.exit` drops what is still queued (an export to a slow reader was
 * cut short, exit 0). `outputWritten` resolves once every write so far has reached the OS, with
 * the first write error (EPIPE: the reader left) if any.
 */
const output = (() => {
  let pending = 0;
  let failed: NodeJS.ErrnoException | undefined;
  let waiters: Array<() => void> = [];
  const listening = new WeakSet<NodeJS.WriteStream>();
  const settle = (): void => {
    if (pending > 0) return;
    const done = waiters;
    waiters = [];
    for (const waiter of done) waiter();
  };
  return {
    write(stream: NodeJS.WriteStream, text: string): void {
      if (!listening.has(stream)) {
        listening.add(stream);
        // A reader that left (EPIPE) is a failed write, reported by the exit code, not a crash.
        stream.on('error', (error: Error) => {
          failed ??= error;
        });
      }
      if (failed?.code === 'EPIPE') return;
      pending += 1;
      stream.write(text, (error) => {
        if (error) failed ??= error;
        pending -= 1;
        settle();
      });
    },
    written(): Promise<Error | undefined> {
      return new Promise((resolve) => {
        waiters.push(() => resolve(failed));
        settle();
      });
    },
  };
})();

const defaultIo: CliIo = {
  out: (line) => output.write(process.stdout, `${line}\n`),
  err: (line) => output.write(process.stderr, `${line}\n`),
  env: process.env,
  stdin: process.stdin,
  ...(process.stderr.isTTY ? { progress: (text: string) => output.write(process.stderr, text) } : {}),
};

class UsageError extends Error {
  override name = 'UsageError';
}

/** The package's own ARCEP data, so the CLI works from any directory unless ARCEP_DATA_DIR says otherwise. */
const PACKAGE_ARCEP_DIR = fileURLToPath(new URL('../../data/arcep', import.meta.url));

function cliEnv(io: CliIo): Record<string, string | undefined> {
  return { ARCEP_DATA_DIR: PACKAGE_ARCEP_DIR, ...io.env };
}

function readConfig(io: CliIo): Config | undefined {
  try {
    return loadConfig(cliEnv(io));
  } catch (error) {
    io.err(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

/**
 * The service config for an in-process lookup: no API rate limit (the upstream budgets still
 * apply), no load shedding (the start-up's own data loading would read as event-loop
 * pressure), no metrics, no logs.
 */
function loadInProcessConfig(io: CliIo): Config {
  return loadConfig({ LOG_LEVEL: 'silent', ...cliEnv(io), RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', METRICS_ENABLED: 'false' });
}

async function openApi(url: string | undefined, io: CliIo, onRateLimited?: (seconds: number) => void): Promise<PhoneApi> {
  if (url !== undefined) {
    if (!/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
    return createRemoteApi({ baseUrl: url, defaultRegion: io.env.DEFAULT_REGION ?? 'FR', ...(onRateLimited ? { onRateLimited } : {}) });
  }
  return createInProcessApi(loadInProcessConfig(io), io.overrides);
}

type ParseOptions = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

function parse<O extends ParseOptions>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

const withoutFinalNewline = (text: string): string => text.replace(/\n$/, '');

/** Runs a command, turning usage and config mistakes into their exit codes. */
function guarded(io: CliIo, usage: string, run: CommandHandler): CommandHandler {
  return async (args) => {
    try {
      return await run(args);
    } catch (error) {
      if (error instanceof UsageError) {
        io.err(error.message);
        io.err(`usage: ${usage}`);
        return EXIT_CODES.invalidInput;
      }
      if (error instanceof ConfigError) {
        io.err(error.message);
        return EXIT_CODES.error;
      }
      io.err(stripControls(`phone-rep: ${error instanceof Error ? error.message : String(error)}`));
      return EXIT_CODES.error;
    }
  };
}

/**
 * `lookup <number> [--json] [--url URL]`: a readable summary, or the API's exact JSON. When
 * every source failed, the number's facts still go to stdout, then the failure and each
 * source's reason to stderr, with exit code 3.
 */
function createLookupCommand(io: CliIo): CommandHandler {
  // Every line goes out through the last guard: whatever a field held, no control character reaches the terminal.
  const out = (text: string): void => io.out(stripControls(text));
  const err = (text: string): void => io.err(stripControls(text));
  return guarded(io, 'phone-rep lookup <number> [--json] [--url URL]', async (args) => {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, url: { type: 'string' } });
    const number = positionals[0];
    if (number === undefined || positionals.length > 1) throw new UsageError('lookup takes exactly one number');
    const api = await openApi(values.url, io, (seconds) => err(`rate limited by the server: retrying in ${seconds} s`));
    try {
      const answer = await api.getReport(number);
      // Checked against the published schema before anything of it is shown.
      const checked = checkReportAnswer(answer.status, answer.body);
      if (!checked.ok) {
        err(checked.problem);
        return EXIT_CODES.error;
      }
      const code = exitCodeForStatus(answer.status);
      if (values.json === true) {
        out(terminalSafeJson(checked.value));
        return code;
      }
      const body = answer.status === 200 ? readReportBody(answer.body) : undefined;
      if (body !== undefined) {
        out(withoutFinalNewline(formatReportSummary(body)));
        return code;
      }
      if (answer.status === 200) {
        err('The server answered something that is not a report.');
        return EXIT_CODES.error;
      }
      if (answer.facts !== undefined) out(formatFacts(answer.facts).join('\n'));
      const title = readProblemTitle(answer.body);
      const hint = answer.status === 429 && answer.retryAfterSeconds !== undefined ? ` (retry in ${answer.retryAfterSeconds} s)` : '';
      err(`${title === undefined ? `HTTP ${answer.status}` : sanitizeForTerminal(title)}${hint}`);
      if (answer.status === 502) {
        const reasons = readFailureReasons(answer.body);
        for (const slot of SOURCE_SLOTS) {
          const reason = reasons[slot];
          if (reason !== undefined) err(`  ${slotTitle(slot)}: ${describeSourceStatus({ status: 'error', reason })}`);
        }
      }
      return code;
    } finally {
      await api.close();
    }
  });
}

/**
 * `info <number> [--json]`: the number's facts from the local numbering plan alone. No server,
 * no upstream, no Redis, no DNS: it works with every outbound connection blocked. `--json`
 * prints the body of the API's `GET /api/phone/{number}/info`.
 */
function createInfoCommand(io: CliIo): CommandHandler {
  return guarded(io, 'phone-rep info <number> [--json]', async (args) => {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } });
    const number = positionals[0];
    if (number === undefined || positionals.length > 1) throw new UsageError('info takes exactly one number');
    // Only what parsing reads: a setting for the service (REDIS_URL…) cannot stop an offline answer.
    const env = cliEnv(io);
    const config = loadConfig({ ARCEP_DATA_DIR: env.ARCEP_DATA_DIR, DEFAULT_REGION: env.DEFAULT_REGION });
    const plan = io.overrides?.numberingPlan ?? loadNumberingPlan(resolve(config.ARCEP_DATA_DIR));
    const parsed = createPhoneNumberParser(plan, config.DEFAULT_REGION)(number);
    if (!parsed.ok) {
      io.err('Invalid phone number format');
      return EXIT_CODES.invalidInput;
    }
    const facts = factsOfParsedNumber(parsed.value);
    if (values.json === true) io.out(JSON.stringify({ success: true, data: { number: facts.number, phoneInfo: facts.phoneInfo } }));
    else io.out(formatFacts(facts).join('\n'));
    return EXIT_CODES.found;
  });
}

async function readInput(source: string, io: CliIo): Promise<string> {
  if (source === '-') {
    if (io.stdin === undefined) throw new UsageError('no standard input to read');
    const chunks: string[] = [];
    for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    return chunks.join('');
  }
  try {
    return await readFile(source, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

/** `batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]`: one row per distinct number. */
function createBatchCommand(io: CliIo): CommandHandler {
  return guarded(io, 'phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]', async (args) => {
    const { values, positionals } = parse(args, {
      format: { type: 'string', default: 'csv' },
      concurrency: { type: 'string', default: '4' },
      url: { type: 'string' },
    });
    const source = positionals[0];
    if (source === undefined || positionals.length > 1) throw new UsageError('batch takes one file name, or - for standard input');
    const format = values.format;
    if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format must be csv or ndjson');
    const concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError('--concurrency must be a whole number from 1 to 64');

    const lines = readBatchLines(await readInput(source, io));
    const progress = io.progress;
    const api = await openApi(values.url, io, (seconds) => {
      progress?.('\n');
      io.err(`rate limited by the server: waiting ${seconds} s`);
    });
    try {
      const { items, duplicates } = deduplicate(lines, (raw) => api.normalise(raw));
      const pace =
        api.requestsPerMinute === undefined
          ? undefined
          : createPacer(api.requestsPerMinute, 60_000, (ms) => new Promise((resolve) => setTimeout(resolve, ms)));
      if (format === 'csv') io.out(withoutFinalNewline(csvHeader()));
      const counts: Record<BatchRow['status'], number> = { found: 0, invalid: 0, failed: 0, error: 0 };
      await runBatch({
        items,
        concurrency,
        lookup: (raw) => api.getReport(raw),
        ...(pace ? { pace } : {}),
        onRow: (row) => {
          counts[row.status] += 1;
          io.out(stripControls(withoutFinalNewline(formatRow(row, format))));
        },
        ...(progress ? { onProgress: (done: number, total: number) => progress(`\r${renderProgress(done, total)}`) } : {}),
      });
      progress?.('\n');
      io.err(
        `${plural(items.length, 'number')}: ${counts.found} found, ${counts.invalid} invalid, ${counts.failed} failed, ${plural(counts.error, 'error')}; ` +
          `${plural(duplicates, 'duplicate line')} skipped`,
      );
      return EXIT_CODES.found;
    } finally {
      await api.close();
    }
  });
}

/** `serve`: the HTTP server, as `npm start`. */
function createServeCommand(io: CliIo): CommandHandler {
  return guarded(io, 'phone-rep serve', async (args) => {
    if (args.length > 0) throw new UsageError('serve takes no argument; configure it with environment variables');
    const config = readConfig(io);
    if (!config) return EXIT_CODES.error;
    // V8 takes the heap limit sized from CACHE_MAX_MB only at start: without one of the
    // operator's, the same command runs again in a child started with it (src/start.ts).
    const { heapLimitGiven, serverExecArgv } = await import('../infra/runtime/heap-limit.js');
    const script = process.argv[1];
    if (!heapLimitGiven(process.execArgv, process.env.NODE_OPTIONS) && script !== undefined) {
      const { relaunch } = await import('../infra/runtime/relaunch.js');
      relaunch(serverExecArgv(process.execArgv, process.env.NODE_OPTIONS, config.CACHE_MAX_MB), script, process.argv.slice(2));
      // The process exits with the child.
      return new Promise<number>(() => {});
    }
    const { startServer, installShutdown } = await import('../server.js');
    const { close, port } = await startServer(config);
    io.err(`listening on ${config.HOST}:${port}`);
    installShutdown(close, config.SHUTDOWN_GRACE_MS, (message) => io.err(message));
    // Runs until a signal: installShutdown exits the process.
    return new Promise<number>(() => {});
  });
}

/** `canary [number…]`: fetch real upstream pages and check the markers the parsers rely on. 0 healthy, 1 not. */
function createCanaryCommand(io: CliIo): CommandHandler {
  return guarded(io, 'phone-rep canary [number…]', async (args) => {
    const config = readConfig(io);
    if (!config) return EXIT_CODES.error;
    const { runCanary } = await import('../sources/canary.js');
    const healthy = await runCanary({ config, numbers: args, out: io.out });
    return healthy ? 0 : 1;
  });
}

/** `data update` exit status when MAJNUM and identifiants_CE were updated but MAJRIO was not. */
export const DATA_UPDATE_WITHOUT_MAJRIO = 4;

/**
 * `data update [--force]`: refresh the ARCEP snapshot from the configured URLs (`--force`
 * accepts a MAJNUM much shorter than the one in use); `data info`: show what is in use.
 */
function createDataCommand(io: CliIo): CommandHandler {
  return async (args) => {
    const [action, ...options] = args;
    const force = action === 'update' && options.length === 1 && options[0] === '--force';
    if (options.length > 0 && !force) {
      io.err('usage: phone-rep data <update [--force]|info>');
      return 2;
    }
    const config = readConfig(io);
    if (!config) return 1;
    if (action === 'update') {
      const result = await updateArcepData({
        dir: config.ARCEP_DATA_DIR,
        urls: { majnum: config.ARCEP_MAJNUM_URL, majrio: config.ARCEP_MAJRIO_URL, identifiants: config.ARCEP_IDENTIFIANTS_URL },
        force,
      });
      if (!result.ok) {
        io.err(`ARCEP data not updated, the previous files are kept: ${result.reason}`);
        return 1;
      }
      io.out(
        `ARCEP data updated in ${config.ARCEP_DATA_DIR}: data date ${result.dataDate}, ` +
          `${result.rows.majnum} MAJNUM rows, ${result.rows.majrio} MAJRIO rows, ${result.rows.identifiants} operators`,
      );
      if (result.majrio.status === 'updated') return 0;
      // Partly updated: a distinct status so that a scheduled job notices, while the new
      // MAJNUM and identifiants_CE are in use.
      io.err(
        `MAJRIO.csv not updated (${result.majrio.reason}): ` +
          (result.majrio.status === 'kept' ? 'the previous MAJRIO.csv is kept' : 'none existed, an empty one (header only) was written') +
          '; operator names come from identifiants_CE.csv, else the operator code is shown',
      );
      return DATA_UPDATE_WITHOUT_MAJRIO;
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
    io.err('usage: phone-rep data <update [--force]|info>');
    return 2;
  };
}

export function createCommands(io: CliIo = defaultIo): Record<string, CommandHandler> {
  return {
    data: createDataCommand(io),
    lookup: createLookupCommand(io),
    info: createInfoCommand(io),
    batch: createBatchCommand(io),
    serve: createServeCommand(io),
    canary: createCanaryCommand(io),
    list: createListCommand({ out: io.out, err: io.err, env: io.env, ...(io.stdin === undefined ? {} : { stdin: io.stdin }) }, PACKAGE_ARCEP_DIR),
  };
}

const HELP = `Usage:
  phone-rep lookup <number> [--json] [--url URL]     one number: its facts, verdict and sources, or the API JSON
  phone-rep info <number> [--json]                   one number's facts from the local numbering plan, no network
  phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]
                                                     one row per distinct number of a list
  phone-rep serve                                    start the HTTP server
  phone-rep canary [number…]                         check the real upstream pages' markers
  phone-rep data <update [--force]|info>             refresh / show the ARCEP numbering data
                                                     (update: 0 done, 4 done but MAJRIO kept, 1 nothing changed;
                                                     --force installs a MAJNUM over 5 % shorter than the one in use)
  ${LIST_USAGE.replace(/^ {7}/gm, '  ')}
                                                     the operator's allow and block lists (docs/lists.md)

lookup and batch run in-process by default; --url sends the requests to a running server instead.
When every source fails, lookup still prints the number's facts and batch still fills its facts columns.
Exit codes: 0 found, 2 invalid input, 3 every upstream failed, 1 other errors.`;

/**
 * Runs the command line; with the process's own output (no `io` given), resolves only once all
 * of it is written, so the caller may exit at once: 1 (or the command's own failure code) when
 * a write failed, as when the reader of a pipe left before the end.
 */
export async function runCli(argv: string[], io?: CliIo): Promise<number> {
  if (io !== undefined) return runWith(argv, io);
  const code = await runWith(argv, defaultIo);
  const failed = await output.written();
  if (failed === undefined) return code;
  // stderr may be the stream that failed: the message is best effort.
  process.stderr.write(`phone-rep: the output could not be written whole (${(failed as NodeJS.ErrnoException).code ?? failed.message})\n`, () => undefined);
  return code === 0 ? 1 : code;
}

async function runWith(argv: string[], io: CliIo): Promise<number> {
  const tooOld = nodeFloorProblem();
  if (tooOld !== undefined) {
    io.err(tooOld);
    return 2;
  }
  const commands = createCommands(io);
  const [name, ...rest] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    io.out(HELP);
    return 0;
  }
  const handler = name === undefined ? undefined : commands[name];
  if (!handler) {
    io.err(`usage: phone-rep <${Object.keys(commands).join('|')}> …  (phone-rep help for more)`);
    return 2;
  }
  return handler(rest);
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
