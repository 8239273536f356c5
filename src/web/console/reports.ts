// The numbers this deployment's reporters reported (GET /admin/reports): block or allow one (a
// rule), dismiss it from the review (the evidence is kept), or put it back.
import { change, getJson, segment, type ReportedNumber } from './api.js';
import { field, fill, h, select, table } from './dom.js';
import { formatCount, formatTime, t } from './i18n.js';
import { attempt, notify } from './notice.js';

let state = 'review';

export async function renderReports(view: HTMLElement): Promise<void> {
  const results = h('div', { id: 'reports-results' });
  const chooser = select(
    'state',
    [
      ['review', t('reports.review')],
      ['dismissed', t('reports.dismissed')],
      ['all', t('reports.all')],
    ],
    state,
  );
  const load = async (): Promise<void> => {
    const answer = await getJson<{ total: number; numbers: ReportedNumber[] }>(
      `/admin/reports?state=${encodeURIComponent(state)}&limit=100`,
    );
    const act =
      (run: () => Promise<void>): (() => void) =>
      () =>
        attempt(async () => {
          await run();
          await load();
        });
    fill(
      results,
      answer.numbers.length === 0
        ? h('p', {}, t('reports.empty'))
        : table(
            t('reports.title'),
            [
              t('common.number'),
              t('common.verdict'),
              t('reports.reporters'),
              t('reports.ratings'),
              t('reports.labels'),
              t('reports.comments'),
              t('reports.last'),
              t('common.actions'),
            ],
            answer.numbers.map((reported) => [
              h('span', { class: 'number' }, reported.number),
              t(`verdict.${reported.verdict}`),
              formatCount(reported.reporters),
              Object.entries(reported.ratings)
                .map(([rating, count]) => `${rating} ${formatCount(count)}`)
                .join(', '),
              reported.labels.join(', '),
              reported.comments.length === 0
                ? ''
                : h('ul', { class: 'comments' }, ...reported.comments.map((comment) => h('li', {}, comment))),
              formatTime(reported.lastAt),
              h(
                'span',
                { class: 'row-actions' },
                h(
                  'button',
                  {
                    type: 'button',
                    'aria-label': `${t('reports.block')} ${reported.number}`,
                    onclick: act(async () => {
                      await change('PUT', `/admin/lists/rules/${segment(reported.number)}`, { list: 'block' });
                      notify(t('calls.blocked', { number: reported.number }));
                    }),
                  },
                  t('reports.block'),
                ),
                h(
                  'button',
                  {
                    type: 'button',
                    'aria-label': `${t('reports.allow')} ${reported.number}`,
                    onclick: act(async () => {
                      await change('PUT', `/admin/lists/rules/${segment(reported.number)}`, { list: 'allow' });
                      notify(t('calls.allowedAlways', { number: reported.number }));
                    }),
                  },
                  t('reports.allow'),
                ),
                reported.dismissed
                  ? h(
                      'button',
                      {
                        type: 'button',
                        'aria-label': `${t('reports.restore')} ${reported.number}`,
                        onclick: act(async () => {
                          await change('DELETE', `/admin/reports/${segment(reported.number)}/dismiss`);
                        }),
                      },
                      t('reports.restore'),
                    )
                  : h(
                      'button',
                      {
                        type: 'button',
                        'aria-label': `${t('reports.dismiss')} ${reported.number}`,
                        onclick: act(async () => {
                          await change('POST', `/admin/reports/${segment(reported.number)}/dismiss`);
                          notify(t('reports.dismissedDone', { number: reported.number }));
                        }),
                      },
                      t('reports.dismiss'),
                    ),
              ),
            ]),
            { id: 'reports-table' },
          ),
    );
  };
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (event: Event) => {
        event.preventDefault();
        state = chooser.value;
        attempt(load);
      },
    },
    field('reports-state', t('reports.state'), chooser),
    h('button', { type: 'submit' }, t('common.apply')),
  );
  fill(view, form, results);
  await load();
}
