// `phone-rep lookup <number> [--json] [--url URL]`: a readable summary, or the API's exact JSON.
// When every source failed, the number's facts still go to stdout, then the failure and each
// source's reason to stderr, with exit code 3.
import { SOURCE_SLOTS } from '../../domain/report.js';
import { EXIT_CODES, exitCodeForStatus, readFailureReasons, readProblemTitle, readReportBody } from '../api-answer.js';
import { checkReportAnswer } from '../answer-check.js';
import { defineCommand, UsageError, withoutFinalNewline } from '../command.js';
import { formatFacts } from '../facts.js';
import { describeSourceStatus, formatReportSummary, slotTitle } from '../format-report.js';
import { openApi } from '../open-api.js';
import { sanitizeForTerminal, stripControls, terminalSafeJson } from '../sanitize.js';

export const lookupCommand = defineCommand({
  name: 'lookup',
  usage: 'phone-rep lookup <number> [--json] [--url URL]',
  summary: ['one number: its facts, verdict and sources, or the API JSON'],
  options: { json: { type: 'boolean' }, url: { type: 'string' } },
  async run({ values, positionals }, context) {
    // Every line goes out through the last guard: whatever a field held, no control character reaches the terminal.
    const out = (text: string): void => context.io.out(stripControls(text));
    const err = (text: string): void => context.io.err(stripControls(text));
    const number = positionals[0];
    if (number === undefined || positionals.length > 1) throw new UsageError('lookup takes exactly one number');
    const api = await openApi(values.url, context, (seconds) =>
      err(`rate limited by the server: retrying in ${seconds} s`),
    );
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
      const hint =
        answer.status === 429 && answer.retryAfterSeconds !== undefined
          ? ` (retry in ${answer.retryAfterSeconds} s)`
          : '';
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
  },
});
