// The operator's console at /admin/ (docs/console.md). The server sends an empty shell in the
// language it chose (as the lookup page chooses: ?lang=, the `lang` cookie, Accept-Language);
// this script signs in with the admin token, keeps it in memory for the tab (api.ts) and renders
// each view from the admin API. Views are addressed by the URL's fragment (#/calls), so moving
// between them never reloads the page, which would forget the token.
import { ApiFailure, forgetToken, signIn, signedIn, whenExpired } from './api.js';
import { renderCalls } from './calls.js';
import { renderDashboard } from './dashboard.js';
import { field, fill, h } from './dom.js';
import { currentLanguage, setLanguage, t } from './i18n.js';
import { renderLists } from './lists.js';
import { describeFailure, notify, noticeRegion } from './notice.js';
import { renderReports } from './reports.js';
import { renderSetup } from './setup.js';
import { renderTokens } from './tokens.js';
import type { ConsoleLanguage, ConsoleWordKey } from '../../domain/wording/console-words.js';

const VIEWS = {
  dashboard: { title: 'nav.dashboard', render: renderDashboard },
  calls: { title: 'nav.calls', render: renderCalls },
  lists: { title: 'nav.lists', render: renderLists },
  reports: { title: 'nav.reports', render: renderReports },
  tokens: { title: 'nav.tokens', render: renderTokens },
  setup: { title: 'nav.setup', render: renderSetup },
} as const satisfies Record<string, { title: ConsoleWordKey; render: (view: HTMLElement) => Promise<void> }>;
type ViewName = keyof typeof VIEWS;

const LANGUAGE_COOKIE = 'lang';
const ONE_YEAR_S = 365 * 24 * 3600;
const root = document.getElementById('console') ?? document.body;

function viewOfLocation(): ViewName {
  const name = location.hash.replace(/^#\/?/, '');
  return name in VIEWS ? (name as ViewName) : 'dashboard';
}

/** The FR/EN switch: links that work without script (?lang=), and with it a switch in place that keeps the token. */
function languageSwitch(): HTMLElement {
  const link = (language: ConsoleLanguage, text: string, name: ConsoleWordKey): HTMLElement =>
    h(
      'a',
      {
        href: `/admin/?lang=${language}${location.hash}`,
        hreflang: language,
        lang: language,
        title: t(name),
        'aria-current': currentLanguage() === language ? 'true' : undefined,
        onclick: (event: Event) => {
          event.preventDefault();
          document.cookie = `${LANGUAGE_COOKIE}=${language}; path=/; max-age=${ONE_YEAR_S}; SameSite=Lax`;
          const url = new URL(location.href);
          const remembered = `;${document.cookie.replace(/\s/g, '')};`.includes(`;${LANGUAGE_COOKIE}=${language};`);
          if (remembered) url.searchParams.delete('lang');
          else url.searchParams.set('lang', language);
          history.replaceState(null, '', url.toString());
          setLanguage(language);
          render();
        },
      },
      text,
    );
  return h(
    'nav',
    { class: 'language-switch', 'aria-label': t('switch.label') },
    link('fr', 'FR', 'switch.frName'),
    link('en', 'EN', 'switch.enName'),
  );
}

function header(): HTMLElement {
  return h(
    'header',
    { class: 'site-header' },
    h('h1', {}, t('page.title')),
    languageSwitch(),
    signedIn()
      ? h(
          'button',
          {
            type: 'button',
            id: 'sign-out',
            onclick: () => {
              forgetToken();
              render();
              notify(t('signout.done'));
            },
          },
          t('signout.button'),
        )
      : null,
  );
}

function skipLink(): HTMLElement {
  return h(
    'a',
    {
      class: 'skip',
      href: '#main',
      onclick: (event: Event) => {
        event.preventDefault();
        document.getElementById('main')?.focus();
      },
    },
    t('skip.main'),
  );
}

function signInView(main: HTMLElement): void {
  const input = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', required: true });
  const error = h('p', { id: 'sign-in-error', class: 'error', role: 'alert' });
  const form = h(
    'form',
    {
      id: 'sign-in',
      class: 'panel sign-in',
      'aria-labelledby': 'sign-in-title',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const candidate = input.value.trim();
        if (candidate === '') {
          error.textContent = t('signin.missing');
          return;
        }
        signIn(candidate)
          .then(() => {
            input.value = '';
            render();
          })
          .catch((failure: unknown) => {
            error.textContent =
              failure instanceof ApiFailure && failure.status === 401
                ? t('signin.wrong')
                : failure instanceof ApiFailure && failure.status === 429
                  ? t('signin.tooMany', { seconds: failure.retryAfterSeconds ?? 60 })
                  : describeFailure(failure);
            input.focus();
          });
      },
    },
    h('h2', { id: 'sign-in-title' }, t('signin.title')),
    h('p', {}, t('signin.text')),
    field('token', t('signin.token'), input),
    h('button', { type: 'submit' }, t('signin.button')),
    error,
  );
  fill(main, form);
  input.focus();
}

let rendering = 0;

/** The whole page for the current state: signed out, the sign-in form; signed in, the views' menu and the current view. */
function render(focusView = false): void {
  const notice = h('p', { id: 'notice', class: 'notice', role: 'status', 'aria-live': 'polite' });
  noticeRegion(notice);
  const main = h('main', { id: 'main', tabindex: '-1' });
  if (!signedIn()) {
    const content = h('div', {});
    fill(main, notice, content);
    fill(root, skipLink(), header(), main);
    signInView(content);
    return;
  }
  const current = viewOfLocation();
  const menu = h(
    'nav',
    { class: 'views', 'aria-label': t('nav.label') },
    h(
      'ul',
      {},
      ...Object.entries(VIEWS).map(([name, view]) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: `#/${name}`, id: `nav-${name}`, 'aria-current': name === current ? 'page' : undefined },
            t(view.title),
          ),
        ),
      ),
    ),
  );
  const title = h('h2', { id: 'view-title', tabindex: '-1' }, t(VIEWS[current].title));
  const body = h('div', { id: `view-${current}`, class: 'view', 'aria-busy': 'true' }, h('p', {}, t('common.loading')));
  const refresh = h('button', { type: 'button', id: 'refresh', onclick: () => load() }, t('common.refresh'));
  fill(main, h('div', { class: 'view-head' }, title, refresh), notice, body);
  fill(root, skipLink(), header(), menu, main);
  document.title = `${t(VIEWS[current].title)} – ${t('page.title')}`;
  if (focusView) title.focus();
  const turn = ++rendering;
  const load = (): void => {
    body.setAttribute('aria-busy', 'true');
    VIEWS[current]
      .render(body)
      .catch((error: unknown) => {
        if (turn === rendering) fill(body, h('p', { class: 'error' }, describeFailure(error)));
      })
      .finally(() => body.setAttribute('aria-busy', 'false'));
  };
  load();
}

whenExpired(() => {
  render();
  const error = document.getElementById('sign-in-error');
  if (error !== null) error.textContent = t('common.expired');
});
window.addEventListener('hashchange', () => {
  if (location.hash === '#main') return;
  if (signedIn()) render(true);
});
setLanguage(currentLanguage());
render();
