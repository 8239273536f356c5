// The readable summary `phone-rep lookup` prints: the number's facts first (they hold whatever
// the sources say), then the verdict, then each source with its figures and comments. Pure. Scraped text is stripped of control
// characters before it reaches a terminal, so a comment cannot carry escape sequences.
import type { Risk, SourceSlot } from '../domain/report.js';
import type { ScoreSource } from '../domain/score.js';
import type { ReportBody, SourceMetaView } from './api-answer.js';
import { formatFacts, hintsOf, readHints } from './facts.js';
import { sanitizeForTerminal } from './sanitize.js';

export { sanitizeForTerminal } from './sanitize.js';

export const SLOT_TITLES: Record<SourceSlot, string> = {
  primary: 'Primary (tellows)',
  community: 'Community (numeroinconnu.fr)',
  signals: 'Signals (telguarder)',
};

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
export const plural = (count: number, singular: string, pluralForm = `${singular}s`): string => `${count} ${count === 1 ? singular : pluralForm}`;

export function formatReportSummary(body: ReportBody): string {
  const { data, meta } = body;
  const verdict = verdictOf(body);
  const lines: string[] = formatFacts({ number: data.number, phoneInfo: data.phoneInfo, hints: readHints(meta) ?? hintsOf(data.phoneInfo) });
  lines.push('');
  const from = verdict.scoreSource === 'primary' ? ', from the primary source' : verdict.scoreSource === 'derived' ? ', derived from community and signals' : '';
  lines.push(
    verdict.score === null
      ? `Verdict: ${verdict.verdict.toUpperCase()} (no source has a rating; risk unknown)`
      : `Verdict: ${verdict.verdict.toUpperCase()} (score ${verdict.score}/9, ${verdict.risk}${from})`,
  );

  const { primary, community, signals } = data.sources;
  lines.push('');
  lines.push(`${SLOT_TITLES.primary}: ${describeSourceStatus(meta.sources.primary)}`);
  if (meta.sources.primary.status === 'ok') {
    lines.push(`  score ${show(primary.score)} · ${plural(primary.searches, 'search', 'searches')} · ${plural(primary.commentsCount, 'comment')}`);
    for (const c of primary.commentList) lines.push(formatComment(c.date, [c.author, c.callerType], c.text));
  }
  lines.push(`${SLOT_TITLES.community}: ${describeSourceStatus(meta.sources.community)}`);
  if (meta.sources.community.status === 'ok') {
    lines.push(
      `  danger ${community.dangerPercent === null ? '—' : `${community.dangerPercent} %`} · ${community.visits === null ? '— visits' : plural(community.visits, 'visit')} · ${plural(community.commentsCount, 'comment')}` +
        (community.topCategory === '' ? '' : ` · top category ${sanitizeForTerminal(community.topCategory)}`) +
        (community.lastCommentDate === '' ? '' : ` · last comment ${sanitizeForTerminal(community.lastCommentDate)}`),
    );
    for (const c of community.commentList) lines.push(formatComment(c.date, [c.category], c.text));
  }
  lines.push(`${SLOT_TITLES.signals}: ${describeSourceStatus(meta.sources.signals)}`);
  if (meta.sources.signals.status === 'ok') {
    lines.push(
      `  spam score ${signals.spamScore === null ? '—' : `${signals.spamScore} %`} · ${signals.reportsCount === null ? '— reports' : plural(signals.reportsCount, 'report')}` +
        (signals.callerType === '' ? '' : ` · caller type ${sanitizeForTerminal(signals.callerType)}`),
    );
    for (const c of signals.commentList) lines.push(formatComment(c.date, [c.callerType], c.text));
  }
  return `${lines.join('\n')}\n`;
}

function formatComment(date: string, tags: string[], text: string): string {
  const head = [date, ...tags.filter((tag) => tag !== '').map((tag) => `[${tag}]`)].filter((part) => part !== '').map(sanitizeForTerminal);
  return `  - ${head.join(' ')}${head.length > 0 ? ': ' : ''}${sanitizeForTerminal(text)}`;
}
