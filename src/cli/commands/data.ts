// `phone-rep data update [--force]`: refresh the ARCEP snapshot from the configured URLs
// (`--force` accepts a MAJNUM much shorter than the one in use); `phone-rep data info`: show
// what is in use. Both list the blocks that need the operator's decision: new blocks of the
// call-centre operators and under the NPV prefixes, and the unverified NPV candidates.
import { arcepLocationOf, loadConfig, type Config } from '../../config/config.js';
import {
  loadNumberingPlan,
  numberingDataInUse,
  numberingDataUpdateDir,
} from '../../infra/arcep/load-numbering-plan.js';
import { readMajnum, reviewLines } from '../../infra/arcep/review-new-blocks.js';
import { updateArcepData } from '../../infra/arcep/update-arcep-data.js';
import { defineCommand, UsageError, type CliIo } from '../command.js';

/** `data update` exit status when MAJNUM and identifiants_CE were updated but MAJRIO was not. */
export const DATA_UPDATE_WITHOUT_MAJRIO = 4;

interface DataAction {
  readonly name: string;
  /** The one flag the action accepts, if any. */
  readonly flag?: string;
  run(flagGiven: boolean, config: Config, io: CliIo): Promise<number>;
}

/** Prints the blocks to review; a failure to list them is told, never a failure of the command. */
function printReview(io: CliIo, lines: () => string[]): void {
  try {
    for (const line of lines()) io.out(line);
  } catch (error) {
    io.err(`Blocks to review not listed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const DATA_ACTIONS: readonly DataAction[] = [
  {
    name: 'update',
    flag: '--force',
    async run(force, config, io) {
      // Into the state directory (or ARCEP_DATA_DIR), compared with the data in use.
      const location = arcepLocationOf(config);
      const dir = numberingDataUpdateDir(location);
      const inUseDir = numberingDataInUse(location).dir;
      // Read before the update, which may replace this very file.
      const previousMajnum = readMajnum(inUseDir);
      const result = await updateArcepData({
        dir,
        inUseDir,
        urls: {
          majnum: config.ARCEP_MAJNUM_URL,
          majrio: config.ARCEP_MAJRIO_URL,
          identifiants: config.ARCEP_IDENTIFIANTS_URL,
        },
        force,
      });
      if (!result.ok) {
        io.err(`ARCEP data not updated, the previous files are kept: ${result.reason}`);
        return 1;
      }
      io.out(
        `ARCEP data updated in ${dir}: data date ${result.dataDate}, ` +
          `${result.rows.majnum} MAJNUM rows, ${result.rows.majrio} MAJRIO rows, ${result.rows.identifiants} operators`,
      );
      printReview(io, () => reviewLines(previousMajnum, dir));
      if (result.majrio.status === 'updated') return 0;
      // Partly updated: a distinct status so that a scheduled job notices, while the new
      // MAJNUM and identifiants_CE are in use.
      io.err(
        `MAJRIO.csv not updated (${result.majrio.reason}): ` +
          (result.majrio.status === 'kept'
            ? 'the previous MAJRIO.csv is kept'
            : 'none existed, an empty one (header only) was written') +
          '; operator names come from identifiants_CE.csv, else the operator code is shown',
      );
      return DATA_UPDATE_WITHOUT_MAJRIO;
    },
  },
  {
    name: 'info',
    async run(_flagGiven, config, io) {
      try {
        const { dir, origin } = numberingDataInUse(arcepLocationOf(config));
        const plan = loadNumberingPlan(dir, { foreignCarriers: false });
        const from = origin === 'snapshot' ? ' (the snapshot shipped in the package)' : '';
        io.out(
          `ARCEP data in ${dir}${from}: data date ${plan.dataDate}, ${plan.blockCount} number blocks (Source : ARCEP)`,
        );
        // The previous snapshot of data in use that `data update` wrote is the one shipped in the package.
        const { snapshotDir } = arcepLocationOf(config);
        printReview(io, () => reviewLines(origin === 'snapshot' ? undefined : readMajnum(snapshotDir), dir));
        return 0;
      } catch (error) {
        io.err(error instanceof Error ? error.message : String(error));
        return 1;
      }
    },
  },
];

export const dataCommand = defineCommand({
  name: 'data',
  usage: `phone-rep data <${DATA_ACTIONS.map((action) => (action.flag === undefined ? action.name : `${action.name} [${action.flag}]`)).join('|')}>`,
  summary: [
    'refresh / show the ARCEP numbering data',
    '(update: 0 done, 4 done but MAJRIO kept, 1 nothing changed;',
    '--force installs a MAJNUM over 5 % shorter than the one in use)',
  ],
  // Taken as typed: the one flag goes after its action, alone.
  async run({ positionals }, { io, env }) {
    const [name, ...flags] = positionals;
    const action = DATA_ACTIONS.find((candidate) => candidate.name === name);
    const flagGiven = flags.length === 1 && action?.flag !== undefined && flags[0] === action.flag;
    if (flags.length > 0 && !flagGiven) throw new UsageError();
    const config = loadConfig(env);
    if (action === undefined) throw new UsageError();
    return action.run(flagGiven, config, io);
  },
});
