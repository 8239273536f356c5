// `phone-rep`: the command line. A small dispatcher over a `commands` map; each command gets
// its arguments and a context (streams, environment, test overrides) and answers an exit code:
// 0 found, 2 invalid input, 3 every upstream failed, 1 anything else.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import type { ServiceOverrides } from '../composition.js';
import { EXIT_CODES, exitCodeForStatus, readProblemTitle, readReportBody } from './api-answer.js';
import { createPacer, csvHeader, deduplicate, formatRow, readBatchLines, renderProgress, runBatch, type BatchRow } from './batch.js';
import { formatReportSummary } from './format-report.js';
import { createInProcessApi, createRemoteApi, type PhoneApi } from './phone-api.js';

export interface CliContext {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown; isTTY?: boolean };
  stdin: AsyncIterable<Buffer | string>;
  env: Record<string, string | undefined>;
  /** In-process runs only: replaces parts of the service (tests inject fake sources here). */
  overrides?: ServiceOverrides;
}

export interface Command {
  summary: string;
  usage: string;
  run(args: string[], context: CliContext): Promise<number>;
}

class UsageError extends Error {
  override name = 'UsageError';
}

/** The package's own ARCEP data, so the CLI works from any directory unless ARCEP_DATA_DIR says otherwise. */
const PACKAGE_ARCEP_DIR = fileURLToPath(new URL('../../data/arcep', import.meta.url));

/** The service config for an in-process run: no API rate limit (the upstream budgets still apply) and no metrics. */
function loadCliConfig(env: Record<string, string | undefined>): Config {
  return loadConfig({ ARCEP_DATA_DIR: PACKAGE_ARCEP_DIR, LOG_LEVEL: 'silent', ...env, RATE_LIMIT_MAX: '0', METRICS_ENABLED: 'false' });
}

async function openApi(url: string | undefined, context: CliContext, onRateLimited?: (seconds: number) => void): Promise<PhoneApi> {
  if (url !== undefined) {
    if (!/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
    return createRemoteApi({ baseUrl: url, defaultRegion: context.env.DEFAULT_REGION ?? 'FR', ...(onRateLimited ? { onRateLimited } : {}) });
  }
  return createInProcessApi(loadCliConfig(context.env), context.overrides);
}

type ParseOptions = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

function parse<O extends ParseOptions>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

const lookupCommand: Command = {
  summary: 'Look up one number and print a readable report (or the API JSON with --json)',
  usage: 'phone-rep lookup <number> [--json] [--url URL]',
  async run(args, context) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, url: { type: 'string' } });
    const number = positionals[0];
    if (number === undefined || positionals.length > 1) throw new UsageError('lookup takes exactly one number');
    const api = await openApi(typeof values.url === 'string' ? values.url : undefined, context, (seconds) =>
      context.stderr.write(`rate limited by the server: retrying in ${seconds} s\n`),
    );
    try {
      const answer = await api.getReport(number);
      const code = exitCodeForStatus(answer.status);
      if (values.json === true) {
        context.stdout.write(`${answer.body}\n`);
        return code;
      }
      const body = answer.status === 200 ? readReportBody(answer.body) : undefined;
      if (body !== undefined) {
        context.stdout.write(formatReportSummary(body));
        return code;
      }
      if (answer.status === 200) {
        context.stderr.write('The server answered something that is not a report.\n');
        return EXIT_CODES.error;
      }
      const title = readProblemTitle(answer.body) ?? `HTTP ${answer.status}`;
      const hint = answer.status === 429 && answer.retryAfterSeconds !== undefined ? ` (retry in ${answer.retryAfterSeconds} s)` : '';
      context.stderr.write(`${title}${hint}\n`);
      return code;
    } finally {
      await api.close();
    }
  },
};

async function readInput(source: string, context: CliContext): Promise<string> {
  if (source === '-') {
    const chunks: string[] = [];
    for await (const chunk of context.stdin) chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    return chunks.join('');
  }
  try {
    return await readFile(source, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`cannot read ${source}: ${code}`);
  }
}

