// The call-centre operators (data/fr-call-centre-operators.csv): operators whose fixed and
// non-geographic number blocks serve call centres and telemarketing platforms, by ARCEP operator
// code (MAJNUM's `Mnémo`), each row citing the published list it comes from (docs/numbering.md,
// "Call-centre operators"). Pure: reading the file is infrastructure's (src/infra/arcep).

/** The file's name, in the package's `data/` folder. */
export const CALL_CENTRE_OPERATORS_FILE = 'fr-call-centre-operators.csv';
export const CALL_CENTRE_OPERATORS_HEADER = ['code', 'name', 'source', 'addedAt'] as const;

export interface CallCentreOperator {
  /** ARCEP operator code, as in MAJNUM's `Mnémo` and identifiants_ce.csv's CODE_OPERATEUR. */
  code: string;
  /** The operator's name as ARCEP's register gives it. */
  name: string;
  /** Where the operator was found: `owner/repo/path@commit`, several separated by spaces. */
  source: string;
  /** When the row was added, YYYY-MM-DD. */
  addedAt: string;
}

export type CallCentreOperatorsResult = { ok: true; operators: CallCentreOperator[] } | { ok: false; reason: string };

/**
 * Parses the file: a header, then one operator a line, four comma-separated fields without quotes
 * (no name or source needs one). Fails with the line number of the first bad line, so a hand edit
 * that breaks the file stops the start-up with a readable message instead of dropping operators.
 */
export function parseCallCentreOperators(text: string): CallCentreOperatorsResult {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const header = lines[0]?.split(',') ?? [];
  if (header.join(',') !== CALL_CENTRE_OPERATORS_HEADER.join(','))
    return {
      ok: false,
      reason: `${CALL_CENTRE_OPERATORS_FILE}: the header is not ${CALL_CENTRE_OPERATORS_HEADER.join(',')}`,
    };
  const operators: CallCentreOperator[] = [];
  const seen = new Set<string>();
  for (let index = 1; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    if (line.trim() === '') continue;
    const [code = '', name = '', source = '', addedAt = '', ...rest] = line.split(',').map((field) => field.trim());
    const where = `${CALL_CENTRE_OPERATORS_FILE} line ${index + 1}`;
    if (rest.length > 0 || line.includes('"')) return { ok: false, reason: `${where}: four fields, no quotes` };
    if (!/^[A-Z0-9]{2,8}$/.test(code)) return { ok: false, reason: `${where}: code is not an ARCEP operator code` };
    if (seen.has(code)) return { ok: false, reason: `${where}: ${code} is listed twice` };
    if (name === '' || source === '') return { ok: false, reason: `${where}: name and source are required` };
    if (!/^\d{4}-\d{2}-\d{2}$/.test(addedAt)) return { ok: false, reason: `${where}: addedAt is not YYYY-MM-DD` };
    seen.add(code);
    operators.push({ code, name, source, addedAt });
  }
  return { ok: true, operators };
}

/**
 * Whether the hint may cover a block of these national digits: fixed (01–05) and non-geographic
 * (08, 09) blocks only, as Saracroche's list does. Mobile blocks (06, 07) never: Onoff, for one,
 * sells second mobile lines to private people.
 */
export function isFixedOrNonGeographic(nationalDigits: string): boolean {
  if (nationalDigits.charCodeAt(0) !== 48 /* 0 */) return false;
  const second = nationalDigits.charAt(1);
  return second >= '1' && second <= '5' ? true : second === '8' || second === '9';
}
