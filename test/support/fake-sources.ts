// Sources that answer from memory, for contract tests that exercise the HTTP layer and the
// engine without any upstream. They implement the same Source interface as the adapters.
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../../src/domain/report.js';
import type { Source, SourceOutcome, SourcesBySlot } from '../../src/domain/ports/source.js';

export const SAMPLE_DATA: SourceDataBySlot = {
  primary: {
    score: 8,
    searches: 1234,
    commentsCount: 2,
    commentList: [
      { author: 'Camille', text: 'Appel insistant pour une isolation à 1 euro.', date: '12/03/2024', callerType: 'Démarchage' },
      { author: 'Anonyme', text: 'Raccroche dès que je réponds.', date: '02/02/2024', callerType: 'Démarchage' },
    ],
  },
  community: {
    dangerPercent: 84,
    visits: 2535,
    commentsCount: 1,
    topCategory: 'Gênant',
    lastCommentDate: '11/03/2024',
    commentList: [{ text: 'Toujours le même message enregistré.', date: '11/03/2024', category: 'Gênant' }],
  },
  signals: {
    spamScore: 50,
    reportsCount: 17,
    callerType: 'Vendeur par téléphone',
    commentList: [],
  },
};

export type Responder<S extends SourceSlot> = (number: ParsedPhoneNumber, signal: AbortSignal) => SourceOutcome<SourceDataBySlot[S]> | Promise<SourceOutcome<SourceDataBySlot[S]>>;

export interface FakeSource<S extends SourceSlot> extends Source<S> {
  calls: number;
  respond: Responder<S>;
}

export function fakeSource<S extends SourceSlot>(slot: S, respond: Responder<S>): FakeSource<S> {
  const source: FakeSource<S> = {
    slot,
    name: `fake-${slot}`,
    calls: 0,
    respond,
    async lookup(number, signal) {
      source.calls += 1;
      return source.respond(number, signal);
    },
  };
  return source;
}

export type FakeSources = { [S in SourceSlot]: FakeSource<S> } & SourcesBySlot;

/** Three sources that all answer the sample data. */
export function healthyFakeSources(): FakeSources {
  return {
    primary: fakeSource('primary', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.primary) })),
    community: fakeSource('community', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.community) })),
    signals: fakeSource('signals', () => ({ status: 'ok', data: structuredClone(SAMPLE_DATA.signals) })),
  };
}
