// The specification of phoneInfo, number by number. Expected values were read from the ARCEP
// files (grep of MAJNUM for the longest prefix, then identifiants_ce / MAJRIO for the name) and
// from libphonenumber-js itself (type, national format, country), libphonenumber-geo-carrier's
// own async `carrier()` for foreign carriers; region and label follow docs/numbering.md.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsedPhoneNumber } from '../phone-number.js';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { checkSpelling, createPhoneNumberParser, PHONE_NUMBER_REJECTIONS } from './parse-phone-number.js';

const plan = loadNumberingPlan('data/arcep');
const parse = createPhoneNumberParser(plan, 'FR');

const NPV = 'NPV : plage réservée aux appels et messages automatisés';
// The usual name first, ARCEP's legal name as its detail (carrier-names.ts).
const SFR = 'SFR (Société française du radiotéléphone)';
const SRR = 'SFR Réunion (Société réunionnaise du radiotéléphone)';

interface Row {
  input: string;
  national: string;
  e164: string;
  type: string;
  carrier: string;
  region: string;
  label: string;
  npv?: boolean;
  regionCode?: string;
  /** A block of a call-centre operator (data/fr-call-centre-operators.csv). */
  callCentre?: boolean;
}

/** A French-plan number: `number` is the 10 national digits. */
function french(row: Row): [string, ParsedPhoneNumber] {
  const digits = row.national.replace(/ /g, '');
  return [
    row.input,
    {
      number: digits,
      e164: row.e164,
      regionCode: row.regionCode ?? 'FR',
      isFrenchPlan: true,
      frenchNationalDigits: digits,
      phoneInfo: {
        national: row.national,
        e164: row.e164,
        type: row.type,
        rangeLabel: row.label,
        originalCarrier: row.carrier,
        region: row.region,
        isNPV: row.npv ?? false,
      },
      ...(row.callCentre === true ? { callCentreOperator: true } : {}),
    },
  ];
}

/** Another country: `number` is E.164. */
function foreign(row: Row): [string, ParsedPhoneNumber] {
  return [
    row.input,
    {
      number: row.e164,
      e164: row.e164,
      regionCode: row.regionCode ?? '',
      isFrenchPlan: false,
      frenchNationalDigits: null,
      phoneInfo: {
        national: row.national,
        e164: row.e164,
        type: row.type,
        rangeLabel: row.label,
        originalCarrier: row.carrier,
        region: row.region,
        isNPV: false,
      },
    },
  ];
}

