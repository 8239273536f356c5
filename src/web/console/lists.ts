// The operator's lists: search and page through the rules (GET /admin/lists/search), add, edit
// and remove one (PUT and DELETE /admin/lists/rules/:rule), import and export CSV, and the rule
// that decides for a typed number (GET /admin/lists/decide/:number).
import { change, getJson, getText, segment, type Decide, type ListRule } from './api.js';
import { field, fill, h, select, table } from './dom.js';
import { formatCount, formatTime, t } from './i18n.js';
import { attempt, notify } from './notice.js';

const PAGE = 50;
interface SearchAnswer {
  total: number;
  offset: number;
  limit: number;
  rules: ListRule[];
}
let search = { q: '', list: '', offset: 0 };

/** `2026-12-01T10:00` (a datetime-local input, the operator's time) ↔ ISO 8601. */
const toLocalInput = (iso: string | undefined): string => {
  if (iso === undefined) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string): string | undefined =>
  value === '' ? undefined : new Date(value).toISOString();

export async function renderLists(view: HTMLElement): Promise<void> {
  const results = h('div', { id: 'rules-results' });
  const q = h('input', { type: 'search', autocomplete: 'off', maxlength: '100', value: search.q });
  const list = select(
    'list',
    [
      ['', t('common.all')],
      ['allow', t('lists.allow')],
      ['block', t('lists.block')],
    ],
    search.list,
  );

  // The add and edit form: one form, filled by "Edit".
  const ruleInput = h('input', { type: 'text', autocomplete: 'off', maxlength: '40', required: true });
  const listInput = select('list', [
    ['block', t('lists.block')],
    ['allow', t('lists.allow')],
  ]);
  const labelInput = h('input', { type: 'text', autocomplete: 'off', maxlength: '200' });
  const noteInput = h('input', { type: 'text', autocomplete: 'off', maxlength: '500' });
  const expiresInput = h('input', { type: 'datetime-local' });
  const formTitle = h('h3', { id: 'rule-form-title', tabindex: '-1' }, t('lists.formAdd'));
  const edit = (rule: ListRule): void => {
    ruleInput.value = rule.rule;
    listInput.value = rule.list;
    labelInput.value = rule.label ?? '';
    noteInput.value = rule.note ?? '';
    expiresInput.value = toLocalInput(rule.expiresAt);
    formTitle.textContent = t('lists.formEdit');
    ruleInput.focus();
  };

  const load = async (): Promise<void> => {
    const query = new URLSearchParams({ offset: String(search.offset), limit: String(PAGE) });
    if (search.q !== '') query.set('q', search.q);
    if (search.list !== '') query.set('list', search.list);
    const answer = await getJson<SearchAnswer>(`/admin/lists/search?${query.toString()}`);
    const from = answer.total === 0 ? 0 : answer.offset + 1;
    const to = answer.offset + answer.rules.length;
    const page = (offset: number): void => {
      search.offset = Math.max(0, offset);
      attempt(load);
    };
    fill(
      results,
      h(
        'p',
        { id: 'rules-range', 'aria-live': 'polite' },
        t('common.range', { from: formatCount(from), to: formatCount(to), total: formatCount(answer.total) }),
      ),
      answer.rules.length === 0
        ? h('p', {}, t('lists.empty'))
        : table(
            t('lists.title'),
            [
              t('lists.rule'),
              t('lists.list'),
              t('lists.label'),
              t('lists.note'),
              t('lists.expires'),
              t('common.actions'),
            ],
            answer.rules.map((rule) => [
              h('span', { class: 'number' }, rule.rule),
              t(`lists.${rule.list}`),
              rule.label ?? '',
              rule.note ?? '',
              rule.expiresAt === undefined ? '' : formatTime(rule.expiresAt),
              h(
                'span',
                { class: 'row-actions' },
                h(
                  'button',
                  { type: 'button', 'aria-label': t('lists.editRule', { rule: rule.rule }), onclick: () => edit(rule) },
                  t('lists.edit'),
                ),
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'danger',
                    'aria-label': t('lists.removeRule', { rule: rule.rule }),
                    onclick: () =>
                      attempt(async () => {
                        await change('DELETE', `/admin/lists/rules/${segment(rule.rule)}`);
                        notify(t('common.removed'));
                        await load();
                      }),
                  },
                  t('lists.remove'),
                ),
              ),
            ]),
            { id: 'rules-table' },
          ),
      h(
        'div',
        { class: 'pager' },
        h(
          'button',
          { type: 'button', disabled: answer.offset === 0, onclick: () => page(answer.offset - PAGE) },
          t('common.previous'),
        ),
        h(
          'button',
          { type: 'button', disabled: to >= answer.total, onclick: () => page(answer.offset + PAGE) },
          t('common.next'),
        ),
      ),
    );
  };

  const searchForm = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        search = { q: q.value.trim(), list: list.value, offset: 0 };
        attempt(load);
      },
    },
    field('rules-q', t('lists.search'), q),
    field('rules-list', t('lists.list'), list),
    h('button', { type: 'submit' }, t('lists.searchButton')),
  );

  const ruleForm = h(
    'form',
    {
      class: 'panel',
      id: 'rule-form',
      'aria-labelledby': 'rule-form-title',
      onsubmit: (event: Event) => {
        event.preventDefault();
        attempt(async () => {
          const expiresAt = fromLocalInput(expiresInput.value);
          await change('PUT', `/admin/lists/rules/${segment(ruleInput.value.trim())}`, {
            list: listInput.value,
            ...(labelInput.value.trim() === '' ? {} : { label: labelInput.value.trim() }),
            ...(noteInput.value.trim() === '' ? {} : { note: noteInput.value.trim() }),
            ...(expiresAt === undefined ? {} : { expiresAt }),
          });
          notify(t('common.saved'));
          ruleForm.reset();
          formTitle.textContent = t('lists.formAdd');
          await load();
        });
      },
    },
    formTitle,
    field('rule-rule', t('lists.rule'), ruleInput, t('lists.ruleHint')),
    field('rule-list', t('lists.list'), listInput),
    field('rule-label', t('lists.label'), labelInput),
    field('rule-note', t('lists.note'), noteInput),
    field('rule-expires', t('lists.expires'), expiresInput, t('lists.expiresHint')),
    h('button', { type: 'submit' }, t('lists.save')),
  );

  // Import and export.
  const file = h('input', { type: 'file', accept: '.csv,text/csv' });
  const download = h('p', { id: 'export-link' });
  const importForm = h(
    'form',
    {
      class: 'panel',
      'aria-labelledby': 'import-title',
      onsubmit: (event: Event) => {
        event.preventDefault();
        attempt(async () => {
          const chosen = file.files?.[0];
          if (chosen === undefined) return;
          const answer = await change<{ added: number; replaced: number }>(
            'POST',
            '/admin/lists/import',
            await chosen.text(),
            'text/csv',
          );
          notify(
            t('lists.imported', {
              added: formatCount(answer?.added ?? 0),
              replaced: formatCount(answer?.replaced ?? 0),
            }),
          );
          await load();
        });
      },
    },
    h('h3', { id: 'import-title' }, t('lists.importTitle')),
    field('import-file', t('lists.importFile'), file),
    h('button', { type: 'submit' }, t('lists.import')),
    h(
      'button',
      {
        type: 'button',
        onclick: () =>
          attempt(async () => {
            const csv = await getText('/admin/lists/export');
            const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
            fill(download, h('a', { href: url, download: 'lists.csv' }, t('lists.exportReady')));
          }),
      },
      t('lists.export'),
    ),
    download,
  );

  // Which rule decides.
  const number = h('input', { type: 'tel', autocomplete: 'off', maxlength: '32', required: true });
  const decided = h('div', { id: 'decide-result', 'aria-live': 'polite' });
  const decideForm = h(
    'form',
    {
      class: 'panel',
      'aria-labelledby': 'decide-title',
      onsubmit: (event: Event) => {
        event.preventDefault();
        attempt(async () => {
          const answer = await getJson<Decide>(`/admin/lists/decide/${segment(number.value.trim())}`);
          fill(
            decided,
            h(
              'p',
              {},
              answer.rule === null
                ? t('lists.decideNone', { number: answer.number })
                : t('lists.decideRule', {
                    rule: answer.rule.rule,
                    list: t(`lists.${answer.rule.list}`),
                    number: answer.number,
                  }),
            ),
            answer.why.length === 0 ? null : h('ul', {}, ...answer.why.map((reason) => h('li', {}, reason))),
          );
        });
      },
    },
    h('h3', { id: 'decide-title' }, t('lists.decideTitle')),
    field('decide-number', t('lists.decideNumber'), number),
    h('button', { type: 'submit' }, t('lists.decideButton')),
    decided,
  );

  fill(view, searchForm, results, h('div', { class: 'grid' }, ruleForm, decideForm, importForm));
  await load();
}
