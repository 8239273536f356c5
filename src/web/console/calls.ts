// The recent calls (GET /admin/calls), filtered by verdict, what decided and a number prefix; on
// each caller, two clicks: let through for 1 hour, 1 day or always (an allow rule with
// expiresAt), block with a label, or look up what the service answers now.
import { change, DECIDED_BY, VERDICTS, getJson, segment, type Call } from './api.js';
import { checkPanel } from './check.js';
import { field, fill, h, select, table } from './dom.js';
import { formatTime, t } from './i18n.js';
import { attempt, notify } from './notice.js';

const HOUR_MS = 3_600_000;
let filters = { verdict: '', decidedBy: '', prefix: '' };

async function letThrough(number: string, forMs: number | undefined): Promise<void> {
  const expiresAt = forMs === undefined ? undefined : new Date(Date.now() + forMs).toISOString();
  await change('PUT', `/admin/lists/rules/${segment(number)}`, {
    list: 'allow',
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
  notify(
    expiresAt === undefined
      ? t('calls.allowedAlways', { number })
      : t('calls.allowed', { number, until: formatTime(expiresAt) }),
  );
}

async function block(number: string, label: string): Promise<void> {
  await change('PUT', `/admin/lists/rules/${segment(number)}`, {
    list: 'block',
    ...(label.trim() === '' ? {} : { label: label.trim() }),
  });
  notify(t('calls.blocked', { number }));
}

function actions(call: Call, index: number, lookUps: HTMLElement): HTMLElement {
  const label = h('input', { type: 'text', maxlength: '200', autocomplete: 'off' });
  const id = `call-${index}`;
  return h(
    'details',
    { class: 'actions' },
    h('summary', {}, t('common.actions'), h('span', { class: 'visually-hidden' }, ` ${call.number}`)),
    h(
      'div',
      { class: 'action-list', role: 'group', 'aria-label': t('calls.actionsFor', { number: call.number }) },
      h(
        'button',
        { type: 'button', class: 'let-hour', onclick: () => attempt(() => letThrough(call.number, HOUR_MS)) },
        t('calls.letHour'),
      ),
      h(
        'button',
        { type: 'button', class: 'let-day', onclick: () => attempt(() => letThrough(call.number, 24 * HOUR_MS)) },
        t('calls.letDay'),
      ),
      h(
        'button',
        { type: 'button', class: 'let-always', onclick: () => attempt(() => letThrough(call.number, undefined)) },
        t('calls.letAlways'),
      ),
      field(`${id}-label`, t('calls.blockLabel'), label),
      h(
        'button',
        { type: 'button', class: 'block', onclick: () => attempt(() => block(call.number, label.value)) },
        t('calls.block'),
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'look-up',
          onclick: () =>
            attempt(async () => {
              const panel = await checkPanel(call.number, 'call-check');
              fill(lookUps, panel);
              panel.focus();
            }),
        },
        t('calls.lookUp'),
      ),
    ),
  );
}

export async function renderCalls(view: HTMLElement): Promise<void> {
  const verdict = select(
    'verdict',
    [['', t('common.all')], ...VERDICTS.map((name) => [name, t(`verdict.${name}`)] as const)],
    filters.verdict,
  );
  const decidedBy = select(
    'decidedBy',
    [['', t('common.all')], ...DECIDED_BY.map((name) => [name, t(`decided.${name}`)] as const)],
    filters.decidedBy,
  );
  const prefix = h('input', {
    type: 'text',
    inputmode: 'tel',
    autocomplete: 'off',
    maxlength: '20',
    value: filters.prefix,
  });
  const results = h('div', { id: 'calls-results' });
  const lookUps = h('div', { id: 'call-look-up' });
  const load = async (): Promise<void> => {
    const query = new URLSearchParams({ limit: '100' });
    if (filters.verdict !== '') query.set('verdict', filters.verdict);
    if (filters.decidedBy !== '') query.set('decidedBy', filters.decidedBy);
    if (filters.prefix !== '') query.set('prefix', filters.prefix);
    const calls = await getJson<Call[]>(`/admin/calls?${query.toString()}`);
    fill(
      results,
      calls.length === 0
        ? h('p', {}, t('calls.empty'))
        : table(
            t('calls.title'),
            [
              t('calls.time'),
              t('common.number'),
              t('common.verdict'),
              t('common.decidedBy'),
              t('calls.cid'),
              t('common.actions'),
            ],
            calls.map((call, index) => [
              formatTime(call.at),
              h('span', { class: 'number' }, call.number),
              h('span', { class: `verdict v-text-${call.verdict}` }, t(`verdict.${call.verdict}`)),
              t(`decided.${call.decidedBy}`),
              call.cid,
              actions(call, index, lookUps),
            ]),
            { id: 'calls-table' },
          ),
    );
  };
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        filters = { verdict: verdict.value, decidedBy: decidedBy.value, prefix: prefix.value.trim() };
        attempt(load);
      },
    },
    field('calls-verdict', t('common.verdict'), verdict),
    field('calls-decided', t('common.decidedBy'), decidedBy),
    field('calls-prefix', t('calls.prefix'), prefix),
    h('button', { type: 'submit' }, t('common.apply')),
  );
  fill(view, form, results, lookUps);
  await load();
}
