// Reads what `data update` and `data info` need to list the blocks to review (the domain's
// blocks-to-review.ts decides which): the previous and current MAJNUM, identifiants_ce for the
// names, and the call-centre operators shipped in the package.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blocksToReview, formatBlocksToReview, newestAllocationDate } from '../../domain/numbering/blocks-to-review.js';
import { ARCEP_FILE_NAMES } from '../../domain/numbering/numbering-plan.js';
import { loadCallCentreOperators } from './load-numbering-plan.js';

/** MAJNUM.csv's text (Latin-1) in `dir`, or undefined when the folder holds none. */
export function readMajnum(dir: string): string | undefined {
  const path = join(dir, ARCEP_FILE_NAMES.majnum);
  return existsSync(path) ? readFileSync(path, 'latin1') : undefined;
}

export interface ReviewOptions {
  /** The call-centre operators file; default the one shipped in the package. */
  callCentreOperatorsPath?: string;
}

/**
 * The lines listing the blocks to review in the data of `currentDir` against `previousMajnum`
 * (the MAJNUM text of the previous snapshot, undefined when there is none).
 */
export function reviewLines(
  previousMajnum: string | undefined,
  currentDir: string,
  options: ReviewOptions = {},
): string[] {
  const codes = new Set(loadCallCentreOperators(options.callCentreOperatorsPath).map((row) => row.code));
  const review = blocksToReview(
    previousMajnum,
    {
      majnum: readFileSync(join(currentDir, ARCEP_FILE_NAMES.majnum), 'latin1'),
      identifiants: readFileSync(join(currentDir, ARCEP_FILE_NAMES.identifiants), 'latin1'),
    },
    codes,
  );
  const since =
    previousMajnum === undefined
      ? 'none in use before'
      : `the previous data (data date ${newestAllocationDate(previousMajnum)})`;
  return formatBlocksToReview(review, since);
}
