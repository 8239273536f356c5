// What `/verdict` and `/cid` answer now for a number, and why (GET /admin/check/:number): the
// "look up" of the recent calls and the setup view's check.
import { getJson, segment, type Check } from './api.js';
import { h } from './dom.js';
import { t } from './i18n.js';

export async function checkPanel(number: string, id: string): Promise<HTMLElement> {
  const check = await getJson<Check>(`/admin/check/${segment(number)}`);
  return h(
    'section',
    { class: 'panel check', id, 'aria-labelledby': `${id}-title`, tabindex: '-1' },
    h('h3', { id: `${id}-title` }, t('check.title', { number: check.number })),
    h(
      'dl',
      { class: 'figures' },
      h('dt', {}, t('common.verdict')),
      h('dd', { class: 'check-verdict' }, t(`verdict.${check.verdict}`)),
      h('dt', {}, t('common.decidedBy')),
      h('dd', { class: 'check-decided' }, t(`decided.${check.decidedBy}`)),
      h('dt', {}, t('check.cidFr')),
      h('dd', { lang: 'fr' }, check.cid.fr),
      h('dt', {}, t('check.cidEn')),
      h('dd', { lang: 'en' }, check.cid.en),
      h('dt', {}, t('check.rule')),
      h('dd', {}, check.rule === null ? t('common.none') : `${check.rule.rule} (${t(`lists.${check.rule.list}`)})`),
    ),
    check.reasons.length === 0
      ? null
      : h(
          'div',
          {},
          h('h4', {}, t('check.reasons')),
          h('ul', {}, ...check.reasons.map((reason) => h('li', {}, reason))),
        ),
  );
}
