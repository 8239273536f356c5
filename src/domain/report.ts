// The report model of the spec (part 2): what a lookup answers, field for field.
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
    community: { dangerPercent: null, visits: null, commentsCount: 0, topCategory: '', lastCommentDate: '', commentList: [] },
    signals: { spamScore: null, reportsCount: null, callerType: '', commentList: [] },
  };
}
