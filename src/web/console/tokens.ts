// The reporters' tokens (/admin/tokens): create one (its secret, SpamBlocker's configs and their
// QR code shown once, then forgotten by the page too), list them with their last use, revoke one.
import { change, getJson, type CreatedToken, type Token } from './api.js';
import { field, fill, h, table } from './dom.js';
import { formatTime, t } from './i18n.js';
import { attempt, notify } from './notice.js';

const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

function shownOnce(created: CreatedToken, close: () => void): HTMLElement {
  return h(
    'section',
    { class: 'panel once', id: 'token-once', 'aria-labelledby': 'token-once-title', tabindex: '-1' },
    h('h3', { id: 'token-once-title' }, `${created.label}: ${t('tokens.once')}`),
    h('p', {}, h('strong', {}, `${t('tokens.secret')} `), h('code', { id: 'token-secret' }, created.token)),
    created.configs === undefined
      ? null
      : h(
          'div',
          {},
          h('h4', {}, t('tokens.queryConfig')),
          h('pre', { id: 'token-query-config', tabindex: '0' }, pretty(created.configs.query)),
          h('h4', {}, t('tokens.reportConfig')),
          h('pre', { id: 'token-report-config', tabindex: '0' }, pretty(created.configs.report)),
        ),
    // The server's SVG as an image: never parsed into the page, so it can carry no script.
    created.qrSvg === undefined
      ? null
      : h('img', {
          id: 'token-qr',
          class: 'qr',
          width: '240',
          height: '240',
          alt: t('tokens.qrAlt'),
          src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(created.qrSvg)}`,
        }),
    h('button', { type: 'button', id: 'token-hide', onclick: close }, t('tokens.hide')),
  );
}

export async function renderTokens(view: HTMLElement): Promise<void> {
  const once = h('div', { id: 'token-created' });
  const results = h('div', { id: 'tokens-results' });
  const label = h('input', { type: 'text', autocomplete: 'off', maxlength: '100', required: true });
  const expires = h('input', { type: 'date' });
  const load = async (): Promise<void> => {
    const tokens = await getJson<Token[]>('/admin/tokens');
    fill(
      results,
      tokens.length === 0
        ? h('p', {}, t('tokens.empty'))
        : table(
            t('tokens.title'),
            [
              t('tokens.id'),
              t('dash.label'),
              t('tokens.created'),
              t('tokens.lastUsed'),
              t('tokens.state'),
              t('common.actions'),
            ],
            tokens.map((token) => [
              h('code', {}, token.id),
              token.label,
              formatTime(token.createdAt),
              formatTime(token.lastUsedAt),
              token.revokedAt === undefined
                ? t('tokens.active')
                : t('tokens.revoked', { at: formatTime(token.revokedAt) }),
              token.revokedAt === undefined
                ? h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      'aria-label': t('tokens.revokeToken', { label: token.label }),
                      onclick: () =>
                        attempt(async () => {
                          await change('DELETE', `/admin/tokens/${encodeURIComponent(token.id)}`);
                          notify(t('tokens.revokedDone', { label: token.label }));
                          await load();
                        }),
                    },
                    t('tokens.revoke'),
                  )
                : '',
            ]),
            { id: 'tokens-table' },
          ),
    );
  };
  const form = h(
    'form',
    {
      class: 'panel',
      'aria-labelledby': 'token-create-title',
      onsubmit: (event: Event) => {
        event.preventDefault();
        attempt(async () => {
          const created = await change<CreatedToken>('POST', '/admin/tokens', {
            label: label.value.trim(),
            ...(expires.value === '' ? {} : { expiresAt: expires.value }),
          });
          if (created === undefined) return;
          form.reset();
          const panel = shownOnce(created, () => {
            once.replaceChildren();
            label.focus();
          });
          fill(once, panel);
          panel.focus();
          await load();
        });
      },
    },
    h('h3', { id: 'token-create-title' }, t('tokens.createTitle')),
    field('token-label', t('tokens.label'), label),
    field('token-expires', t('tokens.expires'), expires),
    h('button', { type: 'submit' }, t('tokens.create')),
  );
  fill(view, form, once, results);
  await load();
}
