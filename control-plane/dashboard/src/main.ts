/**
 * The dashboard's entry: sign-in with the admin token, then a router on the
 * URL fragment (`#/`, `#/servers/{sub}/{tab}`, `#/servers/{sub}/{tools|prompts|resources}/{name}`).
 * Each view may return a cleanup (timers of refreshing panels) that runs
 * when the route changes.
 */
import { ApiError, api, forgetToken, storeToken, storedToken } from './api.js';
import { h, replaceChildren } from './dom.js';
import { renderServerList } from './server-list.js';
import { renderServerPage, TABS_WITH_ITEMS, type ServerTab } from './server-page.js';

/** What a view hands back: a cleanup to run when the route changes, if any. */
export type ViewCleanup = (() => void) | void;

const TABS: ServerTab[] = ['settings', 'tools', 'prompts', 'resources', 'secrets', 'activity'];
let cleanup: ViewCleanup;
/** Counts navigations: a view that finishes loading after a newer one started is discarded. */
let navigation = 0;

/** Renders the view the URL fragment names. */
async function route(): Promise<void> {
  const main = document.getElementById('main')!;
  const current = ++navigation;
  if (typeof cleanup === 'function') cleanup();
  cleanup = undefined;
  renderAccount();
  if (!storedToken()) {
    renderSignIn(main);
    return;
  }
  try {
    const parts = location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((part) => part !== '')
      .map((part) => decodeURIComponent(part));
    let rendered: ViewCleanup;
    if (parts[0] === 'servers' && parts[1]) {
      const tab = TABS.includes(parts[2] as ServerTab) ? (parts[2] as ServerTab) : 'settings';
      rendered = await renderServerPage(
        main,
        parts[1],
        tab,
        TABS_WITH_ITEMS.includes(tab) ? parts[3] : undefined,
      );
    } else {
      rendered = await renderServerList(main);
    }
    if (current !== navigation) {
      // Superseded while loading: stop its timers; the newer view owns the page.
      if (typeof rendered === 'function') rendered();
      return;
    }
    cleanup = rendered;
    focusHeading(main);
  } catch (error) {
    if (current !== navigation) return;
    if (error instanceof ApiError && error.status === 401) {
      forgetToken();
      renderSignIn(main, 'The admin token is no longer accepted. Sign in again.');
      return;
    }
    replaceChildren(
      main,
      h('h1', { tabindex: -1 }, 'Something went wrong'),
      h('p', { role: 'alert', class: 'error' }, (error as Error).message),
      h('p', {}, h('a', { href: '#/' }, 'Back to the servers')),
    );
  }
}

/** The sign-in form; a wrong token is said plainly and the field keeps focus. */
function renderSignIn(main: HTMLElement, notice?: string): void {
  const input = h('input', {
    id: 'admin-token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    'aria-describedby': 'token-help',
  });
  const message = h('p', { role: 'alert', class: 'error', id: 'sign-in-error' }, notice ?? '');
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (event) => {
        event.preventDefault();
        const token = input.value.trim();
        message.textContent = '';
        try {
          await api('GET', '/api/servers', undefined, token);
        } catch (error) {
          message.textContent =
            error instanceof ApiError && error.status === 401
              ? 'That admin token is not correct. Check it and try again.'
              : (error as Error).message;
          input.setAttribute('aria-invalid', 'true');
          input.focus();
          return;
        }
        storeToken(token);
        if (location.hash === '' || location.hash === '#/') void route();
        else location.hash = '#/';
      },
    },
    h('h1', { tabindex: -1 }, 'Sign in'),
    h('label', { for: 'admin-token' }, 'Admin token'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'hint' },
      'Printed once by the control plane at its first start, or the ADMIN_TOKEN you set. It stays in this tab only.',
    ),
    message,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  replaceChildren(main, form);
  input.focus();
}

/** The sign-out button in the header, when signed in. */
function renderAccount(): void {
  const account = document.getElementById('account')!;
  replaceChildren(
    account,
    storedToken()
      ? h(
          'button',
          {
            type: 'button',
            onclick: () => {
              forgetToken();
              void route();
            },
          },
          'Sign out',
        )
      : null,
  );
}

/** Moves focus to the new view's heading so keyboard and screen-reader users start there. */
function focusHeading(main: HTMLElement): void {
  const heading = main.querySelector<HTMLElement>('h1');
  if (heading && !main.contains(document.activeElement)) heading.focus();
}

window.addEventListener('hashchange', () => void route());
void route();
