// How each slot of a report is shown to people, the one table of it: the slot's title, the
// figures shown in order with their unit, the comment members shown beside each comment, and
// the columns `phone-rep batch` writes. The lookup page (served this table as JSON beside its
// words, src/http/plugins/web-page.ts), the CLI's summary and batch rows (src/cli) and the
// OpenAPI descriptions of the slots (src/http/schemas/phone.ts) are all built from it; none of them
// names a slot's fields. Words are catalogue keys (wording/catalogue.ts), so a title or label
// missing from the catalogue does not compile.
//
// It lives beside the slot's data types (report.ts) rather than in src/sources, because the
// HTTP layer and the page may not import src/sources (the dependency rule in
// docs/architecture.md); each entry names its upstream, and src/sources/slot-display.test.ts
// holds it to the upstream descriptions (src/sources/upstreams.ts). A fourth slot does not
// compile until it has its entry here (the table is a mapped type over SourceSlot).
import type { SourceDataBySlot, SourceSlot } from './report.js';
import type { CountKey, WordKey } from './wording/catalogue.js';

/** The data fields of a slot whose value is of type V. */
type FieldOf<S extends SourceSlot, V> = {
  [K in keyof SourceDataBySlot[S]]-?: SourceDataBySlot[S][K] extends V ? K : never;
}[keyof SourceDataBySlot[S]] &
  string;

/** The members of one comment of a slot. */
type CommentFieldOf<S extends SourceSlot> = keyof SourceDataBySlot[S]['commentList'][number] & string;

/**
 * One figure of a slot. Its unit says how it is written:
 * - `score`: the upstream's own 1–9 score;
 * - `percent`: 0–100, written with the catalogue's `format.percent`;
 * - `count`: a whole number whose label follows the count's plural (`1 commentaire`, `2 commentaires`);
 * - `word`: text the upstream wrote (a category, a caller type), shown as it came;
 * - `date`: DD/MM/YYYY as the upstream wrote it.
 * `column` is the figure's batch column (`<slot>_<column>`), for the figures a batch row carries.
 */
export type FigureDisplay<S extends SourceSlot = SourceSlot> =
  | { unit: 'count'; field: FieldOf<S, number | null>; label: CountKey; column?: string }
  | { unit: 'score' | 'percent'; field: FieldOf<S, number | null>; label: WordKey; column?: string }
  | { unit: 'word' | 'date'; field: FieldOf<S, string>; label: WordKey; column?: string };

export type FigureUnit = FigureDisplay['unit'];

export interface SlotDisplay<S extends SourceSlot = SourceSlot> {
  /** The upstream that fills the slot, as its description names it (`UpstreamDescription.name`). */
  upstream: string;
  /** The slot's title in the catalogue (`Source principale (tellows)`). */
  title: WordKey;
  /** What the slot's data means, for the API's reference (OpenAPI). */
  summary: string;
  figures: ReadonlyArray<FigureDisplay<S>>;
  /** The comment member shown as its tag (a caller type, a category) and, when the upstream gives one, its author. */
  comment: { tag: CommentFieldOf<S>; author?: CommentFieldOf<S> };
}

export type SlotDisplays = { readonly [S in SourceSlot]: SlotDisplay<S> };

export const SLOT_DISPLAY: SlotDisplays = {
  primary: {
    upstream: 'tellows',
    title: 'slot.primary',
    summary:
      'tellows: its own 1–9 score (1 trustworthy, 9 dangerous), how often the number was searched, and its comments.',
    figures: [
      { unit: 'score', field: 'score', label: 'figure.score', column: 'score' },
      { unit: 'count', field: 'searches', label: 'figure.searches', column: 'searches' },
      { unit: 'count', field: 'commentsCount', label: 'figure.comments', column: 'comments' },
    ],
    comment: { tag: 'callerType', author: 'author' },
  },
  community: {
    upstream: 'numeroinconnu',
    title: 'slot.community',
    summary:
      'numeroinconnu.fr: the community’s danger percentage (0–100), visits, the most reported category and the categorised comments.',
    figures: [
      { unit: 'percent', field: 'dangerPercent', label: 'figure.danger', column: 'danger_percent' },
      { unit: 'count', field: 'visits', label: 'figure.visits', column: 'visits' },
      { unit: 'count', field: 'commentsCount', label: 'figure.comments', column: 'comments' },
      { unit: 'word', field: 'topCategory', label: 'figure.topCategory' },
      { unit: 'date', field: 'lastCommentDate', label: 'figure.lastComment' },
    ],
    comment: { tag: 'category' },
  },
  signals: {
    upstream: 'telguarder',
    title: 'slot.signals',
    summary:
      'telguarder: a spam score (0–100, higher is riskier), the number of reports, the most given caller type and the comments.',
    figures: [
      { unit: 'percent', field: 'spamScore', label: 'figure.spamScore', column: 'spam_score' },
      { unit: 'count', field: 'reportsCount', label: 'figure.reports', column: 'reports' },
      { unit: 'word', field: 'callerType', label: 'figure.callerType' },
    ],
    comment: { tag: 'callerType' },
  },
};

/** A figure's value in a slot's data (number, string or null), read by its field name. */
export function figureValue<S extends SourceSlot>(
  data: SourceDataBySlot[S],
  figure: FigureDisplay<S>,
): number | string | null {
  const value: unknown = (data as unknown as Readonly<Record<string, unknown>>)[figure.field];
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}
