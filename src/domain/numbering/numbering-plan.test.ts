import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { USUAL_CARRIER_NAMES } from './carrier-names.js';
import { decodeCarrierBson, parseNumberingPlan, splitSemicolonCsv } from './numbering-plan.js';
import { loadNumberingPlan } from '../../infra/arcep/load-numbering-plan.js';
import { testNumberingPlan } from '../../../harness/servers.js';

const MAJNUM_HEADER = 'EZABPQM;Tranche_Debut;Tranche_Fin;Mnémo;Territoire;Date_Attribution';
const MAJRIO_HEADER =
  'Ressource;"Code Attributaire";Attributaire;"Date d\'effet (attribution)";"N° décision d\'attribution"';
const IDENTIFIANTS_HEADER =
  'IDENTITE_OPERATEUR;CODE_OPERATEUR;SIRET_ACTEUR;RCS_ACTEUR;ADRESSE_COMPLETE_ACTEUR;ATTRIB_RESS_NUM;DATE_DECLARATION_OPERATEUR';

function smallFiles(majnumRows: string[]): { majnum: string; majrio: string; identifiants: string } {
  return {
    majnum: [MAJNUM_HEADER, ...majnumRows].join('\r\n'),
    majrio: [MAJRIO_HEADER, 'F0;FRTE;Orange;01/01/2017;2016-1702', 'F9;RIOO;"Rio; Opérateur";01/01/2017;x'].join(
      '\r\n',
    ),
    identifiants: [IDENTIFIANTS_HEADER, '"Orange SA";FRTE;"1";Paris;"1 rue; Paris";1;01/01/2004'].join('\r\n'),
  };
}

describe('parseNumberingPlan', () => {
  it('finds the block of the longest matching prefix and names its operator', () => {
    const result = parseNumberingPlan(
      smallFiles([
        '0612;0612000000;0612999999;FRTE;Métropole;01/01/2017',
        '061234;0612340000;0612349999;RIOO;Métropole;05/03/2024',
        '0262030;0262030000;0262030999;NOPE;"La Réunion - Océan indien";06/03/2012',
      ]),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { plan } = result;
    expect(plan.blockCount).toBe(3);
    expect(plan.dataDate).toBe('2024-03-05');
    expect(plan.findBlock('0612345678')).toMatchObject({
      prefix: '061234',
      carrierName: 'Rio; Opérateur',
      territory: 'FR',
      allocatedOn: '2024-03-05',
    });
    expect(plan.findBlock('0612000000')).toMatchObject({ prefix: '0612', carrierName: 'Orange SA' });
    expect(plan.findBlock('0262030123')).toMatchObject({ carrierName: 'NOPE', territory: 'RE' });
    expect(plan.findBlock('0699999999')).toBeUndefined();
  });

  it("says which territories the blocks give the numbers under some national digits (a list rule's prefix)", () => {
    const result = parseNumberingPlan(
      smallFiles([
        '0612;0612000000;0612999999;FRTE;Métropole;01/01/2017',
        '061234;0612340000;0612349999;RIOO;Mayotte;05/03/2024',
        '0262030;0262030000;0262030999;NOPE;"La Réunion - Océan indien";06/03/2012',
      ]),
    );
    if (!result.ok) throw new Error(result.reason);
    const { plan } = result;
    expect(plan.blocksUnder('0612')).toEqual({ covering: 'FR', within: new Set(['FR', 'YT']) });
    expect(plan.blocksUnder('06123')).toEqual({ covering: 'FR', within: new Set(['YT']) });
    expect(plan.blocksUnder('0612345')).toEqual({ covering: 'YT', within: new Set() });
    expect(plan.blocksUnder('06')).toEqual({ covering: undefined, within: new Set(['FR', 'YT']) });
    expect(plan.blocksUnder('0262')).toEqual({ covering: undefined, within: new Set(['RE']) });
    expect(plan.blocksUnder('0699')).toEqual({ covering: undefined, within: new Set() });
  });

  it("refuses a file whose header is not ARCEP's", () => {
    const files = smallFiles(['0612;0612000000;0612999999;FRTE;Métropole;01/01/2017']);
    expect(parseNumberingPlan({ ...files, majnum: files.majnum.replace('Mnémo', 'Mnemo') })).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: unexpected header',
    });
    expect(parseNumberingPlan({ ...files, identifiants: 'nope' })).toEqual({
      ok: false,
      reason: 'identifiants_ce.csv: unexpected header',
    });
  });

  it('refuses a MAJNUM without any usable block', () => {
    expect(parseNumberingPlan(smallFiles(['3646;3646;3646;FRTE;National;01/01/2017']))).toEqual({
      ok: false,
      reason: 'MAJNUM.csv: no usable number block',
    });
  });
});

describe('splitSemicolonCsv', () => {
  it('keeps semicolons, doubled quotes and line breaks inside quoted fields', () => {
    expect(splitSemicolonCsv('a;"b;c";"d ""e"""\r\n"f\ng";;\n')).toEqual([
      ['a', 'b;c', 'd "e"'],
      ['f\ng', '', ''],
    ]);
  });
});

