// Which number blocks need the operator's decision after a new ARCEP snapshot: the blocks
// allocated since the previous snapshot to a call-centre operator (fr-call-centre-operators.csv)
// or under the NPV prefixes, and the unverified NPV candidates (MIAS's 2026 overseas blocks).
// Shown by `phone-rep data update` and `data info`, never added to anything (docs/numbering.md).
// Pure: the files' texts come in, decoded as Latin-1.
import { isFixedOrNonGeographic } from './call-centre-operators.js';
import { MAJNUM_HEADER, splitSemicolonCsv } from './numbering-plan.js';
import { NPV_MAINLAND_PREFIXES, NPV_OVERSEAS_PREFIXES } from './parse-phone-number.js';

/**
 * Blocks allocated on 20/02/2026 to MIAS (Canal+ Telecom) in Réunion, Mayotte, Guadeloupe, Guyane
 * and Martinique. Users' NPV patterns include them (SpamBlocker #524), but no ARCEP text found
 * so far says they are NPV: they are listed for a decision, never treated as NPV.
 */
export const UNVERIFIED_NPV_CANDIDATE_PREFIXES: readonly string[] = ['02688', '02689', '05987', '05988', '05989'];

export interface BlockToReview {
  /** MAJNUM's EZABPQM: the block's national prefix. */
  prefix: string;
  operatorCode: string;
  /** identifiants_ce.csv's name for the code, or the code itself. */
  operatorName: string;
  /** MAJNUM's `Territoire`, as written. */
  territory: string;
  /** YYYY-MM-DD. */
  allocatedOn: string;
  /** False for a mobile block (06, 07): the call_centre_operator hint never covers it. */
  hinted: boolean;
}

export interface BlocksToReview {
  /** False when there was no previous snapshot to compare with: the two "new" lists are then empty. */
  compared: boolean;
  /** New blocks of the call-centre operators. */
  callCentre: BlockToReview[];
  /** New blocks under the NPV prefixes. */
  npv: BlockToReview[];
  /** Every block of the current data under an unverified NPV candidate prefix. */
  npvCandidates: BlockToReview[];
}

const PREFIX = MAJNUM_HEADER.indexOf('EZABPQM');
const CODE = MAJNUM_HEADER.indexOf('Mnémo');
const TERRITORY = MAJNUM_HEADER.indexOf('Territoire');
const DATE = MAJNUM_HEADER.indexOf('Date_Attribution');

function blockPrefixes(majnum: string): Set<string> {
  return new Set(
    splitSemicolonCsv(majnum)
      .slice(1)
      .map((row) => row[PREFIX]?.trim() ?? ''),
  );
}

/** True when a block and a prefix overlap: one starts with the other. */
const overlaps = (block: string, prefix: string) => block.startsWith(prefix) || prefix.startsWith(block);

const isUnderNpv = (prefix: string) =>
  [...NPV_MAINLAND_PREFIXES, ...NPV_OVERSEAS_PREFIXES].some((npv) => overlaps(prefix, npv));

/**
 * The blocks to review in `current` (MAJNUM's and identifiants_ce's texts) against `previousMajnum`
 * (undefined when there is no earlier snapshot). Blocks are in MAJNUM's order.
 */
export function blocksToReview(
  previousMajnum: string | undefined,
  current: { majnum: string; identifiants: string },
  callCentreCodes: ReadonlySet<string>,
): BlocksToReview {
  const names = new Map<string, string>();
  for (const [name, code] of splitSemicolonCsv(current.identifiants).slice(1)) {
    const cleanCode = code?.trim();
    if (cleanCode && name?.trim() && !names.has(cleanCode)) names.set(cleanCode, name.trim());
  }
  const previous = previousMajnum === undefined ? undefined : blockPrefixes(previousMajnum);
  const review: BlocksToReview = { compared: previous !== undefined, callCentre: [], npv: [], npvCandidates: [] };
  for (const row of splitSemicolonCsv(current.majnum).slice(1)) {
    const prefix = row[PREFIX]?.trim() ?? '';
    if (!/^0\d{3,7}$/.test(prefix)) continue;
    const operatorCode = row[CODE]?.trim() ?? '';
    const date = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(row[DATE]?.trim() ?? '');
    const block: BlockToReview = {
      prefix,
      operatorCode,
      operatorName: names.get(operatorCode) ?? operatorCode,
      territory: row[TERRITORY]?.trim() ?? '',
      allocatedOn: date ? `${date[3]}-${date[2]}-${date[1]}` : '',
      hinted: isFixedOrNonGeographic(prefix),
    };
    if (UNVERIFIED_NPV_CANDIDATE_PREFIXES.some((candidate) => overlaps(prefix, candidate)))
      review.npvCandidates.push(block);
    if (previous === undefined || previous.has(prefix)) continue;
    if (callCentreCodes.has(operatorCode)) review.callCentre.push(block);
    if (isUnderNpv(prefix)) review.npv.push(block);
  }
  return review;
}

/** The newest allocation date in a MAJNUM text, YYYY-MM-DD ("" when none): its data date. */
export function newestAllocationDate(majnum: string): string {
  let newest = '';
  for (const row of splitSemicolonCsv(majnum).slice(1)) {
    const date = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(row[DATE]?.trim() ?? '');
    const iso = date ? `${date[3]}-${date[2]}-${date[1]}` : '';
    if (iso > newest) newest = iso;
  }
  return newest;
}

/** The review as lines of text, for the CLI: each list under a heading, `(none)` when empty. */
export function formatBlocksToReview(review: BlocksToReview, since: string): string[] {
  const line = (block: BlockToReview) =>
    `  ${block.prefix.padEnd(8)} ${block.operatorCode.padEnd(5)} ${block.operatorName}, ${block.territory}, allocated ${block.allocatedOn}` +
    (block.hinted ? '' : ' (mobile block: no call_centre_operator hint)');
  const section = (heading: string, blocks: readonly BlockToReview[]) => [
    heading,
    ...(blocks.length === 0 ? ['  (none)'] : blocks.map(line)),
  ];
  const lines: string[] = [];
  if (review.compared) {
    lines.push(
      ...section(`New blocks of call-centre operators since ${since}: ${review.callCentre.length}`, review.callCentre),
    );
    lines.push(...section(`New blocks under the NPV prefixes since ${since}: ${review.npv.length}`, review.npv));
  } else {
    lines.push(`New blocks: no earlier snapshot to compare with (${since})`);
  }
  lines.push(
    ...section(
      `Unverified NPV candidates (shown, never added; to block one, a block rule on its E.164 prefix: phone-rep list add '+2622688*' --list block, docs/numbering.md): ${review.npvCandidates.length}`,
      review.npvCandidates,
    ),
  );
  return lines;
}