const batchCommand: Command = {
  summary: 'Look up every number of a file (one per line, - for stdin); one CSV or NDJSON row per distinct number',
  usage: 'phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]',
  async run(args, context) {
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

    const lines = readBatchLines(await readInput(source, context));
    const showProgress = context.stderr.isTTY === true;
    const api = await openApi(typeof values.url === 'string' ? values.url : undefined, context, (seconds) =>
      context.stderr.write(`${showProgress ? '\n' : ''}rate limited by the server: waiting ${seconds} s\n`),
    );
    try {
      const { items, duplicates } = deduplicate(lines, (raw) => api.normalise(raw));
      const pace =
        api.requestsPerMinute === undefined
          ? undefined
          : createPacer(api.requestsPerMinute, 60_000, (ms) => new Promise((resolve) => setTimeout(resolve, ms)));
      if (format === 'csv') context.stdout.write(csvHeader());
      const counts: Record<BatchRow['status'], number> = { found: 0, invalid: 0, failed: 0, error: 0 };
      await runBatch({
        items,
        concurrency,
        lookup: (raw) => api.getReport(raw),
        ...(pace ? { pace } : {}),
        onRow: (row) => {
          counts[row.status] += 1;
          context.stdout.write(formatRow(row, format));
        },
        onProgress: showProgress ? (done, total) => context.stderr.write(`\r${renderProgress(done, total)}`) : undefined,
      });
      if (showProgress) context.stderr.write('\n');
      context.stderr.write(
        `${items.length} numbers: ${counts.found} found, ${counts.invalid} invalid, ${counts.failed} failed, ${counts.error} errors; ${duplicates} duplicate lines skipped\n`,
      );
      return EXIT_CODES.found;
    } finally {
      await api.close();
    }
  },
};

const serveCommand: Command = {
  summary: 'Start the HTTP server (same as npm start)',
  usage: 'phone-rep serve',
  async run(args, context) {
    if (args.length > 0) throw new UsageError('serve takes no argument; configure it with environment variables');
    const { startServer, installShutdown } = await import('../server.js');
    const config = loadConfig({ ARCEP_DATA_DIR: PACKAGE_ARCEP_DIR, ...context.env });
    const { close, port } = await startServer(config);
    context.stderr.write(`listening on ${config.HOST}:${port}\n`);
    installShutdown(close, config.SHUTDOWN_GRACE_MS, (message) => context.stderr.write(`${message}\n`));
    // Runs until a signal: installShutdown exits the process.
    return new Promise<number>(() => {});
  },
};

export const commands: Record<string, Command> = {
  lookup: lookupCommand,
  batch: batchCommand,
  serve: serveCommand,
};

function usage(): string {
  const width = Math.max(...Object.values(commands).map((c) => c.usage.length));
  const lines = Object.values(commands).map((command) => `  ${command.usage.padEnd(width)}  ${command.summary}`);
  return `Usage:\n${lines.join('\n')}\n\nExit codes: 0 found, 2 invalid input, 3 every upstream failed, 1 other errors.\n`;
}

export async function runCli(argv: string[], context: CliContext): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? context.stderr : context.stdout).write(usage());
    return name === undefined ? EXIT_CODES.invalidInput : EXIT_CODES.found;
  }
  const command = commands[name];
  if (command === undefined) {
    context.stderr.write(`unknown command ${JSON.stringify(name)}\n${usage()}`);
    return EXIT_CODES.invalidInput;
  }
  try {
    return await command.run(args, context);
  } catch (error) {
    if (error instanceof UsageError) {
      context.stderr.write(`${error.message}\nusage: ${command.usage}\n`);
      return EXIT_CODES.invalidInput;
    }
    if (error instanceof ConfigError) {
      context.stderr.write(`${error.message}\n`);
      return EXIT_CODES.error;
    }
    context.stderr.write(`phone-rep ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CODES.error;
  }
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isEntry) {
  runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = EXIT_CODES.error;
    },
  );
}
