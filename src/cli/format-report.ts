// The readable summary `phone-rep lookup` prints: the number's facts first (they hold whatever
// the sources say), then the verdict, then each source with its figures and comments. Pure. Scraped text is stripped of control
// characters before it reaches a terminal, so a comment cannot carry escape sequences.
import { SOURCE_SLOTS, type Risk, type SourceDataBySlot, type SourceSlot } from '../domain/report.js';
import type { ScoreSource } from '../domain/score.js';
import { figureValue, SLOT_DISPLAY, type FigureDisplay } from '../domain/slot-display.js';
import { countWords, words } from '../domain/wording/catalogue.js';
import { readListMatch, readReports, type ReportBody, type SourceMetaView } from './api-answer.js';
import { formatFacts, hintsOf, readHints } from './facts.js';
import { sanitizeForTerminal } from './sanitize.js';

export { sanitizeForTerminal } from './sanitize.js';

/** A slot's title in the CLI: the catalogue's English words for it (the slot display table). */
export const slotTitle = (slot: SourceSlot): string => words('en', SLOT_DISPLAY[slot].title);

/** Plain words for the risk level: what a person should make of the number. */
export const VERDICTS: Record<Risk, string> = {
  trustworthy: 'likely safe',
  neutral: 'neutral',
  suspicious: 'likely unwanted',
  unknown: 'no rating',
};

export interface Verdict {
  verdict: string;
  score: number | null;
  risk: Risk;
  scoreSource: ScoreSource | null;
}

/** The verdict the server gave in the full report's meta (the CLI never computes a score). */
export function verdictOf(body: ReportBody): Verdict {
  const { score, risk, scoreSource } = body.meta;
  return { verdict: VERDICTS[risk], score, risk, scoreSource };
}

/** `status (reason)`, with the cache state when the data is an older copy. */
export function describeSourceStatus(meta: SourceMetaView | undefined): string {
  if (meta === undefined) return 'unknown';
  const reason = meta.reason === undefined ? '' : ` (${sanitizeForTerminal(meta.reason)})`;
  if (meta.status === 'ok' && meta.cache === 'stale') return `ok, older copy${reason}`;
  return `${meta.status}${reason}`;
}

const show = (value: string | number | null): string => (value === null || value === '' ? '—' : String(value));
/** `1 search`, `10 searches`: the plural given in full, since English does not just add an s. */
export const plural = (count: number, singular: string, pluralForm = `${singular}s`): string =>
  `${count} ${count === 1 ? singular : pluralForm}`;

export function formatReportSummary(body: ReportBody): string {
  const { data, meta } = body;
  const verdict = verdictOf(body);
  const lines: string[] = formatFacts({
    number: data.number,
    phoneInfo: data.phoneInfo,
    hints: readHints(meta) ?? hintsOf(data.phoneInfo),
  });
  lines.push('');
  const from =
    verdict.scoreSource === 'primary'
      ? ', from the primary source'
      : verdict.scoreSource === 'derived'
        ? ', derived from community and signals'
        : '';
  lines.push(
    verdict.score === null
      ? `Verdict: ${verdict.verdict.toUpperCase()} (no source has a rating; risk unknown)`
      : `Verdict: ${verdict.verdict.toUpperCase()} (score ${verdict.score}/9, ${verdict.risk}${from})`,
  );

  lines.push(...formatDeployment(meta));

  lines.push('');
  for (const slot of SOURCE_SLOTS) lines.push(...formatSlot(slot, data.sources, meta.sources[slot]));
  return `${lines.join('\n')}\n`;
}

/** What this deployment itself says: the operator's deciding rule, and its reporters' votes. */
function formatDeployment(meta: ReportBody['meta']): string[] {
  const lines: string[] = [];
  const match = readListMatch(meta);
  if (match !== undefined) {
    const label = match.label === undefined || match.label === '' ? '' : `, ${sanitizeForTerminal(match.label)}`;
    lines.push(`Operator's ${sanitizeForTerminal(match.list)} list: ${sanitizeForTerminal(match.rule)}${label}`);
  }
  const reports = readReports(meta);
  if (reports !== undefined) {
    const categories = Object.entries(reports.categories)
      .map(([rating, count]) => `${sanitizeForTerminal(rating)} ${count}`)
      .join(', ');
    const last = reports.lastReportAt === undefined ? '' : `; last ${sanitizeForTerminal(reports.lastReportAt)}`;
    lines.push(
      `Reported here: ${sanitizeForTerminal(reports.verdict)} (${plural(reports.reporters, 'reporter')}${categories === '' ? '' : `; ${categories}`}${last})`,
    );
  }
  return lines;
}

/**
 * One figure as the summary writes it, by its unit (the slot display table): `score 8`,
 * `danger 84%`, `1234 searches` / `1 comment` (the catalogue's plural), `top category …`; a
 * word or date the upstream left empty is left out.
 */
function formatFigure(figure: FigureDisplay, value: number | string | null): string | undefined {
  switch (figure.unit) {
    case 'count':
      return typeof value === 'number'
        ? `${value} ${countWords('en', figure.label, value)}`
        : `— ${countWords('en', figure.label, 0)}`;
    case 'percent':
      return `${words('en', figure.label)} ${typeof value === 'number' ? words('en', 'format.percent', { value }) : '—'}`;
    case 'score':
      return `${words('en', figure.label)} ${show(value)}`;
    case 'word':
    case 'date':
      return typeof value === 'string' && value !== ''
        ? `${words('en', figure.label)} ${sanitizeForTerminal(value)}`
        : undefined;
  }
}

/** A slot's lines: its title and status, then, when it answered, its figures and comments. */
function formatSlot<S extends SourceSlot>(slot: S, sources: SourceDataBySlot, meta: SourceMetaView): string[] {
  const display = SLOT_DISPLAY[slot];
  const lines = [`${slotTitle(slot)}: ${describeSourceStatus(meta)}`];
  if (meta.status !== 'ok') return lines;
  const data = sources[slot];
  const figures = display.figures.map((figure) => formatFigure(figure as FigureDisplay, figureValue<S>(data, figure)));
  lines.push(`  ${figures.filter((text): text is string => text !== undefined).join(' · ')}`);
  for (const comment of data.commentList) {
    const fields = comment as unknown as Readonly<Record<string, string>>;
    const tagKeys: ReadonlyArray<string | undefined> = [display.comment.author, display.comment.tag];
    const tags = tagKeys.map((key) => (key === undefined ? '' : (fields[key] ?? '')));
    lines.push(formatComment(fields.date ?? '', tags, fields.text ?? ''));
  }
  return lines;
}

function formatComment(date: string, tags: string[], text: string): string {
  const head = [date, ...tags.filter((tag) => tag !== '').map((tag) => `[${tag}]`)]
    .filter((part) => part !== '')
    .map(sanitizeForTerminal);
  return `  - ${head.join(' ')}${head.length > 0 ? ': ' : ''}${sanitizeForTerminal(text)}`;
}