const npvNumbers = [
  // Mainland NPV, allocated blocks (MAJNUM 016200/027000/037700/042400/056800/094800: LGC = Manifone; 0162040: TLST = Ubefone).
  french({
    input: '0162001234',
    national: '01 62 00 12 34',
    e164: '+33162001234',
    type: 'fixed_line',
    carrier: 'Manifone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0162040123',
    national: '01 62 04 01 23',
    e164: '+33162040123',
    type: 'fixed_line',
    carrier: 'Ubefone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0270001234',
    national: '02 70 00 12 34',
    e164: '+33270001234',
    type: 'fixed_line',
    carrier: 'Manifone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0377001234',
    national: '03 77 00 12 34',
    e164: '+33377001234',
    type: 'fixed_line',
    carrier: 'Manifone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0424001234',
    national: '04 24 00 12 34',
    e164: '+33424001234',
    type: 'fixed_line',
    carrier: 'Manifone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0568001234',
    national: '05 68 00 12 34',
    e164: '+33568001234',
    type: 'fixed_line',
    carrier: 'Manifone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0948001234',
    national: '09 48 00 12 34',
    e164: '+33948001234',
    type: 'voip',
    carrier: 'Manifone',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  // Mainland NPV reserved but not allocated (no MAJNUM row for 0163, 0271, 0378, 0425, 0569, 0949, 016299, 094899).
  french({
    input: '0163123456',
    national: '01 63 12 34 56',
    e164: '+33163123456',
    type: 'fixed_line',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0271123456',
    national: '02 71 12 34 56',
    e164: '+33271123456',
    type: 'fixed_line',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0378123456',
    national: '03 78 12 34 56',
    e164: '+33378123456',
    type: 'fixed_line',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0425123456',
    national: '04 25 12 34 56',
    e164: '+33425123456',
    type: 'fixed_line',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0569123456',
    national: '05 69 12 34 56',
    e164: '+33569123456',
    type: 'fixed_line',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0949123456',
    national: '09 49 12 34 56',
    e164: '+33949123456',
    type: 'voip',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0162991234',
    national: '01 62 99 12 34',
    e164: '+33162991234',
    type: 'fixed_line',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  french({
    input: '0948991234',
    national: '09 48 99 12 34',
    e164: '+33948991234',
    type: 'voip',
    carrier: '',
    region: 'France',
    label: NPV,
    npv: true,
  }),
  // Overseas NPV, allocated (DIAB = Diabolocom SAS, SPCV = Spacinov, FRTE = Orange) and not.
  french({
    input: '0947500123',
    national: '0947 50 01 23',
    e164: '+590947500123',
    type: 'voip',
    carrier: 'Diabolocom SAS',
    region: 'Guadeloupe',
    label: NPV,
    npv: true,
    regionCode: 'GP',
  }),
  french({
    input: '0947510123',
    national: '0947 51 01 23',
    e164: '+590947510123',
    type: 'voip',
    carrier: '',
    region: 'Guadeloupe',
    label: NPV,
    npv: true,
    regionCode: 'GP',
  }),
  french({
    input: '0947600123',
    national: '0947 60 01 23',
    e164: '+594947600123',
    type: 'voip',
    carrier: 'Diabolocom SAS',
    region: 'Guyane',
    label: NPV,
    npv: true,
    regionCode: 'GF',
  }),
  french({
    input: '0947610123',
    national: '0947 61 01 23',
    e164: '+594947610123',
    type: 'voip',
    carrier: '',
    region: 'Guyane',
    label: NPV,
    npv: true,
    regionCode: 'GF',
  }),
  french({
    input: '0947700123',
    national: '0947 70 01 23',
    e164: '+596947700123',
    type: 'voip',
    carrier: 'Diabolocom SAS',
    region: 'Martinique',
    label: NPV,
    npv: true,
    regionCode: 'MQ',
  }),
  french({
    input: '0947720123',
    national: '0947 72 01 23',
    e164: '+596947720123',
    type: 'voip',
    carrier: '',
    region: 'Martinique',
    label: NPV,
    npv: true,
    regionCode: 'MQ',
  }),
  // libphonenumber files 09477 6–9 under Martinique's fixed lines: still NPV.
  french({
    input: '0947760123',
    national: '0947 76 01 23',
    e164: '+596947760123',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Martinique',
    label: NPV,
    npv: true,
    regionCode: 'MQ',
  }),
  french({
    input: '0947800123',
    national: '0947 80 01 23',
    e164: '+262947800123',
    type: 'voip',
    carrier: 'Spacinov',
    region: 'Mayotte',
    label: NPV,
    npv: true,
    regionCode: 'YT',
  }),
  // Unallocated in +262: libphonenumber tells Mayotte from Réunion.
  french({
    input: '0947810123',
    national: '0947 81 01 23',
    e164: '+262947810123',
    type: 'voip',
    carrier: '',
    region: 'Mayotte',
    label: NPV,
    npv: true,
    regionCode: 'YT',
  }),
  french({
    input: '0947900123',
    national: '0947 90 01 23',
    e164: '+262947900123',
    type: 'voip',
    carrier: 'Diabolocom SAS',
    region: 'La Réunion',
    label: NPV,
    npv: true,
    regionCode: 'RE',
  }),
  french({
    input: '0947910123',
    national: '0947 91 01 23',
    e164: '+262947910123',
    type: 'voip',
    carrier: '',
    region: 'La Réunion',
    label: NPV,
    npv: true,
    regionCode: 'RE',
  }),
];

const mainlandNumbers = [
  // Mobiles 06/07.
  french({
    input: '0612345678',
    national: '06 12 34 56 78',
    e164: '+33612345678',
    type: 'mobile',
    carrier: SFR,
    region: 'France',
    label: 'Mobile',
  }),
  french({
    input: '0601020304',
    national: '06 01 02 03 04',
    e164: '+33601020304',
    type: 'mobile',
    carrier: SFR,
    region: 'France',
    label: 'Mobile',
  }),
  french({
    input: '0650123456',
    national: '06 50 12 34 56',
    e164: '+33650123456',
    type: 'mobile',
    carrier: 'Bouygues Telecom',
    region: 'France',
    label: 'Mobile',
  }),
  french({
    input: '0699123456',
    national: '06 99 12 34 56',
    e164: '+33699123456',
    type: 'mobile',
    carrier: 'Bouygues Telecom',
    region: 'France',
    label: 'Mobile',
  }),
  french({
    input: '0756123456',
    national: '07 56 12 34 56',
    e164: '+33756123456',
    type: 'mobile',
    carrier: 'Linkt',
    region: 'France',
    label: 'Mobile',
  }),
  french({
    input: '0780123456',
    national: '07 80 12 34 56',
    e164: '+33780123456',
    type: 'mobile',
    carrier: 'Afone participations',
    region: 'France',
    label: 'Mobile',
  }),
  // CLLC is in neither register: the bare code.
  french({
    input: '0644650123',
    national: '06 44 65 01 23',
    e164: '+33644650123',
    type: 'mobile',
    carrier: 'CLLC',
    region: 'France',
    label: 'Mobile',
  }),
  // Geographic, each zone.
  french({
    input: '0140000000',
    national: '01 40 00 00 00',
    e164: '+33140000000',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Île-de-France',
    label: 'Géographique (Île-de-France)',
  }),
  french({
    input: '0156781234',
    national: '01 56 78 12 34',
    e164: '+33156781234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Île-de-France',
    label: 'Géographique (Île-de-France)',
  }),
  // MOTR and UNXO are named by MAJRIO only.
  french({
    input: '0177618123',
    national: '01 77 61 81 23',
    e164: '+33177618123',
    type: 'fixed_line',
    carrier: 'Mobile Trading GmbH',
    region: 'Île-de-France',
    label: 'Géographique (Île-de-France)',
  }),
  french({
    input: '0187171234',
    national: '01 87 17 12 34',
    e164: '+33187171234',
    type: 'fixed_line',
    carrier: 'Unixo',
    region: 'Île-de-France',
    label: 'Géographique (Île-de-France)',
  }),
  french({
    input: '0112345678',
    national: '01 12 34 56 78',
    e164: '+33112345678',
    type: 'fixed_line',
    carrier: '',
    region: 'Île-de-France',
    label: 'Géographique (Île-de-France)',
  }),
  french({
    input: '0240000000',
    national: '02 40 00 00 00',
    e164: '+33240000000',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Nord-Ouest',
    label: 'Géographique (Nord-Ouest)',
  }),
  french({
    input: '0299123456',
    national: '02 99 12 34 56',
    e164: '+33299123456',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Nord-Ouest',
    label: 'Géographique (Nord-Ouest)',
  }),
  french({
    input: '0320000000',
    national: '03 20 00 00 00',
    e164: '+33320000000',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Nord-Est',
    label: 'Géographique (Nord-Est)',
  }),
  french({
    input: '0388123456',
    national: '03 88 12 34 56',
    e164: '+33388123456',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Nord-Est',
    label: 'Géographique (Nord-Est)',
  }),
  french({
    input: '0476000000',
    national: '04 76 00 00 00',
    e164: '+33476000000',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Sud-Est',
    label: 'Géographique (Sud-Est)',
  }),
  french({
    input: '0491123456',
    national: '04 91 12 34 56',
    e164: '+33491123456',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Sud-Est',
    label: 'Géographique (Sud-Est)',
  }),
  french({
    input: '0556000000',
    national: '05 56 00 00 00',
    e164: '+33556000000',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Sud-Ouest',
    label: 'Géographique (Sud-Ouest)',
  }),
  french({
    input: '0561123456',
    national: '05 61 12 34 56',
    e164: '+33561123456',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Sud-Ouest',
    label: 'Géographique (Sud-Ouest)',
  }),
  french({
    input: '0525285123',
    national: '05 25 28 51 23',
    e164: '+33525285123',
    type: 'fixed_line',
    carrier: 'MCAS',
    region: 'Sud-Ouest',
    label: 'Géographique (Sud-Ouest)',
  }),
  // 08 by tariff (MAJNUM territory "National").
  french({
    input: '0800123456',
    national: '0 800 12 34 56',
    e164: '+33800123456',
    type: 'toll_free',
    carrier: 'Orange',
    region: 'France',
    label: 'Numéro spécial gratuit',
  }),
  french({
    input: '0805123456',
    national: '0 805 12 34 56',
    e164: '+33805123456',
    type: 'toll_free',
    carrier: SFR,
    region: 'France',
    label: 'Numéro spécial gratuit',
  }),
  french({
    input: '0806123456',
    national: '0 806 12 34 56',
    e164: '+33806123456',
    type: 'uan',
    carrier: '',
    region: 'France',
    label: 'Numéro spécial au tarif normal',
  }),
  french({
    input: '0809123456',
    national: '0 809 12 34 56',
    e164: '+33809123456',
    type: 'uan',
    carrier: '',
    region: 'France',
    label: 'Numéro spécial au tarif normal',
  }),
  french({
    input: '0810123456',
    national: '0 810 12 34 56',
    e164: '+33810123456',
    type: 'shared_cost',
    carrier: 'Orange',
    region: 'France',
    label: 'Numéro spécial à coût partagé',
  }),
  french({
    input: '0820123456',
    national: '0 820 12 34 56',
    e164: '+33820123456',
    type: 'shared_cost',
    carrier: SFR,
    region: 'France',
    label: 'Numéro spécial à coût partagé',
  }),
  french({
    input: '0821123456',
    national: '0 821 12 34 56',
    e164: '+33821123456',
    type: 'shared_cost',
    carrier: '',
    region: 'France',
    label: 'Numéro spécial à coût partagé',
  }),
  french({
    input: '0825123456',
    national: '0 825 12 34 56',
    e164: '+33825123456',
    type: 'shared_cost',
    carrier: SFR,
    region: 'France',
    label: 'Numéro spécial à coût partagé',
  }),
  french({
    input: '0890123456',
    national: '0 890 12 34 56',
    e164: '+33890123456',
    type: 'premium_rate',
    carrier: SFR,
    region: 'France',
    label: 'Numéro spécial majoré',
  }),
  french({
    input: '0899123456',
    national: '0 899 12 34 56',
    e164: '+33899123456',
    type: 'premium_rate',
    carrier: '',
    region: 'France',
    label: 'Numéro spécial majoré',
  }),
  french({
    input: '0836123456',
    national: '0 836 12 34 56',
    e164: '+33836123456',
    type: 'premium_rate',
    carrier: '',
    region: 'France',
    label: 'Numéro spécial majoré',
  }),
  // 09: polyvalent, and the technical-platform ranges.
  french({
    input: '0970123456',
    national: '09 70 12 34 56',
    e164: '+33970123456',
    type: 'voip',
    carrier: '440HZ',
    region: 'France',
    label: 'Numéro polyvalent',
  }),
  french({
    input: '0950123456',
    national: '09 50 12 34 56',
    e164: '+33950123456',
    type: 'voip',
    carrier: 'Free',
    region: 'France',
    label: 'Numéro polyvalent',
  }),
  french({
    input: '0987123456',
    national: '09 87 12 34 56',
    e164: '+33987123456',
    type: 'voip',
    carrier: 'Bouygues Telecom',
    region: 'France',
    label: 'Numéro polyvalent',
  }),
  french({
    input: '0939512345',
    national: '09 39 51 23 45',
    e164: '+33939512345',
    type: 'voip',
    carrier: '',
    region: 'France',
    label: 'Numéro polyvalent',
  }),
  french({
    input: '0937123456',
    national: '09 37 12 34 56',
    e164: '+33937123456',
    type: 'voip',
    carrier: '',
    region: 'France',
    label: 'Plateforme technique',
  }),
  french({
    input: '0938123456',
    national: '09 38 12 34 56',
    e164: '+33938123456',
    type: 'voip',
    carrier: '',
    region: 'France',
    label: 'Plateforme technique',
  }),
  french({
    input: '0939012345',
    national: '09 39 01 23 45',
    e164: '+33939012345',
    type: 'voip',
    carrier: '',
    region: 'France',
    label: 'Plateforme technique',
  }),
  french({
    input: '0939412345',
    national: '09 39 41 23 45',
    e164: '+33939412345',
    type: 'voip',
    carrier: 'BICS',
    region: 'France',
    label: 'Plateforme technique',
    callCentre: true,
  }),
];

const overseasNumbers = [
  // La Réunion (+262).
  french({
    input: '0262123456',
    national: '0262 12 34 56',
    e164: '+262262123456',
    type: 'fixed_line',
    carrier: SRR,
    region: 'La Réunion',
    label: 'Géographique (La Réunion)',
    regionCode: 'RE',
  }),
  french({
    input: '0263001234',
    national: '0263 00 12 34',
    e164: '+262263001234',
    type: 'fixed_line',
    carrier: 'Zeop',
    region: 'La Réunion',
    label: 'Géographique (La Réunion)',
    regionCode: 'RE',
  }),
  french({
    input: '0692123456',
    national: '0692 12 34 56',
    e164: '+262692123456',
    type: 'mobile',
    carrier: SRR,
    region: 'La Réunion',
    label: 'Mobile',
    regionCode: 'RE',
  }),
  french({
    input: '0693123456',
    national: '0693 12 34 56',
    e164: '+262693123456',
    type: 'mobile',
    carrier: 'Zeop mobile',
    region: 'La Réunion',
    label: 'Mobile',
    regionCode: 'RE',
  }),
  french({
    input: '0709201234',
    national: '0709 20 12 34',
    e164: '+262709201234',
    type: 'mobile',
    carrier: SRR,
    region: 'La Réunion',
    label: 'Mobile',
    regionCode: 'RE',
  }),
  french({
    input: '0976271234',
    national: '0976 27 12 34',
    e164: '+262976271234',
    type: 'voip',
    carrier: 'Odigo',
    region: 'La Réunion',
    label: 'Numéro polyvalent',
    regionCode: 'RE',
  }),
  // Mayotte (+262).
  french({
    input: '0269611234',
    national: '0269 61 12 34',
    e164: '+262269611234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Mayotte',
    label: 'Géographique (Mayotte)',
    regionCode: 'YT',
  }),
  french({
    input: '0639011234',
    national: '0639 01 12 34',
    e164: '+262639011234',
    type: 'mobile',
    carrier: 'Orange',
    region: 'Mayotte',
    label: 'Mobile',
    regionCode: 'YT',
  }),
  french({
    input: '0709351234',
    national: '0709 35 12 34',
    e164: '+262709351234',
    type: 'mobile',
    carrier: SRR,
    region: 'Mayotte',
    label: 'Mobile',
    regionCode: 'YT',
  }),
  // Guadeloupe (+590).
  french({
    input: '0590201234',
    national: '0590 20 12 34',
    e164: '+590590201234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Guadeloupe',
    label: 'Géographique (Guadeloupe)',
    regionCode: 'GP',
  }),
  french({
    input: '0590281234',
    national: '0590 28 12 34',
    e164: '+590590281234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Guadeloupe',
    label: 'Géographique (Guadeloupe)',
    regionCode: 'GP',
  }),
  french({
    input: '0690221234',
    national: '0690 22 12 34',
    e164: '+590690221234',
    type: 'mobile',
    carrier: 'Dauphin telecom',
    region: 'Guadeloupe',
    label: 'Mobile',
    regionCode: 'GP',
  }),
  // libphonenumber's mobile patterns are the same for GP, BL and MF: it cannot say more than Guadeloupe.
  french({
    input: '0690871234',
    national: '0690 87 12 34',
    e164: '+590690871234',
    type: 'mobile',
    carrier: 'United telecommunication services Caraïbe',
    region: 'Guadeloupe',
    label: 'Mobile',
    regionCode: 'GP',
  }),
  french({
    input: '0709001234',
    national: '0709 00 12 34',
    e164: '+590709001234',
    type: 'mobile',
    carrier: 'Free Caraïbe',
    region: 'Guadeloupe',
    label: 'Mobile',
    regionCode: 'GP',
  }),
  // Saint-Martin and Saint-Barthélemy (same ARCEP territory and +590).
  french({
    input: '0590871234',
    national: '0590 87 12 34',
    e164: '+590590871234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Saint-Martin',
    label: 'Géographique (Saint-Martin)',
    regionCode: 'MF',
  }),
  french({
    input: '0590521234',
    national: '0590 52 12 34',
    e164: '+590590521234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Saint-Martin',
    label: 'Géographique (Saint-Martin)',
    regionCode: 'MF',
  }),
  french({
    input: '0590001234',
    national: '0590 00 12 34',
    e164: '+590590001234',
    type: 'fixed_line',
    carrier: 'Saint Martin cable',
    region: 'Saint-Martin',
    label: 'Géographique (Saint-Martin)',
    regionCode: 'MF',
  }),
  french({
    input: '0590271234',
    national: '0590 27 12 34',
    e164: '+590590271234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Saint-Barthélemy',
    label: 'Géographique (Saint-Barthélemy)',
    regionCode: 'BL',
  }),
  french({
    input: '0590291234',
    national: '0590 29 12 34',
    e164: '+590590291234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Saint-Barthélemy',
    label: 'Géographique (Saint-Barthélemy)',
    regionCode: 'BL',
  }),
  // Guyane (+594); VELT is in neither register.
  french({
    input: '0594123456',
    national: '0594 12 34 56',
    e164: '+594594123456',
    type: 'fixed_line',
    carrier: '',
    region: 'Guyane',
    label: 'Géographique (Guyane)',
    regionCode: 'GF',
  }),
  french({
    input: '0594362123',
    national: '0594 36 21 23',
    e164: '+594594362123',
    type: 'fixed_line',
    carrier: 'VELT',
    region: 'Guyane',
    label: 'Géographique (Guyane)',
    regionCode: 'GF',
  }),
  french({
    input: '0694123456',
    national: '0694 12 34 56',
    e164: '+594694123456',
    type: 'mobile',
    carrier: 'Digicel (Digicel Antilles Françaises Guyane)',
    region: 'Guyane',
    label: 'Mobile',
    regionCode: 'GF',
  }),
  // Martinique (+596).
  french({
    input: '0596701234',
    national: '0596 70 12 34',
    e164: '+596596701234',
    type: 'fixed_line',
    carrier: 'Orange',
    region: 'Martinique',
    label: 'Géographique (Martinique)',
    regionCode: 'MQ',
  }),
  french({
    input: '0696123456',
    national: '0696 12 34 56',
    e164: '+596696123456',
    type: 'mobile',
    carrier: '',
    region: 'Martinique',
    label: 'Mobile',
    regionCode: 'MQ',
  }),
  // Saint-Pierre-et-Miquelon (+508, 6 digits for 0508 numbers, 9 for the 0708 mobiles).
  french({
    input: '0508411234',
    national: '0508 41 12 34',
    e164: '+508411234',
    type: 'fixed_line',
    carrier: 'SAS SPM Telecom',
    region: 'Saint-Pierre-et-Miquelon',
    label: 'Géographique (Saint-Pierre-et-Miquelon)',
    regionCode: 'PM',
  }),
  french({
    input: '0508551234',
    national: '0508 55 12 34',
    e164: '+508551234',
    type: 'mobile',
    carrier: 'SAS SPM Telecom',
    region: 'Saint-Pierre-et-Miquelon',
    label: 'Mobile',
    regionCode: 'PM',
  }),
  french({
    input: '0708561234',
    national: '0708 56 12 34',
    e164: '+508708561234',
    type: 'mobile',
    carrier: 'SAS SPM Telecom',
    region: 'Saint-Pierre-et-Miquelon',
    label: 'Mobile',
    regionCode: 'PM',
  }),
];

function respelled(input: string, like: string): [string, ParsedPhoneNumber] {
  const model = [...npvNumbers, ...mainlandNumbers, ...overseasNumbers].find(([raw]) => raw === like);
  if (!model) throw new Error(`no model row ${like}`);
  return [input, model[1]];
}

const spellings = [
  respelled('06 12 34 56 78', '0612345678'),
  respelled('06.12.34.56.78', '0612345678'),
  respelled('06-12-34-56-78', '0612345678'),
  respelled('(06) 12 34 56 78', '0612345678'),
  respelled('06 12-34.56 78', '0612345678'),
  respelled('+33612345678', '0612345678'),
  respelled('+33 6 12 34 56 78', '0612345678'),
  respelled('+33 (0)6 12 34 56 78', '0612345678'),
  respelled('0033612345678', '0612345678'),
  respelled('00 33 6 12 34 56 78', '0612345678'),
  respelled('+33 1 62 04 01 23', '0162040123'),
  respelled('+33 800 12 34 56', '0800123456'),
  respelled('+262 262 12 34 56', '0262123456'),
  respelled('00262692123456', '0692123456'),
  respelled('+262 639 01 12 34', '0639011234'),
  respelled('+590 590 27 12 34', '0590271234'),
  respelled('+590590871234', '0590871234'),
  respelled('+590 690 22 12 34', '0690221234'),
  respelled('+594 694 12 34 56', '0694123456'),
  respelled('+596 596 70 12 34', '0596701234'),
  respelled('+590 947 50 01 23', '0947500123'),
  respelled('+262947900123', '0947900123'),
  respelled('+508 41 12 34', '0508411234'),
  respelled('+508 708 56 12 34', '0708561234'),
  respelled('0590.87.12.34', '0590871234'),
];

const foreignNumbers = [
  foreign({
    input: '+32470123456',
    national: '0470 12 34 56',
    e164: '+32470123456',
    type: 'mobile',
    carrier: 'Proximus',
    region: 'Belgique',
    label: 'Mobile (Belgique)',
    regionCode: 'BE',
  }),
  foreign({
    input: '+1 (415) 555-2671',
    national: '415 555 2671',
    e164: '+14155552671',
    type: 'fixed_line_or_mobile',
    carrier: '',
    region: 'États-Unis',
    label: 'Fixe ou mobile (États-Unis)',
    regionCode: 'US',
  }),
  foreign({
    input: '+16135550123',
    national: '613 555 0123',
    e164: '+16135550123',
    type: 'fixed_line_or_mobile',
    carrier: '',
    region: 'Canada',
    label: 'Fixe ou mobile (Canada)',
    regionCode: 'CA',
  }),
  foreign({
    input: '+447400123456',
    national: '07400 123456',
    e164: '+447400123456',
    type: 'mobile',
    carrier: 'Three',
    region: 'Royaume-Uni',
    label: 'Mobile (Royaume-Uni)',
    regionCode: 'GB',
  }),
  foreign({
    input: '+44 (0)20 7946 0958',
    national: '020 7946 0958',
    e164: '+442079460958',
    type: 'fixed_line',
    carrier: '',
    region: 'Royaume-Uni',
    label: 'Fixe (Royaume-Uni)',
    regionCode: 'GB',
  }),
  foreign({
    input: '0049 151 23456789',
    national: '01512 3456789',
    e164: '+4915123456789',
    type: 'mobile',
    carrier: 'T-Mobile',
    region: 'Allemagne',
    label: 'Mobile (Allemagne)',
    regionCode: 'DE',
  }),
  foreign({
    input: '+34 612 34 56 78',
    national: '612 34 56 78',
    e164: '+34612345678',
    type: 'mobile',
    carrier: 'Syma',
    region: 'Espagne',
    label: 'Mobile (Espagne)',
    regionCode: 'ES',
  }),
  foreign({
    input: '+393123456789',
    national: '312 345 6789',
    e164: '+393123456789',
    type: 'mobile',
    carrier: '',
    region: 'Italie',
    label: 'Mobile (Italie)',
    regionCode: 'IT',
  }),
  foreign({
    input: '+41 79 123 45 67',
    national: '079 123 45 67',
    e164: '+41791234567',
    type: 'mobile',
    carrier: 'Swisscom',
    region: 'Suisse',
    label: 'Mobile (Suisse)',
    regionCode: 'CH',
  }),
  foreign({
    input: '+212612345678',
    national: '0612 345678',
    e164: '+212612345678',
    type: 'mobile',
    carrier: 'Orange',
    region: 'Maroc',
    label: 'Mobile (Maroc)',
    regionCode: 'MA',
  }),
  foreign({
    input: '+81312345678',
    national: '03 1234 5678',
    e164: '+81312345678',
    type: 'fixed_line',
    carrier: '',
    region: 'Japon',
    label: 'Fixe (Japon)',
    regionCode: 'JP',
  }),
  foreign({
    input: '+5511987654321',
    national: '11 98765 4321',
    e164: '+5511987654321',
    type: 'mobile',
    carrier: 'TIM',
    region: 'Brésil',
    label: 'Mobile (Brésil)',
    regionCode: 'BR',
  }),
  foreign({
    input: '+351912345678',
    national: '912 345 678',
    e164: '+351912345678',
    type: 'mobile',
    carrier: 'Vodafone',
    region: 'Portugal',
    label: 'Mobile (Portugal)',
    regionCode: 'PT',
  }),
  foreign({
    input: '+31612345678',
    national: '06 12345678',
    e164: '+31612345678',
    type: 'mobile',
    carrier: 'KPN',
    region: 'Pays-Bas',
    label: 'Mobile (Pays-Bas)',
    regionCode: 'NL',
  }),
  foreign({
    input: '+352621123456',
    national: '621 123 456',
    e164: '+352621123456',
    type: 'mobile',
    carrier: 'POST',
    region: 'Luxembourg',
    label: 'Mobile (Luxembourg)',
    regionCode: 'LU',
  }),
  foreign({
    input: '+221771234567',
    national: '77 123 45 67',
    e164: '+221771234567',
    type: 'mobile',
    carrier: 'Orange',
    region: 'Sénégal',
    label: 'Mobile (Sénégal)',
    regionCode: 'SN',
  }),
  // A +508 number with no 0XXXXXXXXX form: described like another country's.
  foreign({
    input: '+508800123456',
    national: '0800 12 34 56',
    e164: '+508800123456',
    type: 'toll_free',
    carrier: '',
    region: 'Saint-Pierre-et-Miquelon',
    label: 'Numéro gratuit (Saint-Pierre-et-Miquelon)',
    regionCode: 'PM',
  }),
];

const invalidInputs: Array<[string, string]> = [
  ['', 'empty'],
  ['0612345678901234567890123456789012', 'too long (33 characters)'],
  ['+33 6 12 34 56 78 90 12 34 56 78 9', 'too long with separators'],
  ['06123a5678', 'a letter'],
  ['O612345678', 'a capital O for a zero'],
  ['tel:+33612345678 ext 12', 'a tel: URI with a space'],
  ['mailto:+33612345678', 'another URI scheme'],
  ['anonymous caller', 'a withheld word with more'],
  ['+33612345678 ext 12', 'an extension'],
  ['٠٦١٢٣٤٥٦٧٨', 'Arabic-Indic digits'],
  ['۰۶۱۲۳۴۵۶۷۸', 'extended Arabic-Indic digits'],
  ['０６１２３４５６７８', 'full-width digits'],
  ['06\u00a012345678', 'a no-break space'],
  ['06\u200b12345678', 'a zero-width space'],
  ['0612345678\n', 'a trailing line feed'],
  ['\t0612345678', 'a leading tab'],
  ['06\u000012345678', 'a NUL'],
  [' 0612345678', 'a leading space'],
  ['0612345678 ', 'a trailing space'],
  ['06  12 34 56 78', 'two spaces in a row'],
  ['06..12.34.56.78', 'two dots in a row'],
  ['06-.12345678', 'a dash and a dot'],
  ['06/12/34/56/78', 'slashes'],
  ['06_12_34_56_78', 'underscores'],
  ['06,12,34,56,78', 'commas'],
  ['0612345678#', 'a hash'],
  ['*0612345678', 'a star'],
  ['%2B33612345678', 'percent-encoding left undecoded'],
  ['(06 12 34 56 78', 'an unclosed parenthesis'],
  ['06) 12 34 56 78', 'an unopened parenthesis'],
  ['06 (12 (34)) 56 78', 'nested parentheses'],
  ['06 () 12345678', 'empty parentheses'],
  ['+(33) 6 12 34 56 78', 'a parenthesis right after +'],
  ['+ 33 6 12 34 56 78', 'a space right after +'],
  ['+', 'a lone +'],
  ['++33612345678', 'two +'],
  ['+0033612345678', '+ and 00'],
  ['-', 'a lone separator'],
  ['0612', 'too short'],
  ['061234567', 'nine digits with a 0'],
  ['612345678', 'national without its 0'],
  ['06123456789', 'eleven digits'],
  ['0012345678', '00 followed by no country'],
  ['0712345678', '07 1x is not a mobile range'],
  ['0700123456', '07 00 is for 14-digit machine numbers'],
  ['0596123456', 'a Martinique range libphonenumber rejects'],
  ['+3361234567', 'a short +33 number'],
  ['+1 555', 'a short US number'],
  ['+999123456789', 'an unassigned country code'],
  ['+4420 (0)7946 0958', 'a (0) that does not follow the country code'],
];

describe('createPhoneNumberParser: French-plan and foreign numbers', () => {
  const rows = [...npvNumbers, ...mainlandNumbers, ...overseasNumbers, ...spellings, ...foreignNumbers];

  it('covers at least 150 numbers, 10 of them foreign', () => {
    expect(rows.length + invalidInputs.length).toBeGreaterThanOrEqual(150);
    expect(foreignNumbers.length).toBeGreaterThanOrEqual(10);
    expect(invalidInputs.length).toBeGreaterThanOrEqual(30);
  });

  it.each(rows)('reads %j', (input, expected) => {
    expect(parse(input)).toEqual({ ok: true, value: expected });
  });
});

describe('createPhoneNumberParser: normal forms', () => {
  const rows = [...npvNumbers, ...mainlandNumbers, ...overseasNumbers, ...foreignNumbers];

  it.each(rows)('reads the E.164 form of %j to the same answer', (_input, expected) => {
    expect(parse(expected.e164)).toEqual({ ok: true, value: expected });
  });

  it.each(rows)('reads the normalised number of %j to the same answer', (_input, expected) => {
    expect(parse(expected.number)).toEqual({ ok: true, value: expected });
  });

  it('gives every spelling of a French number (spaces, dots, dashes, +33, 0033) the same answer', () => {
    const separator = fc.constantFrom('', ' ', '.', '-');
    fc.assert(
      fc.property(
        fc.constantFrom(...mainlandNumbers.map(([, value]) => value)),
        separator,
        fc.constantFrom('', '+33', '0033'),
        (expected, sep, prefix) => {
          const digits = expected.number;
          const pairs = [digits.slice(2, 4), digits.slice(4, 6), digits.slice(6, 8), digits.slice(8, 10)];
          const spelled =
            prefix === ''
              ? [digits.slice(0, 2), ...pairs].join(sep)
              : `${prefix}${sep}${digits.charAt(1)}${sep}${pairs.join(sep)}`;
          expect(parse(spelled)).toEqual({ ok: true, value: expected });
        },
      ),
    );
  });
});

describe('createPhoneNumberParser: refused inputs', () => {
  it.each(invalidInputs)('refuses %j (%s)', (input) => {
    const result = parse(input);
    expect(result.ok).toBe(false);
  });

  it('gives reasons that never contain the number', () => {
    for (const [input] of invalidInputs) {
      const result = parse(input);
      if (result.ok) continue;
      expect(PHONE_NUMBER_REJECTIONS).toContain(result.reason);
      expect(result.reason).not.toMatch(/[0-9]/);
    }
  });

  it('never throws, whatever the input', () => {
    const hostile = [
      '\uD800',
      '\u0000'.repeat(32),
      '+'.repeat(32),
      '('.repeat(16) + ')'.repeat(16),
      '9'.repeat(32),
      '+9'.repeat(16),
    ];
    for (const input of hostile) expect(() => parse(input)).not.toThrow();
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (input) => typeof parse(input).ok === 'boolean'));
    const phoneLike = fc
      .array(fc.constantFrom('0', '1', '3', '6', '9', '+', ' ', '.', '-', '(', ')'), { maxLength: 20 })
      .map((chars) => chars.join(''));
    fc.assert(fc.property(phoneLike, (input) => typeof parse(input).ok === 'boolean'));
  });

  it('refuses any input with a character outside digits, separators and a leading +', () => {
    const stray = fc.constantFrom('a', 'Z', '#', '*', '/', ',', ';', '_', '\t', '\n', '\u00a0', '٣', '３', 'é');
    fc.assert(
      fc.property(
        fc.constantFrom(...mainlandNumbers.map(([input]) => input)),
        stray,
        fc.nat(10),
        (input, character, at) => {
          const position = at % (input.length + 1);
          expect(parse(`${input.slice(0, position)}${character}${input.slice(position)}`).ok).toBe(false);
        },
      ),
    );
  });
});

describe('checkSpelling', () => {
  it('tells why a spelling is refused', () => {
    expect(checkSpelling('')).toEqual({ ok: false, reason: 'empty' });
    expect(checkSpelling('0'.repeat(33))).toEqual({ ok: false, reason: 'too_long' });
    expect(checkSpelling('06a')).toEqual({ ok: false, reason: 'invalid_character' });
    expect(checkSpelling('06--12')).toEqual({ ok: false, reason: 'misplaced_separator' });
    expect(checkSpelling('()')).toEqual({ ok: false, reason: 'misplaced_separator' });
    expect(checkSpelling('+')).toEqual({ ok: false, reason: 'no_digits' });
  });

  it('reads 00 as the international prefix', () => {
    expect(checkSpelling('00 32 470 12 34 56')).toEqual({
      ok: true,
      international: true,
      digits: '32470123456',
      parenthesisedZeroAt: -1,
    });
  });
});

describe('createPhoneNumberParser with another default region', () => {
  it('reads national numbers in that region and still routes French-plan numbers through ARCEP', () => {
    const belgian = createPhoneNumberParser(plan, 'BE');
    expect(belgian('0470 12 34 56')).toMatchObject({ ok: true, value: { number: '+32470123456', regionCode: 'BE' } });
    expect(belgian('+33612345678')).toMatchObject({ ok: true, value: { number: '0612345678', isFrenchPlan: true } });
  });

  it('reads 0XXXXXXXXX in the French plan when the default is an overseas territory', () => {
    const reunion = createPhoneNumberParser(plan, 'RE');
    expect(reunion('0612345678')).toMatchObject({ ok: true, value: { number: '0612345678', regionCode: 'FR' } });
    expect(reunion('0262123456')).toMatchObject({ ok: true, value: { number: '0262123456', regionCode: 'RE' } });
  });
});
