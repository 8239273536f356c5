// The report model (docs/api.md#routes): what a lookup answers, field for field.
// Only the members the spec lists live here; everything else goes in `meta`.

export interface PhoneInfo {
  national: string;
  e164: string;
  type: string;
  rangeLabel: string;
  originalCarrier: string;
  region: string;
  isNPV: boolean;
}

export interface PrimaryComment {
  author: string;
  text: string;
  /** DD/MM/YYYY, or "" when the upstream gave no readable date. */
  date: string;
  callerType: string;
}

export interface PrimaryData {
  /** 1–9, or null when the upstream has no rating. */
  score: number | null;
  searches: number;
  commentsCount: number;
  commentList: PrimaryComment[];
}

export interface CommunityComment {
  text: string;
  date: string;
  category: string;
}

export interface CommunityData {
  dangerPercent: number | null;
  visits: number | null;
  commentsCount: number;
  topCategory: string;
  lastCommentDate: string;
  commentList: CommunityComment[];
}

export interface SignalsComment {
  text: string;
  date: string;
  callerType: string;
}

export interface SignalsData {
  spamScore: number | null;
  reportsCount: number | null;
  callerType: string;
  commentList: SignalsComment[];
}

export interface SourceDataBySlot {
  primary: PrimaryData;
  community: CommunityData;
  signals: SignalsData;
}

export type SourceSlot = keyof SourceDataBySlot;
/** The three slots of a report, in their order on the wire. */
export const SOURCE_SLOTS = ['primary', 'community', 'signals'] as const satisfies readonly SourceSlot[];
const SOURCE_SLOT_SET: ReadonlySet<string> = new Set(SOURCE_SLOTS);
export const isSourceSlot = (value: string): value is SourceSlot => SOURCE_SLOT_SET.has(value);

/** Any record with one member per slot, each of its own type (`LookupResult`, `SourcesBySlot`…). */
export type PerSlot = { [S in SourceSlot]: unknown };

/**
 * The one walk over the slots every per-slot record is built by (engine, report builder,
 * wiring): a fourth source or a new status is one change to SOURCE_SLOTS and the slot's types,
 * not an edit of each place that wrote the three out. TypeScript does not see that a generic
 * `F<S>` is `M[S]` when M maps each slot to F of it, so such a `make` says so (`as M[typeof slot]`).
 */
export function mapSlots<M extends PerSlot>(make: <S extends SourceSlot>(slot: S) => M[S]): M {
  const record: Partial<Record<SourceSlot, unknown>> = {};
  for (const slot of SOURCE_SLOTS) record[slot] = make(slot);
  return record as M;
}

/** mapSlots for values that come later: every slot's promise at once, settled together. */
export async function settleSlots<M extends PerSlot>(
  make: <S extends SourceSlot>(slot: S) => Promise<M[S]>,
): Promise<M> {
  const settled = await Promise.all(SOURCE_SLOTS.map((slot) => make(slot)));
  const record: Partial<Record<SourceSlot, unknown>> = {};
  SOURCE_SLOTS.forEach((slot, index) => (record[slot] = settled[index]));
  return record as M;
}

export interface Report {
  number: string;
  phoneInfo: PhoneInfo;
  sources: SourceDataBySlot;
}

export type Risk = 'trustworthy' | 'neutral' | 'suspicious' | 'unknown';

export interface ScoreResult {
  number: string;
  score: number | null;
  risk: Risk;
}

/** What a slot holds when its source could not give data: every field empty, never zeros that pass for "clean". */
export function emptySourceData(): SourceDataBySlot {
  return {
    primary: { score: null, searches: 0, commentsCount: 0, commentList: [] },
    community: {
      dangerPercent: null,
      visits: null,
      commentsCount: 0,
      topCategory: '',
      lastCommentDate: '',
      commentList: [],
    },
    signals: { spamScore: null, reportsCount: null, callerType: '', commentList: [] },
  };
}
