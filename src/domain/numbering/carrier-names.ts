// The names a household knows French operators by. ARCEP's registers give each operator's legal
// name (identifiants_ce.csv): "Société française du radiotéléphone" is what most people call
// SFR. phoneInfo.originalCarrier puts the usual name first and keeps the legal one beside it, in
// parentheses, as its detail: `SFR (Société française du radiotéléphone)`. An operator missing
// here, or whose legal name is already the name people use (Orange, Free, Bouygues Telecom), is
// shown by its legal name alone. Pure data; keyed by ARCEP's operator code (Mnémo), which a
// renamed company keeps.

/** ARCEP operator code → the brand its numbers are known by (docs/numbering.md#phoneinfo). */
export const USUAL_CARRIER_NAMES: ReadonlyMap<string, string> = new Map([
  // "Société française du radiotéléphone"
  ['SFR0', 'SFR'],
  // "SFR fibre SAS": SFR's fixed network (formerly Numericable)
  ['UPCF', 'SFR'],
  // "Société réunionnaise du radiotéléphone": SFR's network in La Réunion and Mayotte
  ['SRR', 'SFR Réunion'],
  // "Free mobile": Free's mobile network
  ['FRMO', 'Free'],
  // "Orange business services"
  ['ORBS', 'Orange'],
  // "La poste telecom": La Poste Mobile
  ['LPTL', 'La Poste Mobile'],
  // "Digicel Antilles Françaises Guyane"
  ['BUYC', 'Digicel'],
  // "Lebara France Limited"
  ['LEFR', 'Lebara'],
]);

/**
 * What phoneInfo.originalCarrier says of the operator `code` whose legal name is `legalName`: its
 * usual name, then the legal name in parentheses when the two differ; the legal name alone
 * otherwise.
 */
export function originalCarrierName(code: string, legalName: string): string {
  const usual = USUAL_CARRIER_NAMES.get(code);
  return usual === undefined || usual === legalName ? legalName : `${usual} (${legalName})`;
}
