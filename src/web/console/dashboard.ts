// The dashboard: calls screened by verdict over 24 hours and 7 days (plain SVG), what decided
// them, each source's state, the feed's clients, reports received and tokens last used.
import { DECIDED_BY, VERDICTS, getJson, type StatsBucket, type Status, type Verdict } from './api.js';
import { fill, h, s, table } from './dom.js';
import { formatCount, formatDay, formatHour, formatTime, t } from './i18n.js';
import { describeFailure } from './notice.js';

type Totals = Record<Verdict, number>;

const zero = (): Totals => ({ block: 0, warn: 0, allow: 0, unknown: 0 });

function sum(buckets: readonly StatsBucket[]): Totals {
  const totals = zero();
  for (const bucket of buckets) for (const verdict of VERDICTS) totals[verdict] += bucket.verdicts[verdict] ?? 0;
  return totals;
}

/** The hourly buckets of the week, one bar per local day, oldest first. */
function byDay(buckets: readonly StatsBucket[]): Array<{ label: string; totals: Totals }> {
  const days = new Map<string, { label: string; totals: Totals }>();
  for (const bucket of buckets) {
    const date = new Date(bucket.hour);
    const key = date.toDateString();
    const day = days.get(key) ?? { label: formatDay(date), totals: zero() };
    for (const verdict of VERDICTS) day.totals[verdict] += bucket.verdicts[verdict] ?? 0;
    days.set(key, day);
  }
  return [...days.values()];
}

const summaryOf = (totals: Totals): string =>
  VERDICTS.map((verdict) => `${t(`verdict.${verdict}`)} ${formatCount(totals[verdict])}`).join(', ');

/** Stacked bars, one per period; the figures themselves are in the table beside it. */
function chart(bars: ReadonlyArray<{ label: string; totals: Totals }>, label: string, everyNthLabel: number): Element {
  const width = 640;
  const height = 200;
  const bottom = 24;
  const top = 8;
  const left = 32;
  const max = Math.max(1, ...bars.map((bar) => VERDICTS.reduce((total, verdict) => total + bar.totals[verdict], 0)));
  const step = (width - left) / Math.max(1, bars.length);
  const scale = (height - bottom - top) / max;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'chart',
    role: 'img',
    'aria-label': label,
    focusable: 'false',
  });
  svg.appendChild(s('text', { x: 0, y: top + 8, class: 'axis' }, formatCount(max)));
  svg.appendChild(s('text', { x: 0, y: height - bottom, class: 'axis' }, '0'));
  svg.appendChild(s('line', { x1: left, x2: width, y1: height - bottom, y2: height - bottom, class: 'baseline' }));
  bars.forEach((bar, index) => {
    let y = height - bottom;
    const x = left + index * step + step * 0.15;
    for (const verdict of VERDICTS) {
      const size = bar.totals[verdict] * scale;
      if (size <= 0) continue;
      y -= size;
      svg.appendChild(s('rect', { x, y, width: step * 0.7, height: size, class: `bar v-${verdict}` }));
    }
    if (index % everyNthLabel === 0)
      svg.appendChild(
        s('text', { x: x + step * 0.35, y: height - 6, class: 'axis', 'text-anchor': 'middle' }, bar.label),
      );
  });
  return svg;
}

function legend(): HTMLElement {
  return h(
    'ul',
    { class: 'legend' },
    ...VERDICTS.map((verdict) =>
      h('li', {}, h('span', { class: `swatch v-${verdict}`, 'aria-hidden': 'true' }), t(`verdict.${verdict}`)),
    ),
  );
}

function section(id: string, title: string, ...content: Array<Node | null>): HTMLElement {
  return h(
    'section',
    { class: 'panel', id, 'aria-labelledby': `${id}-title` },
    h('h3', { id: `${id}-title` }, title),
    ...content,
  );
}

function failed(id: string, title: string, error: unknown): HTMLElement {
  return section(id, title, h('p', { class: 'error' }, describeFailure(error)));
}

