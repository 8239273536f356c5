// `phone-rep info <number> [--json]`: the number's facts from the local numbering plan alone. No
// server, no upstream, no Redis, no DNS: it works with every outbound connection blocked.
// `--json` prints the body of the API's `GET /api/phone/{number}/info`.
import { arcepLocationOf, loadConfig } from '../../config/config.js';
import { createPhoneNumberParser } from '../../domain/numbering/parse-phone-number.js';
import { loadNumberingPlan, numberingDataInUse } from '../../infra/arcep/load-numbering-plan.js';
import { EXIT_CODES } from '../api-answer.js';
import { defineCommand, UsageError } from '../command.js';
import { factsOfParsedNumber, formatFacts } from '../facts.js';

export const infoCommand = defineCommand({
  name: 'info',
  usage: 'phone-rep info <number> [--json]',
  summary: ["one number's facts from the local numbering plan, no network"],
  options: { json: { type: 'boolean' } },
  async run({ values, positionals }, { io, env }) {
    const number = positionals[0];
    if (number === undefined || positionals.length > 1) throw new UsageError('info takes exactly one number');
    // Only what parsing reads: a setting for the service (REDIS_URL…) cannot stop an offline answer.
    const config = loadConfig({
      ARCEP_DATA_DIR: env.ARCEP_DATA_DIR,
      STATE_DIR: env.STATE_DIR,
      DEFAULT_REGION: env.DEFAULT_REGION,
    });
    const plan = io.overrides?.numberingPlan ?? loadNumberingPlan(numberingDataInUse(arcepLocationOf(config)).dir);
    const parsed = createPhoneNumberParser(plan, config.DEFAULT_REGION)(number);
    if (!parsed.ok) {
      io.err('Invalid phone number format');
      return EXIT_CODES.invalidInput;
    }
    const facts = factsOfParsedNumber(parsed.value);
    if (values.json === true)
      io.out(JSON.stringify({ success: true, data: { number: facts.number, phoneInfo: facts.phoneInfo } }));
    else io.out(formatFacts(facts).join('\n'));
    return EXIT_CODES.found;
  },
});
