/**
 * The dashboard's entry: asks who is signed in (`GET /api/session`), shows
 * the sign-in screen when no one is, else a router on the URL fragment:
 * `#/` the servers, `#/servers/{sub}/{tab}` and
 * `#/servers/{sub}/{tools|prompts|resources}/{name}` a server, `#/audit` the
 * audit log, `#/accounts` and `#/accounts/{id}` accounts, `#/tokens` the
 * signed-in account's API tokens, `#/sign-in?error=…` the sign-in screen
 * with a message (where single sign-on comes back on failure). Each view may
 * return a cleanup (timers of refreshing panels) that runs when the route changes.
 */
import { ApiError, storedToken } from './api.js';
import { h, replaceChildren } from './dom.js';
import { renderAccountEditor } from './account-editor.js';
import { renderAccountsPage } from './accounts-page.js';
import { renderAuditPage } from './audit-page.js';
import { renderHeader } from './header-bar.js';
import { roleLabel } from './permissions.js';
import { renderServerList } from './server-list.js';
import { renderServerPage, SERVER_TABS, TABS_WITH_ITEMS, type ServerTab } from './server-page.js';
import { currentPrincipal, endSession, loadSession, signOut } from './session.js';
import { renderSignIn } from './sign-in.js';
import { renderTokensPage } from './tokens-page.js';

/** What a view hands back: a cleanup to run when the route changes, if any. */
export type ViewCleanup = (() => void) | void;

let cleanup: ViewCleanup;
/** Counts navigations: a view that finishes loading after a newer one started is discarded. */
let navigation = 0;
/** Why the sign-in screen shows next (a session that ended), said once. */
let signInNotice: string | undefined;

/** Renders the view the URL fragment names. */
async function route(): Promise<void> {
  const main = document.getElementById('main')!;
  const current = ++navigation;
  if (typeof cleanup === 'function') cleanup();
  cleanup = undefined;
  const [path = '', queryText = ''] = location.hash.replace(/^#\/?/, '').split('?', 2);
  const parts = path
    .split('/')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part));
  const query = new URLSearchParams(queryText);
  try {
    const principal = currentPrincipal() ?? (await loadSession());
    if (current !== navigation) return;
    renderHeader(principal, () => void signOutClicked());
    if (!principal) {
      const notice = query.get('error') ?? signInNotice;
      signInNotice = undefined;
      await renderSignIn(main, {
        notice,
        returnTo: parts[0] === 'sign-in' ? '#/' : location.hash || '#/',
        onSignedIn: () => {
          if (parts[0] === 'sign-in') location.hash = '#/';
          else void route();
        },
      });
      return;
    }
    if (parts[0] === 'sign-in') {
      location.hash = '#/';
      return;
    }
    const rendered = await renderView(main, parts, query);
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
      signInNotice = storedToken()
        ? 'The admin token is no longer accepted. Sign in again.'
        : 'Your session has ended. Sign in again.';
      endSession();
      void route();
      return;
    }
    renderFailure(main, error);
  }
}

/** The view of a signed-in route. */
function renderView(
  main: HTMLElement,
  parts: string[],
  query: URLSearchParams,
): Promise<ViewCleanup> | ViewCleanup {
  switch (parts[0]) {
    case 'servers':
      if (!parts[1]) break;
      {
        const tab = SERVER_TABS.includes(parts[2] as ServerTab)
          ? (parts[2] as ServerTab)
          : 'settings';
        return renderServerPage(
          main,
          parts[1],
          tab,
          TABS_WITH_ITEMS.includes(tab) ? parts[3] : undefined,
        );
      }
    case 'accounts':
      return parts[1] ? renderAccountEditor(main, parts[1]) : renderAccountsPage(main);
    case 'audit':
      return renderAuditPage(main, query);
    case 'tokens':
      return renderTokensPage(main);
  }
  return renderServerList(main);
}

/** A view that could not load: a refusal of the principal's role is said as such. */
function renderFailure(main: HTMLElement, error: unknown): void {
  const forbidden = error instanceof ApiError && error.status === 403;
  const role = currentPrincipal()?.role;
  replaceChildren(
    main,
    h('h1', { tabindex: -1 }, forbidden ? 'Not allowed' : 'Something went wrong'),
    h('p', { role: 'alert', class: 'error' }, (error as Error).message),
    forbidden && role
      ? h('p', {}, `You are signed in with the role ${roleLabel(role)}, which may not open this.`)
      : null,
    h('p', {}, h('a', { href: '#/' }, 'Back to the servers')),
  );
  focusHeading(main);
}

/**
 * Signs out (a failure to reach the control plane still forgets this tab's
 * credential) and goes back to the start: whoever signs in next begins at
 * the servers, not on the page the last person left open.
 */
async function signOutClicked(): Promise<void> {
  try {
    await signOut();
  } catch {
    // Unreachable control plane: this tab forgets the credential all the same.
    endSession();
  }
  if (location.hash !== '' && location.hash !== '#/') location.hash = '#/';
  else void route();
}

/** Moves focus to the new view's heading so keyboard and screen-reader users start there. */
function focusHeading(main: HTMLElement): void {
  const heading = main.querySelector<HTMLElement>('h1');
  if (heading && !main.contains(document.activeElement)) heading.focus();
}

window.addEventListener('hashchange', () => void route());
void route();
