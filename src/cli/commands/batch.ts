// `phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]`: one row per
// distinct number of a list, then a count of each outcome on stderr.
import { EXIT_CODES } from '../api-answer.js';
import {
  createPacer,
  csvHeader,
  deduplicate,
  formatRow,
  readBatchLines,
  renderProgress,
  runBatch,
  type BatchRow,
} from '../batch.js';
import { defineCommand, readInput, UsageError, withoutFinalNewline } from '../command.js';
import { plural } from '../format-report.js';
import { openApi } from '../open-api.js';
import { stripControls } from '../sanitize.js';

export const batchCommand = defineCommand({
  name: 'batch',
  usage: 'phone-rep batch <file|-> [--format csv|ndjson] [--concurrency N] [--url URL]',
  summary: ['one row per distinct number of a list'],
  options: {
    format: { type: 'string', default: 'csv' },
    concurrency: { type: 'string', default: '4' },
    url: { type: 'string' },
  },
  async run({ values, positionals }, context) {
    const { io } = context;
    const source = positionals[0];
    if (source === undefined || positionals.length > 1)
      throw new UsageError('batch takes one file name, or - for standard input');
    const format = values.format;
    if (format !== 'csv' && format !== 'ndjson') throw new UsageError('--format must be csv or ndjson');
    const concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
      throw new UsageError('--concurrency must be a whole number from 1 to 64');

    const lines = readBatchLines(await readInput(source, io));
    const progress = io.progress;
    const api = await openApi(values.url, context, (seconds) => {
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
        ...(progress
          ? { onProgress: (done: number, total: number) => progress(`\r${renderProgress(done, total)}`) }
          : {}),
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
  },
});
