import { describe, expect, it } from 'vitest';
import { blocksToReview, formatBlocksToReview, newestAllocationDate } from './blocks-to-review.js';

const HEADER = 'EZABPQM;Tranche_Debut;Tranche_Fin;Mnémo;Territoire;Date_Attribution';
const IDENTIFIANTS = [
  'IDENTITE_OPERATEUR;CODE_OPERATEUR;SIRET_ACTEUR;RCS_ACTEUR;ADRESSE_COMPLETE_ACTEUR;ATTRIB_RESS_NUM;DATE_DECLARATION_OPERATEUR',
  '"Aircall";AIRC;"1";Paris;"x";1;01/01/2020',
  '"Canal+ Telecom";MIAS;"2";Paris;"y";1;01/01/2003',
].join('\n');
const row = (prefix: string, code: string, date: string, territory = 'Métropole') =>
  `${prefix};${prefix}000;${prefix}999;${code};${territory};${date}`;

const previous = [HEADER, row('0189710', 'AIRC', '01/01/2024'), row('0268800', 'MIAS', '20/02/2026', 'Mayotte')].join(
  '\n',
);
const current = [
  previous,
  row('0189711', 'AIRC', '02/05/2026'),
  row('0756999', 'AIRC', '03/05/2026'),
  row('0948999', 'ZZZZ', '04/05/2026'),
  row('0598700', 'MIAS', '05/05/2026', 'Guadeloupe, St Martin et St Barthélemy'),
  row('0123456', 'ZZZZ', '06/05/2026'),
].join('\n');
const codes = new Set(['AIRC']);

describe('blocksToReview', () => {
  it('lists only the blocks absent from the previous snapshot, by call-centre operator and under NPV', () => {
    const review = blocksToReview(previous, { majnum: current, identifiants: IDENTIFIANTS }, codes);
    expect(review.compared).toBe(true);
    expect(review.callCentre.map((block) => [block.prefix, block.operatorName, block.hinted])).toEqual([
      ['0189711', 'Aircall', true],
      ['0756999', 'Aircall', false],
    ]);
    expect(review.npv.map((block) => [block.prefix, block.operatorName, block.allocatedOn])).toEqual([
      ['0948999', 'ZZZZ', '2026-05-04'],
    ]);
  });

  it('lists every block under an unverified NPV candidate prefix, old or new', () => {
    const review = blocksToReview(previous, { majnum: current, identifiants: IDENTIFIANTS }, codes);
    expect(review.npvCandidates.map((block) => [block.prefix, block.territory])).toEqual([
      ['0268800', 'Mayotte'],
      ['0598700', 'Guadeloupe, St Martin et St Barthélemy'],
    ]);
  });

  it('lists no new block without a previous snapshot, and says so', () => {
    const review = blocksToReview(undefined, { majnum: current, identifiants: IDENTIFIANTS }, codes);
    expect(review).toMatchObject({ compared: false, callCentre: [], npv: [] });
    expect(formatBlocksToReview(review, 'x')[0]).toBe('New blocks: no earlier snapshot to compare with (x)');
  });

  it('reads the newest allocation date as the data date', () => {
    expect(newestAllocationDate(current)).toBe('2026-05-06');
    expect(newestAllocationDate(HEADER)).toBe('');
  });
});