describe('decodeCarrierBson', () => {
  it('reads a flat BSON document of strings', () => {
    const element = (key: string, value: string): Buffer => {
      const text = Buffer.from(`${value}\0`, 'utf8');
      const length = Buffer.alloc(4);
      length.writeInt32LE(text.length);
      return Buffer.concat([Buffer.from([0x02]), Buffer.from(`${key}\0`, 'utf8'), length, text]);
    };
    const body = Buffer.concat([element('47', 'Proximus'), element('456', 'Mobile Vikings')]);
    const size = Buffer.alloc(4);
    size.writeInt32LE(body.length + 5);
    expect(decodeCarrierBson(Buffer.concat([size, body, Buffer.from([0])]))).toEqual(
      new Map([
        ['47', 'Proximus'],
        ['456', 'Mobile Vikings'],
      ]),
    );
  });
});

describe('loadNumberingPlan on the shipped snapshot', () => {
  const plan = loadNumberingPlan('data/arcep');

  it('reports the date and size of the data', () => {
    // 19,991 MAJNUM rows, of which 262 are short numbers (1xxx, 3xxx) without a 10-digit block.
    expect(plan.dataDate).toBe('2026-04-17');
    expect(plan.blockCount).toBe(19_991 - 262);
    expect(plan.rowCounts).toEqual({ majnum: 19_991, majrio: 236, identifiants: 1554 });
  });

  it('decodes accented names as Latin-1', () => {
    // MAJNUM: 0612;…;SFR0 and identifiants_ce: "Société française du radiotéléphone";SFR0
    expect(plan.findBlock('0612345678')?.carrierName).toBe('Société française du radiotéléphone');
  });

  it('names a carrier by its usual name first, with the legal name as its detail', () => {
    expect(plan.findBlock('0612345678')?.originalCarrier).toBe('SFR (Société française du radiotéléphone)');
    expect(plan.findBlock('0650123456')?.originalCarrier).toBe('Bouygues Telecom');
    expect(plan.findBlock('0140000000')?.originalCarrier).toBe('Orange');
  });

  it('knows a usual name only for operator codes that hold blocks in the shipped data, under the legal name it gives', () => {
    const legalByCode = new Map<string, string>();
    // Every block's code and legal name, read through findBlock over the MAJNUM prefixes.
    const text = readFileSync('data/arcep/MAJNUM.csv', 'latin1');
    for (const line of text.split(/\r?\n/).slice(1)) {
      const [prefix, , , code] = line.split(';');
      if (prefix === undefined || code === undefined || !/^0\d{3,7}$/.test(prefix)) continue;
      const block = plan.findBlock(prefix.padEnd(10, '0'));
      if (block !== undefined && block.operatorCode === code) legalByCode.set(code, block.carrierName);
    }
    for (const code of USUAL_CARRIER_NAMES.keys()) expect(legalByCode.has(code), code).toBe(true);
  });

  it('loads libphonenumber carrier names for other countries', () => {
    expect(plan.findForeignCarrier('32', '470123456')).toBe('Proximus');
    expect(plan.findForeignCarrier('999', '1')).toBe('');
  });
});

describe('callCentrePrefixes: the prefixes whose every number is in a call-centre block', () => {
  it('lists a flagged block, split around a longer block of another operator, never a mobile block', () => {
    const result = parseNumberingPlan(
      smallFiles([
        '01897;0189700000;0189799999;CALL;Métropole;01/01/2017',
        '018975;0189750000;0189759999;FRTE;Métropole;01/01/2017',
        '0189756;0189756000;0189756999;CALL;Métropole;01/01/2017',
        '0644;0644000000;0644999999;CALL;Métropole;01/01/2017',
        '0170;0170000000;0170999999;FRTE;Métropole;01/01/2017',
      ]),
      new Map(),
      new Set(['CALL']),
    );
    if (!result.ok) throw new Error(result.reason);
    expect(result.plan.callCentrePrefixes()).toEqual([
      '018970',
      '018971',
      '018972',
      '018973',
      '018974',
      '0189756',
      '018976',
      '018977',
      '018978',
      '018979',
    ]);
  });

  it('covers a shipped number exactly when its block is a call-centre one (property over the shipped data)', () => {
    const plan = testNumberingPlan();
    const prefixes = plan.callCentrePrefixes();
    expect(prefixes.length).toBeGreaterThan(100);
    const covered = (national: string): boolean => prefixes.some((prefix) => national.startsWith(prefix));
    const digits = (length: number) =>
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length, maxLength: length });
    // Numbers under a listed prefix, and numbers anywhere in 01–05, 08, 09 and the mobiles.
    const underListed = fc
      .tuple(fc.constantFrom(...prefixes), digits(10))
      .map(([prefix, rest]) => (prefix + rest).slice(0, 10));
    const anywhere = fc
      .tuple(fc.constantFrom('1', '2', '3', '4', '5', '6', '7', '8', '9'), digits(9))
      .map(([a, rest]) => `0${a}${rest}`);
    fc.assert(
      fc.property(fc.oneof(underListed, anywhere), (national) => {
        expect(covered(national)).toBe(plan.findBlock(national)?.callCentreOperator === true);
      }),
      { numRuns: 3000 },
    );
    expect(covered('0189712345')).toBe(true); // Aircall
    expect(covered('0644661234')).toBe(false); // Onoff's mobile block
  });
});