async function statsSections(): Promise<HTMLElement[]> {
  let day: StatsBucket[];
  let week: StatsBucket[];
  try {
    [day, week] = await Promise.all([
      getJson<StatsBucket[]>('/admin/stats?hours=24'),
      getJson<StatsBucket[]>('/admin/stats?hours=168'),
    ]);
  } catch (error) {
    return [failed('dash-charts', t('dash.totals'), error)];
  }
  const dayTotals = sum(day);
  const weekTotals = sum(week);
  const hours = day.map((bucket) => ({ label: formatHour(new Date(bucket.hour)), totals: sum([bucket]) }));
  const totalOf = (totals: Totals): number => VERDICTS.reduce((total, verdict) => total + totals[verdict], 0);
  const row = (period: string, totals: Totals, id: string): Array<Node | string> => [
    period,
    ...VERDICTS.map((verdict) => h('span', { id: `${id}-${verdict}` }, formatCount(totals[verdict]))),
    h('span', { id: `${id}-total` }, formatCount(totalOf(totals))),
  ];
  const decided = DECIDED_BY.map((name) => [
    t(`decided.${name}`),
    h(
      'span',
      { id: `decided-${name}` },
      formatCount(day.reduce((total, bucket) => total + (bucket.decidedBy[name] ?? 0), 0)),
    ),
  ]);
  return [
    section(
      'dash-charts',
      t('dash.totals'),
      table(
        t('dash.totals'),
        [t('dash.period'), ...VERDICTS.map((verdict) => t(`verdict.${verdict}`)), t('dash.total')],
        [row(t('dash.day'), dayTotals, 'totals-24h'), row(t('dash.week'), weekTotals, 'totals-7d')],
      ),
      legend(),
      h(
        'div',
        { class: 'charts' },
        h(
          'figure',
          {},
          chart(hours, t('dash.chartDay', { summary: summaryOf(dayTotals) }), 3),
          h('figcaption', {}, t('dash.day')),
        ),
        h(
          'figure',
          {},
          chart(byDay(week), t('dash.chartWeek', { summary: summaryOf(weekTotals) }), 1),
          h('figcaption', {}, t('dash.week')),
        ),
      ),
    ),
    section(
      'dash-decided',
      t('dash.decidedTitle'),
      table(t('dash.decidedTitle'), [t('common.decidedBy'), t('dash.count')], decided),
    ),
  ];
}

async function statusSections(): Promise<HTMLElement[]> {
  let status: Status;
  try {
    status = await getJson<Status>('/admin/status');
  } catch (error) {
    return [failed('dash-sources', t('dash.sourcesTitle'), error)];
  }
  return [
    section(
      'dash-sources',
      t('dash.sourcesTitle'),
      table(
        t('dash.sourcesTitle'),
        [t('dash.source'), t('dash.state'), t('dash.breaker'), t('dash.budget')],
        status.sources.map((source) => [
          `${source.name} (${source.slot})`,
          h(
            'span',
            { class: source.state === 'ok' ? 'state-ok' : 'state-failing' },
            source.state === 'ok' ? t('dash.ok') : t('dash.failing', { since: formatTime(source.failingSince) }),
          ),
          t(`dash.breaker.${source.breaker}`),
          `${formatCount(source.budgetUsed)} / ${formatCount(source.budgetPerMinute)}`,
        ]),
      ),
    ),
    section(
      'dash-feed',
      t('dash.feedTitle'),
      status.feedClients.length === 0
        ? h('p', {}, t('common.none'))
        : table(
            t('dash.feedTitle'),
            [t('dash.client'), t('dash.lastFetch'), t('dash.entries')],
            status.feedClients.map((client) => [
              client.client,
              formatTime(client.lastFetchAt),
              formatCount(client.entries),
            ]),
          ),
    ),
    section(
      'dash-reports',
      t('dash.reportsTitle'),
      h(
        'dl',
        { class: 'figures' },
        h('dt', {}, t('dash.reports24h')),
        h('dd', { id: 'reports-24h' }, formatCount(status.reports.last24h)),
        h('dt', {}, t('dash.reports7d')),
        h('dd', { id: 'reports-7d' }, formatCount(status.reports.last7d)),
      ),
    ),
    section(
      'dash-tokens',
      t('dash.tokensTitle'),
      status.tokens.length === 0
        ? h('p', {}, t('common.none'))
        : table(
            t('dash.tokensTitle'),
            [t('dash.label'), t('dash.lastUsed')],
            status.tokens.map((token) => [token.label, formatTime(token.lastUsedAt)]),
          ),
    ),
  ];
}

export async function renderDashboard(view: HTMLElement): Promise<void> {
  const [stats, status] = await Promise.all([statsSections(), statusSections()]);
  fill(view, h('div', { class: 'grid' }, ...stats, ...status));
}
