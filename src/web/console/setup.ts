// The setup check (GET /admin/setup): the settings in force (secrets masked by the server), the
// numbering data's date, Redis, the version; and what the service answers now for a number.
import { getJson, type Setup } from './api.js';
import { checkPanel } from './check.js';
import { field, fill, h, table } from './dom.js';
import { t } from './i18n.js';
import { attempt } from './notice.js';

export async function renderSetup(view: HTMLElement): Promise<void> {
  const number = h('input', { type: 'tel', autocomplete: 'off', maxlength: '32', required: true });
  const checked = h('div', { id: 'setup-check' });
  const form = h(
    'form',
    {
      class: 'panel',
      'aria-labelledby': 'setup-check-title',
      onsubmit: (event: Event) => {
        event.preventDefault();
        attempt(async () => {
          const panel = await checkPanel(number.value.trim(), 'setup-check-answer');
          fill(checked, panel);
          panel.focus();
        });
      },
    },
    h('h3', { id: 'setup-check-title' }, t('setup.checkTitle')),
    field('setup-number', t('common.number'), number),
    h('button', { type: 'submit' }, t('setup.checkButton')),
    checked,
  );
  fill(view, form);
  const setup = await getJson<Setup>('/admin/setup');
  const numbering = Object.entries(setup.numberingData)
    .map(([name, value]) => `${name}: ${String(value)}`)
    .join(', ');
  fill(
    view,
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'setup-facts-title' },
      h('h3', { id: 'setup-facts-title' }, t('setup.title')),
      h(
        'dl',
        { class: 'figures' },
        h('dt', {}, t('setup.version')),
        h('dd', { id: 'setup-version' }, setup.version),
        h('dt', {}, t('setup.redis')),
        h('dd', { id: 'setup-redis' }, t(`setup.redis.${setup.redis}`)),
        h('dt', {}, t('setup.numbering')),
        h('dd', { id: 'setup-numbering' }, numbering),
      ),
    ),
    form,
    table(
      t('setup.settings'),
      [t('setup.setting'), t('setup.value')],
      Object.entries(setup.settings).map(([name, value]) => [h('code', {}, name), value === null ? '' : String(value)]),
      { id: 'settings-table' },
    ),
  );
}
